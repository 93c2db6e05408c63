"""A race's events from its commit to every connection that watches it, on every node.

- :mod:`.changes`: :class:`Changes`, the one way a race changes: decided, committed with a
  check-and-set, and its events handed to the hub;
- :mod:`.hub`: the node's watches, fed by its own commits, the races' channels and the
  sweep, in version order;
- :mod:`.watches`: a race's watch and each connection's subscription to it;
- :mod:`.shards`: on a Redis Cluster, the races' channels on their own shards.
"""
