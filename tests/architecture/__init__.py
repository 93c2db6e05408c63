"""Tests of the code's shape: no import circle, dependencies in DESIGN.md's direction, no
hand-written module over about 500 lines."""
