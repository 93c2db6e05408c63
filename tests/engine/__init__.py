"""Tests of the rules engine (spider_engine): vectors, properties, reference diffs, solver."""
