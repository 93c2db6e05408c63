"""Tests of the server against real redis-server processes and real websockets."""
