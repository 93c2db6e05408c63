"""spider_server: the race server, with Redis as the source of truth.

Run a node with ``spider-race serve`` (or ``python -m spider_server``); :class:`~.node.Node`
is the server in-process. The race rules without I/O are in :mod:`.race`.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
