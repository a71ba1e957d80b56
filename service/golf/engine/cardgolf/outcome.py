"""The result of a hole: every grid revealed and scored, plus the hole-level rules, each as a line of the
breakdown. The hole-level rules apply in one order, each to the running hole score the ones before it left
(``docs/card-golf-rules.md``):

1. the grid (:mod:`golf.engine.cardgolf.scoring`);
2. peek strokes;
3. four alike against the opponents (and a 0-point line naming four alike that wins the match);
4. shooting the moon;
5. blackjack;
6. the knocker's penalty or bonus;
7. the first out's bonus;
8. underdog;
9. tied shame.
"""

from __future__ import annotations

from dataclasses import dataclass

from golf.engine.cardgolf.options import KnockerBonus, KnockerPenalty
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.scoring import GridScore, ScoreLine, moon_value, scorer
from golf.engine.cardgolf.state import EndReason, HoleState

HOLE_RULES = (
    "peek-stroke",
    "four-alike-opponent",
    "four-alike-wins-match",
    "shoot-the-moon",
    "blackjack",
    "knocker-penalty",
    "knocker-bonus",
    "first-out",
    "underdog",
    "tied-shame",
)
"""The hole-level rules in the order they apply (the knocker's penalty and bonus share one step)."""
BLACKJACK = 21


@dataclass(frozen=True, slots=True)
class SeatResult:
    """One seat's score for the hole and how it was made."""

    seat: int
    total: int
    grid: GridScore
    lines: tuple[ScoreLine, ...]
    """The grid's lines followed by the hole-level lines; their points sum to ``total``."""


@dataclass(frozen=True, slots=True)
class HoleResult:
    """The outcome of a finished hole."""

    seats: tuple[SeatResult, ...]
    ender: int | None
    reason: EndReason
    wins_match: tuple[int, ...] = ()
    """Seats whose grid holds four alike when the rules say four alike wins the match
    (``four_alike_wins_match``): the match ends with this hole (:class:`golf.engine.cardgolf.match.ScoreSheet`
    settles which of them wins when there are several)."""

    @property
    def scores(self) -> tuple[int, ...]:
        """Points per seat."""
        return tuple(s.total for s in self.seats)

    @property
    def winners(self) -> tuple[int, ...]:
        """The seats with the lowest score."""
        low = min(self.scores)
        return tuple(s for s, t in enumerate(self.scores) if t == low)


def _knocker_line(rules_pen: KnockerPenalty, bonus: KnockerBonus, mine: int, others: list[int]) -> ScoreLine | None:
    players = len(others) + 1
    if any(o < mine for o in others):
        extra = {
            KnockerPenalty.NONE: 0,
            KnockerPenalty.PLUS_10: 10,
            KnockerPenalty.PLUS_20: 20,
            KnockerPenalty.DOUBLE_PLUS_5: mine + 5,
            KnockerPenalty.TAKE_HIGHEST: max(others) - mine if max(others) > mine else 0,
            KnockerPenalty.PLUS_TWICE_PLAYERS: 2 * players,
        }[rules_pen]
        if extra:
            return ScoreLine("knocker-penalty", (), extra, f"ended the hole without the lowest score: {extra:+d}")
        return None
    gain = {
        KnockerBonus.NONE: 0,
        KnockerBonus.ZERO_IF_POSITIVE: -mine if mine > 0 else 0,
        KnockerBonus.MINUS_PLAYERS: -players,
    }[bonus]
    if gain:
        return ScoreLine("knocker-bonus", (), gain, f"ended the hole with the lowest score: {gain:+d}")
    return None


class _Sheet:
    """The seats' lines and running totals while the hole-level rules are applied."""

    def __init__(self, grids: list[GridScore]) -> None:
        self.lines: list[list[ScoreLine]] = [list(g.lines) for g in grids]
        self.totals: list[int] = [g.total for g in grids]

    def add(self, seat: int, rule: str, points: int, note: str) -> None:
        self.lines[seat].append(ScoreLine(rule, (), points, note))
        self.totals[seat] += points


def _hole_rules(rules: GolfRules, state: HoleState, grids: list[GridScore]) -> tuple[_Sheet, tuple[int, ...]]:
    """Apply the hole-level rules in their order (see the module's docstring)."""
    players = len(grids)
    sheet = _Sheet(grids)
    for seat, strokes in enumerate(state.strokes):
        if strokes:
            sheet.add(seat, "peek-stroke", strokes, f"peek strokes: {strokes:+d}")
    if rules.four_alike_opponents:
        for owner, g in enumerate(grids):
            if g.four_alikes:
                pts = rules.four_alike_opponents * g.four_alikes
                for seat in range(players):
                    if seat != owner:
                        sheet.add(seat, "four-alike-opponent", pts, f"seat {owner} holds four alike: {pts:+d}")
    wins: tuple[int, ...] = ()
    if rules.four_alike_wins_match:
        wins = tuple(s for s, g in enumerate(grids) if g.four_alikes)
        for seat in wins:
            sheet.add(seat, "four-alike-wins-match", 0, "holds four alike: wins the match")
    if rules.shoot_the_moon:
        moon = moon_value(rules)
        shooters = [s for s, g in enumerate(grids) if moon > 0 and g.total >= moon]
        for seat in range(players):
            if not shooters:
                break
            if seat in shooters:
                sheet.add(seat, "shoot-the-moon", -sheet.totals[seat], f"shot the moon ({moon}): scores 0 for the hole")
            else:
                who = ", ".join(str(s) for s in shooters)
                note = f"seat {who} shot the moon: scores {moon} for the hole"
                sheet.add(seat, "shoot-the-moon", moon - sheet.totals[seat], note)
    if rules.blackjack:
        for seat in range(players):
            if sheet.totals[seat] == BLACKJACK:
                sheet.add(seat, "blackjack", -BLACKJACK, "a hole of exactly 21 (blackjack) scores 0")
    # The player who knocked (or went out) is penalised or rewarded however the hole then ends: by the last turns,
    # by the stock running out, or by the safety limit on rounds.
    ender = state.ender
    if ender is not None:
        others = [t for s, t in enumerate(sheet.totals) if s != ender]
        line = _knocker_line(rules.knocker_penalty, rules.knocker_bonus, sheet.totals[ender], others)
        if line is not None:
            sheet.add(ender, line.rule, line.points, line.note)
    if rules.first_out_bonus and state.went_out is not None:
        pts = rules.first_out_bonus
        sheet.add(state.went_out, "first-out", pts, f"first to turn up every card: {pts:+d}")
    if rules.underdog_bonus:
        low = min(sheet.totals)
        for seat in [s for s, t in enumerate(sheet.totals) if t == low]:
            pts = rules.underdog_bonus
            sheet.add(seat, "underdog", pts, f"lowest score of the hole ({low}): {pts:+d}")
    if rules.tied_penalty:
        counts: dict[int, int] = {}
        for t in sheet.totals:
            counts[t] = counts.get(t, 0) + 1
        for seat in [s for s, t in enumerate(sheet.totals) if counts[t] > 1]:
            pts = rules.tied_penalty
            sheet.add(seat, "tied-shame", pts, f"tied with another seat on {sheet.totals[seat]}: {pts:+d}")
    return sheet, wins


def hole_result(state: HoleState) -> HoleResult:
    """Score a finished hole (raises ``ValueError`` while it is being played)."""
    if not state.over or state.end_reason is None:
        raise ValueError("the hole is not over")
    rules = state.rules
    grid_scores = [scorer(rules).breakdown(g) for g in state.grids]
    sheet, wins = _hole_rules(rules, state, grid_scores)
    seats = tuple(
        SeatResult(seat, sheet.totals[seat], grid_scores[seat], tuple(sheet.lines[seat]))
        for seat in range(state.players)
    )
    return HoleResult(seats, state.ender, state.end_reason, wins)
