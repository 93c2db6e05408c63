"""Tests of the Spiders of other decks (alt-decks.md), each game's rules and a reference."""
