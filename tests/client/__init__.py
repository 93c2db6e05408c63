"""Tests of the client library, the bots, the command line and the terminal UI."""
