"""Scoring a grid: card values, matched lines and pairs, blocks of four, four alike; with a breakdown that says
which cards matched and which rule scored what.

One algorithm serves the engine (with the breakdown) and the bots (``Scorer.total`` on rank keys, where an
unknown card has a key that never matches and its expected value)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from golf.engine.cardgolf.cards import JOKER_RANK, ONE_EYED_JACKS, GCard
from golf.engine.cardgolf.grid import Line, geometry
from golf.engine.cardgolf.options import FourAlikeScope
from golf.engine.cardgolf.rules import GolfRules

WILD = -1
"""Key of a wild card: it matches any key."""
(WILD_RANK,) = {card.rank for card in ONE_EYED_JACKS}
"""The rank of every wild card (the one-eyed jacks, jacks): what a wild card is when four alike are counted."""
UNKNOWN = 100
"""Keys from here up are cards a player cannot see: they never match."""


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One entry of a breakdown: ``rule`` scored ``points`` on the cards at ``positions``."""

    rule: str
    """``card``, ``column``, ``row``, ``diagonal``, ``adjacent-pair``, ``block-of-four``, ``four-alike``, or at
    the hole level ``four-alike-opponent``, ``knocker-penalty``, ``knocker-bonus``, ``peek-stroke``."""
    positions: tuple[int, ...]
    points: int
    note: str


@dataclass(frozen=True, slots=True)
class GridScore:
    """The score of one grid."""

    total: int
    lines: tuple[ScoreLine, ...]
    matched: frozenset[int]
    """Positions whose cards are cancelled by a match."""
    four_alikes: int
    """How many times the grid holds four alike (for the opponents' penalty)."""


def card_key(card: GCard, rules: GolfRules) -> int:
    """The key cards match on: the rank (0 for jokers), or ``WILD``."""
    return WILD if rules.is_wild(card) else card.rank


def _matched(keys: Sequence[int], line: Line) -> bool:
    first = WILD
    for p in line:
        k = keys[p]
        if k == WILD:
            continue
        if k >= UNKNOWN:
            return False
        if first == WILD:
            first = k
        elif k != first:
            return False
    return True


class Scorer:
    """The grid scorer of one set of rules (build it with :func:`scorer`, which caches)."""

    def __init__(self, rules: GolfRules) -> None:
        geo = geometry(rules.rows, rules.cols)
        self.rules = rules
        self.size = geo.size
        groups: list[tuple[str, Line]] = []
        if rules.block_of_four_value is not None:
            groups += [("block-of-four", b) for b in geo.blocks]
        if rules.match_columns:
            groups += [("column", line) for line in geo.col_lines]
        if rules.match_rows:
            groups += [("row", line) for line in geo.row_lines]
        if rules.match_diagonals:
            groups += [("diagonal", line) for line in geo.diagonals]
        if rules.match_adjacent_pairs:
            groups += [("adjacent-pair", line) for line in geo.adjacent_pairs]
        self.groups = tuple(groups)
        self.blocks = geo.blocks
        self.block_value = rules.block_of_four_value or 0
        self.joker_pair_value = rules.joker_pair_value
        self.counts_four = bool(rules.four_alike_self or rules.four_alike_opponents)

    def four_alikes(self, keys: Sequence[int]) -> int:
        """How many four-alikes the keys hold under the rules' scope (unknown cards do not count). Four alike goes
        by rank: a wild card (a one-eyed jack, the only wild cards) is still a jack; being wild only lets it match
        other cards in lines."""
        ranks = [WILD_RANK if k == WILD else k for k in keys]
        if self.rules.four_alike_scope is FourAlikeScope.BLOCK:
            n = 0
            for b in self.blocks:
                k = ranks[b[0]]
                if k < UNKNOWN and ranks[b[1]] == k and ranks[b[2]] == k and ranks[b[3]] == k:
                    n += 1
            return n
        counts = Counter(k for k in ranks if k < UNKNOWN)
        return sum(c // 4 for c in counts.values())

    def total(self, keys: Sequence[int], values: Sequence[float]) -> float:
        """The grid's points for rank keys and values (an unknown card: key >= ``UNKNOWN``, its expected value)."""
        total = float(sum(values))
        if self.groups:
            cancelled = [False] * self.size
            for kind, line in self.groups:
                if _matched(keys, line):
                    for p in line:
                        if not cancelled[p]:
                            total -= values[p]
                            cancelled[p] = True
                    if kind == "block-of-four":
                        total += self.block_value
                    elif self.joker_pair_value is not None and all(keys[p] == JOKER_RANK for p in line):
                        total += self.joker_pair_value
        if self.counts_four:
            total += self.rules.four_alike_self * self.four_alikes(keys)
        return total

    def breakdown(self, cards: Sequence[GCard]) -> GridScore:
        """The score of a grid of known cards, with one line per card and per match."""
        rules = self.rules
        keys = [card_key(c, rules) for c in cards]
        values = [rules.card_value(c) for c in cards]
        lines = [ScoreLine("card", (p,), v, f"{cards[p].code} scores {v}") for p, v in enumerate(values)]
        cancelled: set[int] = set()
        for kind, line in self.groups:
            if not _matched(keys, line):
                continue
            fresh = [p for p in line if p not in cancelled]
            points = -sum(values[p] for p in fresh)
            cancelled.update(fresh)
            codes = " ".join(cards[p].code for p in line)
            if kind == "block-of-four":
                points += self.block_value
                note = f"2x2 block {codes} scores {self.block_value}"
            elif self.joker_pair_value is not None and all(keys[p] == JOKER_RANK for p in line):
                points += self.joker_pair_value
                note = f"jokers {codes} score {self.joker_pair_value} together"
            else:
                note = f"{kind} {codes} matches and scores 0"
            lines.append(ScoreLine(kind, line, points, note))
        fours = self.four_alikes(keys) if self.counts_four else 0
        if fours and rules.four_alike_self:
            pts = rules.four_alike_self * fours
            lines.append(ScoreLine("four-alike", (), pts, f"four alike x{fours} scores {pts}"))
        total = sum(line.points for line in lines)
        return GridScore(total, tuple(lines), frozenset(cancelled), fours)


@cache
def scorer(rules: GolfRules) -> Scorer:
    """The cached :class:`Scorer` of ``rules``."""
    return Scorer(rules)


def score_grid(cards: Sequence[GCard], rules: GolfRules) -> GridScore:
    """The score and breakdown of one grid of known cards."""
    if len(cards) != rules.cards_per_grid:
        raise ValueError(f"a grid holds {rules.cards_per_grid} cards, not {len(cards)}")
    return scorer(rules).breakdown(cards)
