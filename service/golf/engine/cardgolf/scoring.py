"""Scoring a grid: card values, matched lines and pairs, blocks of four, four alike and the grid-level house rules
(four jacks, four in two columns, a line of four kings, the straight); with a breakdown that says which cards
matched and which rule scored what. The rules, their order and the cases the texts leave open are written out in
``docs/card-golf-rules.md``.

One algorithm serves the engine (with the breakdown) and the bots (``Scorer.total`` on keys, where an unknown card
has a key that never matches and its expected value).

Keys. A card's key says what it matches on and what it is:

- by rank (the default): the rank, 1..13, and 0 for a joker;
- by value (``pairs_by_value``): ``class << 4 | rank``, where the class is 0 for jokers (a joker matches only
  jokers) and otherwise one per point value, so a jack and a queen (both 10) share a class;
- a wild card (a one-eyed jack under ``wild_one_eyed_jacks``): ``-1 - key`` of the card it is, so it stays a jack
  for the rules that count jacks or ranks;
- from ``UNKNOWN`` up: a card the player cannot see, or an empty place (``EMPTY``): it never matches and counts
  for no rank.

A grid is ``rows * cols`` places in reading order, possibly followed by extra places (the ace of Powers adds a
card), which are single cards in no line or block; ``None`` is an empty place (0 points, matches nothing).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from golf.engine.cardgolf.cards import JOKER_RANK, GCard, is_joker
from golf.engine.cardgolf.grid import Line, geometry
from golf.engine.cardgolf.options import FourAlikeScope
from golf.engine.cardgolf.rules import GolfRules

UNKNOWN = 1 << 16
"""Keys from here up are cards a player cannot see: they never match. (Known keys stay far below it.)"""
EMPTY = UNKNOWN
"""The key of an empty place (its value is 0): like an unknown card, it never matches."""
JACK, KING = 11, 13
_RANK_BITS = 4
_RANK_MASK = (1 << _RANK_BITS) - 1

_BLOCK, _COLUMN = "block-of-four", "column"


@dataclass(frozen=True, slots=True)
class ScoreLine:
    """One entry of a breakdown: ``rule`` scored ``points`` on the cards at ``positions``."""

    rule: str
    """Grid rules: ``card``, ``empty``, ``column``, ``row``, ``diagonal``, ``adjacent-pair``, ``block-of-four``,
    ``four-alike``, ``four-jacks``, ``four-in-two-columns``, ``four-kings-line``, ``straight``. Hole rules (in
    this order): ``peek-stroke``, ``four-alike-opponent``, ``four-alike-wins-match``, ``shoot-the-moon``,
    ``blackjack``, ``knocker-penalty`` / ``knocker-bonus``, ``first-out``, ``underdog``, ``tied-shame``."""
    positions: tuple[int, ...]
    points: int
    note: str


@dataclass(frozen=True, slots=True)
class GridScore:
    """The score of one grid."""

    total: int
    lines: tuple[ScoreLine, ...]
    matched: frozenset[int]
    """Positions in a matched line, pair or block that scored (their cards score 0, unless
    ``negative_pairs_keep_value`` keeps a negative one)."""
    four_alikes: int
    """How many times the grid holds four alike (for the opponents' penalty and ``four_alike_wins_match``)."""


@cache
def _value_classes(rules: GolfRules) -> dict[int, int]:
    """Point value -> match class under ``pairs_by_value`` (class 0 is the jokers')."""
    values = set(rules.values) | {points for _, points in rules.special_values}
    return {v: 1 + i for i, v in enumerate(sorted(values))}


def card_key(card: GCard | None, rules: GolfRules) -> int:
    """The key ``card`` matches on under ``rules`` (see the module's docstring); ``EMPTY`` for an empty place."""
    if card is None:
        return EMPTY
    base = card.rank
    if rules.pairs_by_value and not is_joker(card):
        base |= _value_classes(rules)[rules.card_value(card)] << _RANK_BITS
    return -1 - base if rules.is_wild(card) else base


def _line_class(keys: Sequence[int], line: Line, shift: int) -> int | None:
    """The match class the cards of ``line`` share (wild cards match any; ``-1`` when all are wild), or ``None``
    when the line does not match (different classes, or an unknown card or an empty place in it)."""
    first = -1
    for p in line:
        k = keys[p]
        if k < 0:
            continue
        if k >= UNKNOWN:
            return None
        m = k >> shift
        if first == -1:
            first = m
        elif m != first:
            return None
    return first


@dataclass(frozen=True, slots=True)
class _Event:
    """A non-card line of the breakdown, as the core found it (notes are written by :meth:`Scorer.breakdown`)."""

    rule: str
    positions: tuple[int, ...]
    points: float
    kind: str = ""
    """``match``, ``jokers`` (a line of jokers with ``joker_pair_value``) or ``block`` for matches."""
    kept: tuple[int, ...] = ()
    """Positions of a match whose negative cards kept their points."""
    count: int = 0


class Scorer:
    """The grid scorer of one set of rules (build it with :func:`scorer`, which caches)."""

    def __init__(self, rules: GolfRules) -> None:
        geo = geometry(rules.rows, rules.cols)
        self.rules = rules
        self.size = geo.size
        self.shift = _RANK_BITS if rules.pairs_by_value else 0
        groups: list[tuple[str, Line]] = []
        if rules.block_of_four_value is not None:
            groups += [(_BLOCK, b) for b in geo.blocks]
        if rules.match_columns:
            groups += [(_COLUMN, line) for line in geo.col_lines]
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
        self.keep_negative = rules.negative_pairs_keep_value
        self.counts_four = bool(rules.four_alike_self or rules.four_alike_opponents or rules.four_alike_wins_match)
        self.two_columns = rules.match_columns and bool(rules.four_in_two_columns_value)
        self.king_lines = (
            tuple(line for line in (*geo.row_lines, *geo.col_lines) if len(line) == 4)
            if rules.four_kings_line_value
            else ()
        )
        self.has_extras = bool(
            rules.four_alike_self
            or rules.four_jacks_value
            or self.two_columns
            or self.king_lines
            or rules.straight_value is not None
        )

    # -- what the keys are -----------------------------------------------------------------------------------
    def _base(self, k: int) -> int:
        return -1 - k if k < 0 else k

    def rank_of(self, k: int) -> int | None:
        """The rank of the card with key ``k`` (0 for a joker, 11 for a wild jack); ``None`` when unknown."""
        if k >= UNKNOWN:
            return None
        base = self._base(k)
        return base & _RANK_MASK if self.shift else base

    def alike_of(self, k: int) -> int | None:
        """What four alike counts the card with key ``k`` as: its rank (or value class under ``pairs_by_value``);
        a wild card counts as the jack it is. ``None`` when unknown or empty."""
        if k >= UNKNOWN:
            return None
        return self._base(k) >> self.shift

    def four_alikes(self, keys: Sequence[int]) -> int:
        """How many four-alikes the keys hold under the rules' scope (unknown cards and empty places do not count).
        Four alike goes by rank (by value class under ``pairs_by_value``): a wild card (a one-eyed jack) is still a
        jack; being wild only lets it match other cards in lines. In ``BLOCK`` scope the blocks may not share a
        card (taken in reading order); ``ANYWHERE`` counts every four of a kind, extra places included, so eight
        alike is twice four alike."""
        alike = [self.alike_of(k) for k in keys]
        if self.rules.four_alike_scope is FourAlikeScope.BLOCK:
            n = 0
            used: set[int] = set()
            for b in self.blocks:
                a = alike[b[0]]
                if a is None or used.intersection(b) or any(alike[p] != a for p in b[1:]):
                    continue
                used.update(b)
                n += 1
            return n
        counts = Counter(a for a in alike if a is not None)
        return sum(c // 4 for c in counts.values())

    def straight(self, keys: Sequence[int]) -> bool:
        """Whether the keys make a straight: exactly ``rows * cols`` cards (no empty or extra place), every rank
        different and consecutive, ace low, no joker; a wild jack is a jack."""
        if len(keys) != self.size:
            return False
        ranks = set()
        for k in keys:
            r = self.rank_of(k)
            if r is None or r == JOKER_RANK:
                return False
            ranks.add(r)
        return len(ranks) == self.size and max(ranks) - min(ranks) == self.size - 1

    # -- the score -------------------------------------------------------------------------------------------
    def _core(self, keys: Sequence[int], values: Sequence[float], events: list[_Event] | None) -> float:
        """The grid's points; when ``events`` is a list, every non-card line is appended to it."""
        rules = self.rules
        total = float(sum(values))
        column_classes: list[tuple[int, Line]] = []
        if self.groups:
            shift = self.shift
            keep = self.keep_negative
            jpv = self.joker_pair_value
            cancelled = [False] * self.size
            blocked = [False] * self.size if rules.block_of_four_value is not None else None
            for kind, line in self.groups:
                cls = _line_class(keys, line, shift)
                if cls is None:
                    continue
                if kind == _BLOCK:
                    assert blocked is not None
                    if any(blocked[p] for p in line):  # blocks may not share a card
                        continue
                    for p in line:
                        blocked[p] = True
                jokers = jpv is not None and kind != _BLOCK and all(keys[p] == JOKER_RANK for p in line)
                points = 0.0
                kept: list[int] = []
                for p in line:
                    if cancelled[p]:
                        continue
                    v = values[p]
                    if keep and v < 0 and not jokers:
                        kept.append(p)
                        continue
                    points -= v
                    cancelled[p] = True
                if kind == _BLOCK:
                    points += self.block_value
                elif jokers:
                    assert jpv is not None
                    points += jpv
                total += points
                if kind == _COLUMN and self.two_columns:
                    column_classes.append((cls if cls != -1 else self._base(keys[line[0]]) >> shift, line))
                if events is not None:
                    tag = "block" if kind == _BLOCK else "jokers" if jokers else "match"
                    events.append(_Event(kind, line, points, tag, tuple(kept)))
        if not self.has_extras and not self.counts_four:
            return total
        if self.counts_four and rules.four_alike_self:
            fours = self.four_alikes(keys)
            if fours:
                points = float(rules.four_alike_self * fours)
                total += points
                if events is not None:
                    events.append(_Event("four-alike", (), points, count=fours))
        if rules.four_jacks_value:
            jacks = sum(1 for k in keys if self.rank_of(k) == JACK)
            if jacks >= 4:
                points = float(rules.four_jacks_value * (jacks // 4))
                total += points
                if events is not None:
                    events.append(_Event("four-jacks", (), points, count=jacks // 4))
        if column_classes:
            by_class: dict[int, list[Line]] = {}
            for cls, line in column_classes:
                by_class.setdefault(cls, []).append(line)
            for lines in by_class.values():
                for i in range(0, len(lines) - 1, 2):  # each two matched columns of one kind
                    points = float(rules.four_in_two_columns_value)
                    total += points
                    if events is not None:
                        events.append(_Event("four-in-two-columns", (*lines[i], *lines[i + 1]), points))
        for line in self.king_lines:
            if all(self.rank_of(keys[p]) == KING for p in line):
                points = float(rules.four_kings_line_value)
                total += points
                if events is not None:
                    events.append(_Event("four-kings-line", line, points))
        if rules.straight_value is not None and self.straight(keys):
            points = rules.straight_value - total
            if events is not None:
                events.append(_Event("straight", tuple(range(self.size)), points))
            total = float(rules.straight_value)
        return total

    def total(self, keys: Sequence[int], values: Sequence[float]) -> float:
        """The grid's points for keys (:func:`card_key`; an unknown card or an empty place: a key >= ``UNKNOWN``)
        and values (an unknown card: its expected value; an empty place: 0). ``keys`` may run past ``rows * cols``
        (extra places: single cards)."""
        return self._core(keys, values, None)

    def breakdown(self, cards: Sequence[GCard | None]) -> GridScore:
        """The score of a grid of known cards (``None``: an empty place), with one line per place and per rule
        that scored."""
        rules = self.rules
        keys = [card_key(c, rules) for c in cards]
        values = [rules.card_value(c) if c is not None else 0 for c in cards]
        lines: list[ScoreLine] = []
        for p, card in enumerate(cards):
            if card is None:
                lines.append(ScoreLine("empty", (p,), 0, f"place {p + 1} is empty"))
            else:
                extra = " (an extra place, in no line)" if p >= self.size else ""
                lines.append(ScoreLine("card", (p,), values[p], f"{card.code} scores {values[p]}{extra}"))
        events: list[_Event] = []
        total = self._core(keys, [float(v) for v in values], events)
        matched: set[int] = set()
        for e in events:
            if e.kind:
                matched.update(e.positions)
            lines.append(ScoreLine(e.rule, e.positions, round(e.points), self._note(e, cards)))
        assert sum(line.points for line in lines) == round(total)
        fours = self.four_alikes(keys) if self.counts_four else 0
        return GridScore(round(total), tuple(lines), frozenset(matched), fours)

    def _note(self, e: _Event, cards: Sequence[GCard | None]) -> str:
        def codes(positions: Sequence[int]) -> str:
            return " ".join(c.code if (c := cards[p]) is not None else "--" for p in positions)

        points = round(e.points)
        rules = self.rules
        if e.kind:
            kept = f"; {codes(e.kept)} keep their points" if e.kept else ""
            if e.kind == "block":
                return f"2x2 block {codes(e.positions)} scores {self.block_value}{kept}"
            if e.kind == "jokers":
                return f"jokers {codes(e.positions)} score {self.joker_pair_value} together"
            return f"{e.rule} {codes(e.positions)} matches and scores 0{kept}"
        if e.rule == "four-alike":
            return f"four alike x{e.count} scores {points}"
        if e.rule == "four-jacks":
            return f"four jacks (wolfpack) x{e.count} score {points:+d}"
        if e.rule == "four-in-two-columns":
            return f"two matched columns alike, {codes(e.positions)}: {points:+d}"
        if e.rule == "four-kings-line":
            return f"a line of four kings {codes(e.positions)}: {points:+d}"
        return f"a straight ({codes(e.positions)}) scores {rules.straight_value} in all: {points:+d}"


@cache
def scorer(rules: GolfRules) -> Scorer:
    """The cached :class:`Scorer` of ``rules``."""
    return Scorer(rules)


def score_grid(cards: Sequence[GCard | None], rules: GolfRules) -> GridScore:
    """The score and breakdown of one grid of known cards: ``rows * cols`` places in reading order, then any extra
    places; ``None`` is an empty place. Raises ``ValueError`` for a grid shorter than ``rows * cols``."""
    if len(cards) < rules.cards_per_grid:
        raise ValueError(f"a grid holds at least {rules.cards_per_grid} places, not {len(cards)}")
    return scorer(rules).breakdown(cards)


def moon_value(rules: GolfRules) -> int:
    """The most a grid can score under ``rules``, as ``shoot_the_moon`` reads it: every one of its ``rows * cols``
    cards at the highest single-card value of the game (jokers only when the game has them), nothing matched (60
    in six-card)."""
    highest = [*rules.values, *(points for code, points in rules.special_values if rules.jokers or code[0] != "X")]
    if rules.jokers:
        highest.append(rules.joker_value)
    return rules.cards_per_grid * max(highest)
