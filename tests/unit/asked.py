"""A solver ``stop`` function for tests, counting how often the search asked."""

from __future__ import annotations


class Asked:
    """A ``stop`` function that says yes from its ``yes_from``-th call on, counting its calls."""

    def __init__(self, yes_from: int | None = None) -> None:
        self.calls = 0
        self.yes_from = yes_from

    def __call__(self) -> bool:
        self.calls += 1
        return self.yes_from is not None and self.calls >= self.yes_from
