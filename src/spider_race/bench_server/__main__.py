"""``python -m spider_race.bench_server``: the bench's worker processes (:func:`.modes.main`)."""

from __future__ import annotations

import sys

from .modes import main

__all__: list[str] = []

sys.exit(main())
