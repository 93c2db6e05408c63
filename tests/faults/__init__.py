"""Fault tests: nodes and Redis killed, links cut, slow readers, a cluster, a deployment."""
