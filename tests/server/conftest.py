"""Fixtures of the server tests (beside the suite's own in ``tests/conftest.py``).

- ``hub``: a :class:`spider_server.fanout.hub.Hub` of node ``t`` on a real Redis, with no node
  around it (its ``on_event`` does nothing).
"""

from __future__ import annotations

import pytest


@pytest.fixture
async def hub(redis_server):
    from spider_server.fanout.hub import Hub
    from spider_server.settings import Settings
    from spider_server.store import Store
    from spider_server.store.redisconn import connect

    redis = connect(redis_server.url)
    hub = Hub(redis, Store.connect(redis, Settings()), node="t", on_event=lambda w, e: None)
    yield hub
    await hub.close()
    await redis.aclose()
