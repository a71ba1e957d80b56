"""The checks of one hand-made grid case, shared by the scoring tests: the engine's total and breakdown (points
per rule, the cancelled places) and the independent recount agree with the case."""

from __future__ import annotations

from collections.abc import Sequence

from golf.engine.cardgolf import GolfRules, score_grid
from golf.engine.cardgolf.cards import GCard
from tests.unit.cardgolf.recount import recount


def check_grid_case(
    cards: Sequence[GCard | None], rules: GolfRules, total: int, by_rule: dict[str, int], matched: set[int]
) -> None:
    """``cards`` score ``total`` under ``rules``, with ``by_rule`` points from each rule but single cards and the
    ``matched`` places cancelled; the lines add up to the total, and the recount agrees."""
    result = score_grid(cards, rules)
    assert result.total == total
    assert sum(line.points for line in result.lines) == total
    got: dict[str, int] = {}
    for line in result.lines:
        if line.rule != "card":
            got[line.rule] = got.get(line.rule, 0) + line.points
    assert got == by_rule
    assert set(result.matched) == matched
    assert recount(list(cards), rules)[0] == total
