"""The result of a hole: every grid revealed and scored, plus the hole-level rules (four alike against the
opponents, peek strokes, the knocker's penalty or bonus), each as a line of the breakdown."""

from __future__ import annotations

from dataclasses import dataclass

from golf.engine.cardgolf.options import KnockerBonus, KnockerPenalty
from golf.engine.cardgolf.scoring import GridScore, ScoreLine, scorer
from golf.engine.cardgolf.state import EndReason, HoleState


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


def hole_result(state: HoleState) -> HoleResult:
    """Score a finished hole (raises ``ValueError`` while it is being played)."""
    if not state.over or state.end_reason is None:
        raise ValueError("the hole is not over")
    rules = state.rules
    grid_scores = [scorer(rules).breakdown(g) for g in state.grids]
    lines: list[list[ScoreLine]] = [list(g.lines) for g in grid_scores]
    for seat, strokes in enumerate(state.strokes):
        if strokes:
            lines[seat].append(ScoreLine("peek-stroke", (), strokes, f"peek strokes: {strokes:+d}"))
    if rules.four_alike_opponents:
        for owner, g in enumerate(grid_scores):
            if g.four_alikes:
                pts = rules.four_alike_opponents * g.four_alikes
                for seat in range(state.players):
                    if seat != owner:
                        note = f"seat {owner} holds four alike: {pts:+d}"
                        lines[seat].append(ScoreLine("four-alike-opponent", (), pts, note))
    totals = [sum(line.points for line in ls) for ls in lines]
    ender = state.ender
    # The player who knocked (or went out) is penalised or rewarded however the hole then ends: by the last turns,
    # by the stock running out, or by the safety limit on rounds.
    if ender is not None:
        others = [t for s, t in enumerate(totals) if s != ender]
        line = _knocker_line(rules.knocker_penalty, rules.knocker_bonus, totals[ender], others)
        if line is not None:
            lines[ender].append(line)
            totals[ender] += line.points
    seats = tuple(
        SeatResult(seat, totals[seat], grid_scores[seat], tuple(lines[seat])) for seat in range(state.players)
    )
    return HoleResult(seats, ender, state.end_reason)
