"""How hard a winnable deal is, measured by the exact solver.

The measure (``difficulty_score``) is the number of positions the solver searches before it finds a winning
line from the deal's start (``solve(..., fewest_cards=False).positions``). Deals with many ways to win are found
at once; deals that need one precise line take a long search. Winnable deals are ``easy`` below
``EASY_BELOW`` positions, ``hard`` from ``HARD_FROM``, else ``medium``. On PySolFC deals 1 to 600 the thresholds
split the winnable ``standard`` deals into thirds (tertiles 1,305 and 10,879 positions; ``queens-on-kings``
1,991 and 16,393; ``wrap`` 762 and 7,837, so more wrap deals are easy). The measure belongs to the solver's
search order: a deal keeps the difficulty it was given when it was dealt; recalibrate when the solver changes.
"""

from __future__ import annotations

from enum import Enum

EASY_BELOW = 1_300
HARD_FROM = 11_000


class Difficulty(Enum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


def classify(positions: int) -> Difficulty:
    """The difficulty of a winnable deal whose first winning line took ``positions`` positions to find."""
    if positions < EASY_BELOW:
        return Difficulty.EASY
    if positions >= HARD_FROM:
        return Difficulty.HARD
    return Difficulty.MEDIUM
