"""The bot interface and the factory of every level and personality (see ``catalogue``)."""

from __future__ import annotations

import random
from typing import Protocol

from golf.engine.cardgolf.bots.catalogue import BOT_NAMES, parse_bot_name
from golf.engine.cardgolf.bots.policy import Tuning
from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.view import SeatView

__all__ = ["BOT_NAMES", "PERSONALITY_TUNING", "Bot", "NoisyBot", "make_bot"]


class Bot(Protocol):
    """A computer player: given its seat's view (with legal moves), it picks one of the legal moves."""

    name: str

    def choose(self, view: SeatView) -> Move:
        """The move to make; ``view.legal_moves`` is not empty."""
        ...


PERSONALITY_TUNING: dict[str, Tuning] = {
    # Any card that pairs counts 3 points better than its plain value; a card beside a known one is turned up first.
    "pair-hunter": Tuning(take=1.0, pair_bonus=3.0, flip_by_partner=True),
    # Goes out up to 4 points behind the best estimate, knocks on any lead, and a face-down place is 1.5 better to
    # fill (it turns a card up); flips a card as its whole turn where the rules allow it.
    "racer": Tuning(
        keep=0.0, out_margin=-4.0, knock_margin=0.0, knock_cap_per_card=2.0, down_bonus=1.5, flip_as_turn=True
    ),
    # Needs 2.5 points to take the discard and 1 to keep a draw, a 3-point lead to go out, 5 to knock, and would
    # rather replace a known card than a face-down one.
    "cautious": Tuning(take=2.5, keep=1.0, out_margin=3.0, knock_margin=5.0, down_bonus=-1.0),
    # Keeps a drawn card even half a point worse, loves face-down places (2 points), knocks on a 1-point lead.
    "gambler": Tuning(take=0.5, keep=-0.5, down_bonus=2.0, knock_margin=1.0, knock_cap_per_card=2.0),
}
"""The thresholds of each personality (``policy.Tuning``); a bot without one uses the plain ``Tuning()``."""

BEGINNER_HUNCHES = 1 / 3
"""The share of a beginner's decisions made on a hunch (a random legal move)."""


class NoisyBot:
    """The ``beginner`` level: greedy without looking at the other grids before going out, and a hunch (a random
    legal move, of a random kind) on a share ``hunches`` of its decisions."""

    def __init__(
        self, seed: int = 0, tuning: Tuning | None = None, name: str = "beginner", hunches: float = BEGINNER_HUNCHES
    ) -> None:
        from golf.engine.cardgolf.bots.random_bot import RandomBot

        self.rng = random.Random(seed)
        self.random = RandomBot(seed + 1)
        self.tuning = tuning
        self.name = name
        self.hunches = hunches

    def choose(self, view: SeatView) -> Move:
        """A hunch or the greedy move."""
        from golf.engine.cardgolf.bots.greedy import greedy_move
        from golf.engine.cardgolf.bots.perception import policy_for
        from golf.engine.cardgolf.state import Phase

        if view.phase is not Phase.SETUP and self.rng.random() < self.hunches:
            return self.random.choose(view)
        return greedy_move(view, policy_for(view.rules, self.tuning), look_at_opponents=False)


def make_bot(name: str, seed: int = 0) -> Bot:
    """A bot called ``name`` (a level, ``random`` .. ``strong``, or an alias such as ``expert``, optionally with a
    personality: ``advanced+gambler``), its randomness seeded by ``seed``. ``ValueError`` for an unknown name."""
    spec = parse_bot_name(name)
    level = spec.level.name
    tuning = PERSONALITY_TUNING[spec.personality.name] if spec.personality is not None else None
    canonical = spec.name
    if level == "random":
        from golf.engine.cardgolf.bots.random_bot import RandomBot

        return RandomBot(seed)
    if level == "beginner":
        return NoisyBot(seed, tuning, canonical)
    if level == "greedy":
        from golf.engine.cardgolf.bots.greedy import GreedyBot

        return GreedyBot(seed, tuning, canonical)
    from golf.engine.cardgolf.bots.strong import StrongBot

    if level == "advanced":
        return StrongBot(seed, rollouts=40, max_candidates=3, step_budget=1500, tuning=tuning, name=canonical)
    return StrongBot(seed, tuning=tuning, name=canonical)
