"""Playing holes and matches between bots: each bot sees only its seat's view."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from golf.engine.cardgolf.bots.base import Bot
from golf.engine.cardgolf.match import ScoreSheet, deal_hole, match_over
from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.outcome import HoleResult, hole_result
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.state import HoleState
from golf.engine.cardgolf.view import view

Observer = Callable[[HoleState, int, Move], None]
"""Called before each move with the state, the seat and its move (tests use it to inspect views)."""


def play_hole(state: HoleState, bots: Sequence[Bot], observer: Observer | None = None) -> HoleState:
    """Play ``state`` to the end of the hole with one bot per seat; returns the final state."""
    if len(bots) != state.players:
        raise ValueError("one bot per seat")
    while not state.over:
        seat = state.to_move
        assert seat is not None
        move = bots[seat].choose(view(state, seat))
        if observer is not None:
            observer(state, seat, move)
        state = state.apply(seat, move)
    return state


def play_match(
    rules: GolfRules, bots: Sequence[Bot], seed: str, holes: int | None = None
) -> tuple[ScoreSheet, list[HoleResult]]:
    """Play a match (``rules.holes`` holes unless ``holes`` is given) and return its score sheet and results."""
    sheet = ScoreSheet(len(bots))
    results: list[HoleResult] = []
    target = rules.holes if holes is None else holes
    index = 0
    while len(sheet.holes) < target and (holes is not None or not match_over(rules, sheet)):
        final = play_hole(deal_hole(rules, len(bots), seed, index), bots)
        result = hole_result(final)
        results.append(result)
        sheet = sheet.add(result)
        index += 1
    return sheet, results
