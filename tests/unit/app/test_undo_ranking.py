"""Undo in scored play (issue 25): an undo that takes back a stock draw is allowed as the preset's policy says, but
the game has then shown a stock card, so it counts for no board and its round for no ROUNDS board."""

from __future__ import annotations

from datetime import timedelta

import pytest

from golf.app.boards import Period, deal_board, rounds_board
from golf.app.errors import MoveRefused
from golf.app.history import RecordKind
from golf.app.identity import Caller
from golf.app.records import RoundRecord, Unranked, shows_stock
from golf.app.replay_steps import game_steps
from golf.app.solitaire import SolitaireService
from golf.bootstrap import Services
from golf.engine.solitaire.moves import Draw, Refusal
from golf.engine.solitaire.rules import SolitaireRules, UndoPolicy
from golf.engine.solitaire.state import Status
from tests.unit.app.fakes import FakeClock, FakeStore
from tests.unit.app.recording_helpers import ANN as ANN_ID
from tests.unit.app.recording_helpers import MONDAY, finish, game, store_with_players

ANN = Caller("player-ann")


@pytest.fixture
def games(services: Services) -> SolitaireService:
    return services.games


async def to_the_end(games: SolitaireService, game_id: str) -> None:
    snap = await games.get_game(ANN, game_id)
    while snap.state.status is Status.IN_PROGRESS:
        snap = await games.play_move(ANN, game_id, snap.state.legal_moves()[0], f"end{snap.game.version}")


def test_only_entries_that_turned_a_stock_card_show_one_when_undone() -> None:
    assert shows_stock("T:5C") and shows_stock("A:3:AH+T:5C")  # an AutoPlay run never draws today; if it did
    assert not shows_stock("3:AH") and not shows_stock("A:3:AH+5:2C") and not shows_stock("U")


async def test_undoing_a_draw_on_the_daily_deal_takes_it_off_its_board(
    services: Services, games: SolitaireService, store: FakeStore, clock: FakeClock
) -> None:
    deal = await services.dealer.daily(clock.now.date().isoformat(), "standard", ANN.player_id)
    snap = await games.create_game(ANN, deal.id)
    assert snap.game.unranked is None and deal.rules.undo_policy is UndoPolicy.UNLIMITED
    for i in range(15):
        snap = await games.play_move(ANN, snap.game.id, Draw(), f"d{i}")
    for i in range(15):
        snap = await games.undo(ANN, snap.game.id, f"u{i}")  # the policy allows it: no refusal
        assert snap.game.stock_seen and snap.game.unranked is Unranked.STOCK_SEEN
    assert snap.game.line == [] and snap.game.undos_used == 15
    # Stored, and told again to a retried undo (rebuilt from the log).
    assert store.tables.games[snap.game.id].stock_seen
    assert (await games.undo(ANN, snap.game.id, "u0")).game.stock_seen
    await to_the_end(games, snap.game.id)
    (record,) = store.tables.records
    assert (record.kind, record.rated, record.unranked, record.undos) == (
        RecordKind.GAME,
        False,
        Unranked.STOCK_SEEN,
        15,
    )
    assert (deal_board(deal.id), ANN.player_id) not in store.tables.board_entries
    assert store.tables.deal_stats[deal.id].plays == 1, "the deal's statistics count it"
    # The player's next game on the deal is practice, as any second game is: the flagged game was their first.
    assert (await games.create_game(ANN, deal.id)).game.unranked is Unranked.PRACTICE


async def test_undoing_plays_only_keeps_the_game_ranked(
    services: Services, games: SolitaireService, store: FakeStore, clock: FakeClock
) -> None:
    deal = await services.dealer.daily(clock.now.date().isoformat(), "standard", ANN.player_id)
    snap = await games.create_game(ANN, deal.id)
    played = None
    while played is None:  # a column play the service takes (one that would lose a winnable game is refused)
        for play in snap.state.column_plays():
            try:
                played = await games.play_move(ANN, snap.game.id, play, "p")
                break
            except MoveRefused:
                continue
        else:
            snap = await games.play_move(ANN, snap.game.id, Draw(), f"d{snap.game.version}")
    snap = played
    snap = await games.undo(ANN, snap.game.id, "u-play")
    snap = await games.autoplay(ANN, snap.game.id, "a")
    snap = await games.undo(ANN, snap.game.id, "u-run")  # an AutoPlay run plays column cards only
    assert snap.game.undos_used == 2 and not snap.game.stock_seen and snap.game.unranked is None
    await to_the_end(games, snap.game.id)
    (record,) = store.tables.records
    assert record.rated and record.unranked is None
    entry = store.tables.board_entries[(deal_board(deal.id), ANN.player_id)]
    assert entry.record_id == snap.game.id and entry.assists >= 2


@pytest.mark.parametrize(("policy", "limit"), [(UndoPolicy.UNLIMITED, 0), (UndoPolicy.LIMITED, 1)])
async def test_a_casual_game_keeps_its_presets_undo_policy(
    games: SolitaireService, policy: UndoPolicy, limit: int
) -> None:
    deal = await games.create_deal(ANN, "standard", {"undo_policy": policy, "undo_limit": limit}, pysol_number=2)
    snap = await games.create_game(ANN, deal.id)
    snap = await games.play_move(ANN, snap.game.id, Draw(), "d1")
    snap = await games.play_move(ANN, snap.game.id, Draw(), "d2")
    snap = await games.undo(ANN, snap.game.id, "u1")  # a draw taken back, as the policy allows
    assert len(snap.game.line) == 1 and snap.game.stock_seen
    if policy is UndoPolicy.LIMITED:
        with pytest.raises(MoveRefused) as err:
            await games.undo(ANN, snap.game.id, "u2")
        assert err.value.illegal.reason is Refusal.UNDO_LIMIT_REACHED
    else:
        assert (await games.undo(ANN, snap.game.id, "u2")).game.line == []


async def test_a_round_with_a_draw_undone_is_on_no_rounds_board(
    services: Services, games: SolitaireService, store: FakeStore, clock: FakeClock
) -> None:
    rounds = services.rounds
    snap, hole = await rounds.create_round(ANN, "wrap")
    for n in range(1, 10):
        if n == 3:
            drawn = await games.play_move(ANN, hole.game.id, Draw(), "draw")
            assert not drawn.game.stock_seen
            assert (await games.undo(ANN, hole.game.id, "undo")).game.stock_seen
        clock.advance(3)
        await to_the_end(games, hole.game.id)
        if n < 9:
            snap, hole = await rounds.start_next_hole(ANN, snap.round.id)
    (total,) = [r for r in store.tables.records if r.kind is RecordKind.ROUND]
    assert (total.record_id, total.rated, total.unranked) == (snap.round.id, False, Unranked.STOCK_SEEN)
    assert not [key for key in store.tables.board_entries if key[0].startswith("rounds:")]
    # Its other holes are ranked games, each on its own deal's board.
    holes = [r for r in store.tables.records if r.kind is RecordKind.GAME]
    assert [r.rated for r in holes] == [True, True, False] + [True] * 6


async def test_recording_a_hole_that_showed_the_stock_and_its_round() -> None:
    """The records alone: the flagged hole is in the history, counted in its deal's statistics, on no board; its
    round is in the history and on no ROUNDS board; the other holes are on their deals' boards."""
    store = store_with_players()
    store.tables.rounds["r1"] = RoundRecord(
        "r1", "standard", SolitaireRules(), 9, 45, True, None, MONDAY - timedelta(hours=1), ANN_ID
    )
    for n in range(1, 10):
        await finish(store, game(f"r1-{n}", 4, MONDAY, round_id="r1", hole=n, stock_seen=n == 5))
    by_id = {r.record_id: r for r in store.tables.records}
    assert not by_id["r1-5"].rated and by_id["r1-5"].unranked is Unranked.STOCK_SEEN
    assert not by_id["r1"].rated and by_id["r1"].unranked is Unranked.STOCK_SEEN
    assert store.tables.deal_stats["deal-r1-5"].plays == 1
    boards = {board for board, _ in store.tables.board_entries}
    assert boards == {deal_board(f"deal-r1-{n}") for n in range(1, 10) if n != 5}
    assert rounds_board(9, "standard", Period.ALL_TIME, MONDAY) not in boards


async def test_a_replay_shows_the_game_ranked_until_its_draw_was_undone(
    games: SolitaireService, store: FakeStore
) -> None:
    deal = await games.create_deal(ANN, "standard", {}, pysol_number=2)
    snap = await games.create_game(ANN, deal.id)
    await games.play_move(ANN, snap.game.id, Draw(), "d")
    await games.undo(ANN, snap.game.id, "u")
    await to_the_end(games, snap.game.id)
    final = store.tables.games[snap.game.id]
    log = sorted((m for m in store.tables.moves if m.game_id == final.id), key=lambda m: m.seq)
    steps = list(game_steps(final, deal, log, 0, len(log) + 1))
    assert [s.game.unranked for s in steps[:3]] == [None, None, Unranked.STOCK_SEEN]
    assert all(s.game.stock_seen for s in steps[2:])
