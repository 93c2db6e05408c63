"""The fault tests use the helpers of the server's and the client's tests."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for folder in (HERE.parent / "server", HERE.parent / "client", HERE):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
