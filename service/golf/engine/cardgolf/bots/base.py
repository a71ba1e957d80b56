"""The bot interface and the factory of the three levels."""

from __future__ import annotations

from typing import Protocol

from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.view import SeatView

BOT_NAMES = ("random", "greedy", "strong")


class Bot(Protocol):
    """A computer player: given its seat's view (with legal moves), it picks one of the legal moves."""

    name: str

    def choose(self, view: SeatView) -> Move:
        """The move to make; ``view.legal_moves`` is not empty."""
        ...


def make_bot(name: str, seed: int = 0) -> Bot:
    """A bot of level ``name`` (``random``, ``greedy``, ``strong``), its randomness seeded by ``seed``."""
    if name == "random":
        from golf.engine.cardgolf.bots.random_bot import RandomBot

        return RandomBot(seed)
    if name == "greedy":
        from golf.engine.cardgolf.bots.greedy import GreedyBot

        return GreedyBot(seed)
    if name == "strong":
        from golf.engine.cardgolf.bots.strong import StrongBot

        return StrongBot(seed)
    raise ValueError(f"unknown bot {name!r}; known: {', '.join(BOT_NAMES)}")
