"""Use cases around the engine: deals, games, moves; transactions, versions and idempotency."""
