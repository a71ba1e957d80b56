"""The ``random`` level: a uniformly random kind of legal move, then uniformly random targets."""

from __future__ import annotations

import random

from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.view import SeatView


class RandomBot:
    """Chooses a kind of move (draw from stock, swap, use a power, ...) at random, then one of its instances, so
    a power with a hundred targets is not a hundred times likelier than discarding."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: SeatView) -> Move:
        """A random legal move."""
        by_kind: dict[type, list[Move]] = {}
        for move in view.legal_moves:
            by_kind.setdefault(type(move), []).append(move)
        kinds = sorted(by_kind, key=lambda k: k.__name__)
        return self.rng.choice(by_kind[self.rng.choice(kinds)])
