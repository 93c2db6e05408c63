"""The test suite: a package, so that its helpers import by name (``tests.leakscan``,
``tests.server.server_helpers``, ``tests.client.client_helpers``, …)."""
