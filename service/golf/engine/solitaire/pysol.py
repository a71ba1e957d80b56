"""PySolFC's deal numbering for Golf, so ``pysolDealNumber`` N gives exactly PySolFC's Golf deal N.

PySolFC shuffles with Microsoft's linear congruential generator for deals up to 32000 (after reordering the
deck rank-major) and with Python's Mersenne Twister above that; Golf then deals 7 columns of 5 cyclically, the
first remaining card starts the pile, and the rest is the stock in the order it is turned.
"""

from __future__ import annotations

import random

from golf.engine.cards import Card

MAX_DEAL_NUMBER = 10**20
_MS_LIMIT = 32000


class _MsRandom:
    """Microsoft's C runtime ``rand`` as PySolFC uses it (seeds 1 to 2**33 - 1)."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.seedx = seed if seed < 0x100000000 else seed - 0x100000000

    def _step(self, mask: int) -> int:
        self.seedx = (self.seedx * 214013 + 2531011) & ((1 << 33) - 1)
        return (self.seedx >> 16) & mask

    def randint(self, a: int, b: int) -> int:
        if self.seed < 0x100000000:
            r = self._step(0x7FFF)
            if self.seed >= 0x80000000:
                r |= 0x8000
        else:
            r = self._step(0xFFFF) + 1
        return a + r % (b + 1 - a)


class _MtRandom:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def randint(self, a: int, b: int) -> int:
        return a + int(self._rng.random() * (b + 1 - a))


def _pysol_deck() -> list[Card]:
    # PySolFC's card ids run suit-major in the suit order clubs, spades, hearts, diamonds.
    pysol_suits = (0, 3, 2, 1)
    return [Card(rank, pysol_suits[s]) for s in range(4) for rank in range(1, 14)]


def pysol_golf_deal(number: int) -> tuple[list[list[Card]], Card, list[Card]]:
    """Columns (back to front), the card that starts the pile, and the stock in turning order."""
    if not 1 <= number <= MAX_DEAL_NUMBER:
        raise ValueError(f"PySolFC deal numbers run from 1 to {MAX_DEAL_NUMBER}")
    cards = _pysol_deck()
    rng: _MsRandom | _MtRandom
    if number <= _MS_LIMIT:
        cards = [cards[i + j] for i in range(13) for j in (0, 39, 26, 13)]
        rng = _MsRandom(number)
    else:
        rng = _MtRandom(number)
    for n in range(len(cards) - 1, 0, -1):
        j = rng.randint(0, n)
        cards[n], cards[j] = cards[j], cards[n]
    cards.reverse()
    columns: list[list[Card]] = [[] for _ in range(7)]
    for i in range(35):
        columns[i % 7].append(cards[i])
    rest = cards[35:]
    return columns, rest[0], rest[1:]
