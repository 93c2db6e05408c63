"""``python -m spider_race``: the ``spider-race`` command."""

from __future__ import annotations

import sys

from .cli import main

__all__: list[str] = []

if __name__ == "__main__":
    sys.exit(main())
