"""Tests of the browser page, driven in Chromium, and of its rules module."""
