"""``python -m spider_race.bench_archive node …``: a round's node (:mod:`.node`)."""

from __future__ import annotations

import sys

from .node import main

__all__: list[str] = []

sys.exit(main(sys.argv[1:]))
