"""Playing live tables in the integration tests: which move to make."""

from __future__ import annotations

import random

from golf.engine.cardgolf import Knock, Move


def choose(legal: tuple[Move, ...], rng: random.Random) -> Move:
    plain = [m for m in legal if not isinstance(m, Knock)]
    return rng.choice(plain if plain and rng.random() < 0.9 else list(legal))
