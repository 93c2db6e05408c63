"""Tests of the code's shape: no import circle, dependencies in the direction of the
README's layout, no hand-written module over 500 lines."""
