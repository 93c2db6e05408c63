"""``python -m spider_server``: run a node (the same as ``spider-race serve``)."""

from __future__ import annotations

import sys

from .main import main

sys.exit(main())
