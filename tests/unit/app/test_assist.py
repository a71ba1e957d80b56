"""Hints, undo, AutoPlay, the move log and the verdict after the game, against in-memory storage."""

from __future__ import annotations

from dataclasses import replace

import pytest

from golf.app.errors import IdempotencyKeyReused, MoveRefused
from golf.app.identity import Caller
from golf.app.records import UNDO
from golf.app.solitaire import SolitaireService
from golf.bootstrap import Services
from golf.engine.solitaire.moves import Draw, PlayColumn, Refusal
from golf.engine.solitaire.rules import UndoPolicy
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import State, Status
from tests.unit.app.fakes import FakeStore

WINNABLE, LOST = 2, 1  # PySolFC deals under the standard rules (see tests/data/golf-solver-sample.csv)

ANN = Caller("player-ann")


@pytest.fixture
def games(services: Services) -> SolitaireService:
    return services.games


async def pysol_game(games: SolitaireService, number: int, **overrides: object) -> str:
    deal = await games.create_deal(ANN, "standard", dict(overrides), pysol_number=number)
    return (await games.create_game(ANN, deal.id)).game.id


async def test_following_hints_wins_a_winnable_deal(games: SolitaireService, store: FakeStore) -> None:
    game_id = await pysol_game(games, WINNABLE)
    snap = await games.get_game(ANN, game_id)
    n = 0
    while snap.state.status is Status.IN_PROGRESS:
        move, snap, replayed = await games.hint(ANN, game_id, f"h{n}")
        assert not replayed and snap.game.hints_used == n + 1
        snap = await games.play_move(ANN, game_id, move, f"m{n}")
        n += 1
    assert snap.state.status is Status.WON
    _, again, replayed = await games.hint(ANN, game_id, "h0")
    assert replayed and again.game.hints_used == n


async def test_a_hint_on_a_lost_cause_heads_for_the_fewest_cards(games: SolitaireService) -> None:
    game_id = await pysol_game(games, LOST)
    snap = await games.get_game(ANN, game_id)
    best = solve(snap.state).cards_left
    while snap.state.status is Status.IN_PROGRESS:
        move, snap, _ = await games.hint(ANN, game_id, f"h{snap.game.version}")
        snap = await games.play_move(ANN, game_id, move, f"m{snap.game.version}")
    assert snap.state.cards_in_columns == best > 0


async def test_hint_of_a_draw_keeps_the_card_to_the_server(games: SolitaireService) -> None:
    # With nothing to play but the stock, the hint is a draw; the API layer shows it without its card.
    game_id = await pysol_game(games, LOST)
    snap = await games.get_game(ANN, game_id)
    while snap.state.column_plays():
        snap = await games.play_move(ANN, game_id, snap.state.column_plays()[0], f"p{snap.game.version}")
    assert snap.state.status is Status.IN_PROGRESS
    move, _, _ = await games.hint(ANN, game_id, "h")
    assert isinstance(move, Draw)


async def test_hint_after_the_end_is_refused(games: SolitaireService) -> None:
    game_id = await pysol_game(games, LOST)
    snap = await games.get_game(ANN, game_id)
    while snap.state.status is Status.IN_PROGRESS:
        snap = await games.play_move(ANN, game_id, snap.state.legal_moves()[-1], f"m{snap.game.version}")
    with pytest.raises(MoveRefused) as err:
        await games.hint(ANN, game_id, "late")
    assert err.value.illegal.reason is Refusal.GAME_OVER


async def test_undo_back_to_the_start_and_the_log_keeps_everything(games: SolitaireService) -> None:
    game_id = await pysol_game(games, WINNABLE)
    start = (await games.get_game(ANN, game_id)).state
    states = [start]
    snap = await games.get_game(ANN, game_id)
    for i in range(4):
        snap = await games.play_move(ANN, game_id, snap.state.legal_moves()[0], f"m{i}")
        states.append(snap.state)
    for i in range(4):
        snap = await games.undo(ANN, game_id, f"u{i}", expected_version=snap.game.version)
        assert snap.state == states[3 - i]
        assert snap.game.undos_used == i + 1
    assert snap.game.line == [] and snap.game.version == 8
    with pytest.raises(MoveRefused) as err:
        await games.undo(ANN, game_id, "u-more")
    assert err.value.illegal.reason is Refusal.NOTHING_TO_UNDO
    log = await games.list_moves(ANN, game_id)
    assert [e.seq for e in log] == list(range(1, 9))
    assert [e.undone_by for e in log[:4]] == [8, 7, 6, 5]
    assert all(e.code == UNDO and e.undone_by is None for e in log[4:])
    # A retried undo returns the state it first produced, not a second undo.
    retry = await games.undo(ANN, game_id, "u0")
    assert retry.replayed and retry.state == states[3]
    with pytest.raises(IdempotencyKeyReused):
        await games.play_move(ANN, game_id, Draw(), "u0")


@pytest.mark.parametrize(("policy", "limit", "allowed"), [(UndoPolicy.NONE, 0, 0), (UndoPolicy.LIMITED, 2, 2)])
async def test_undo_policy(games: SolitaireService, policy: UndoPolicy, limit: int, allowed: int) -> None:
    game_id = await pysol_game(games, WINNABLE, undo_policy=policy, undo_limit=limit)
    snap = await games.get_game(ANN, game_id)
    for i in range(3):
        snap = await games.play_move(ANN, game_id, snap.state.legal_moves()[0], f"m{i}")
    for i in range(allowed):
        snap = await games.undo(ANN, game_id, f"u{i}")
    with pytest.raises(MoveRefused) as err:
        await games.undo(ANN, game_id, "one-too-many")
    expected = Refusal.UNDO_NOT_ALLOWED if policy is UndoPolicy.NONE else Refusal.UNDO_LIMIT_REACHED
    assert err.value.illegal.reason is expected


async def test_autoplay_plays_a_run_that_keeps_the_deal_winnable(games: SolitaireService) -> None:
    game_id = await pysol_game(games, WINNABLE)
    snap = await games.get_game(ANN, game_id)
    while not snap.state.column_plays():
        snap = await games.play_move(ANN, game_id, Draw(), f"d{snap.game.version}")
    before = snap.state
    snap = await games.autoplay(ANN, game_id, "a1")
    assert snap.made and all(isinstance(m, PlayColumn) for m in snap.made)
    assert snap.state == before.replay(list(snap.made))
    assert not snap.state.column_plays()  # a run stops only where nothing more fits
    assert solve(snap.state).winnable
    # One undo takes the whole run back.
    undone = await games.undo(ANN, game_id, "u")
    assert undone.state == before
    retry = await games.autoplay(ANN, game_id, "a1")
    assert retry.replayed and retry.made == snap.made


async def test_autoplay_with_nothing_to_play(games: SolitaireService) -> None:
    game_id = await pysol_game(games, WINNABLE)
    snap = await games.get_game(ANN, game_id)
    while snap.state.column_plays():
        snap = await games.play_move(ANN, game_id, snap.state.column_plays()[0], f"p{snap.game.version}")
    assert snap.state.status is Status.IN_PROGRESS
    with pytest.raises(MoveRefused) as err:
        await games.autoplay(ANN, game_id, "a")
    assert err.value.illegal.reason is Refusal.NOTHING_TO_PLAY


async def test_verdict_after_the_game(games: SolitaireService) -> None:
    game_id = await pysol_game(games, WINNABLE)
    snap = await games.get_game(ANN, game_id)
    assert snap.deal.verdict is None
    while snap.state.status is Status.IN_PROGRESS:
        snap = await games.play_move(ANN, game_id, snap.state.legal_moves()[-1], f"m{snap.game.version}")
    # The last move does not wait for the solver; reading the game does.
    snap = await games.get_game(ANN, game_id)
    verdict = snap.deal.verdict
    assert verdict is not None and verdict.winnable is True
    state = State.initial(snap.deal.rules, snap.deal.layout)
    from golf.engine.solitaire.moves import parse_move

    for code in verdict.solution:
        state = state.apply(parse_move(code))
    assert state.status is Status.WON
    lost_id = await pysol_game(games, LOST)
    lost = await games.get_game(ANN, lost_id)
    while lost.state.status is Status.IN_PROGRESS:
        lost = await games.play_move(ANN, lost_id, lost.state.legal_moves()[-1], f"m{lost.game.version}")
    lost = await games.get_game(ANN, lost_id)
    assert lost.deal.verdict is not None and lost.deal.verdict.winnable is False
    assert lost.deal.verdict.fewest_left == solve(State.initial(lost.deal.rules, lost.deal.layout)).cards_left
    assert replace(lost.deal.verdict, solution=()) == lost.deal.verdict
