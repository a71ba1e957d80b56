"""The live table use cases (``golf.app.tables.service``) over the in-memory store: seats, bots that play at once,
idempotent retries, stale versions, who may act, private join codes, whole matches, and views scanned for leaks."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from golf.app.errors import Conflict, IdempotencyKeyReused, InvalidArgument, NotFound, PermissionDenied
from golf.app.identity import Caller
from golf.app.tables import (
    MatchEnd,
    SeatMoved,
    TableMoveRefused,
    TableRefusal,
    TableRefused,
    TableStatus,
)
from golf.app.tables.bots import BOT_BUDGET
from golf.app.tables.read_model import StaleTableVersion, TableSnapshot
from golf.app.tables.service import JOIN_CODE_ALPHABET, TableService
from golf.engine.cardgolf import Discard, DrawStock, Knock, Move, PeekStroke, Refusal, Reveal
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore
from tests.unit.app.table_checks import check_view, full_table

ANN, BOB, CAT = Caller("player-ann"), Caller("player-bob"), Caller("player-cat")


@pytest.fixture
def tables(store: FakeStore, clock: FakeClock, limiter: FakeLimiter) -> TableService:
    return TableService(store, clock, limiter)


def stored_entries(store: FakeStore, table_id: str) -> int:
    return len(store.tables.table_logs[table_id])


def keys() -> Iterator[str]:
    n = 0
    while True:
        n += 1
        yield f"key-{n}"


async def ann_and_two_bots(tables: TableService, holes: int = 1) -> TableSnapshot:
    made = await tables.create_table(ANN, "six-card", seats=3, holes=holes)
    await tables.add_bot(ANN, made.table_id, "greedy", "bot-1")
    await tables.add_bot(ANN, made.table_id, "random", "bot-2")
    return await tables.start(ANN, made.table_id, "start")


# -- creating, joining, bots, starting ------------------------------------------------------------------------
async def test_create_join_fill_with_bots_start_and_bots_play_until_a_person_moves(
    tables: TableService, store: FakeStore, limiter: FakeLimiter
) -> None:
    made = await tables.create_table(ANN, "six-card", seats=4, holes=2)
    assert made.seat == 0 and made.view.status is TableStatus.SEATING and made.version == 1
    assert made.view.listed and made.join_code is None and made.owner_id == ANN.player_id
    assert limiter.count("create") == 1
    assert [t.table_id for t in await tables.list_open("six-card")] == [made.table_id]
    assert await tables.list_open("four-card") == []

    joined = await tables.join(BOB, "bob-join", table_id=made.table_id)
    assert joined.seat == 1 and joined.version == 2
    with pytest.raises(PermissionDenied):
        await tables.add_bot(BOB, made.table_id, "greedy", "bob-bot")
    with pytest.raises(PermissionDenied):
        await tables.start(BOB, made.table_id, "bob-start")
    with pytest.raises(TableRefused) as full:
        await tables.start(ANN, made.table_id, "early")
    assert full.value.reason is TableRefusal.SEATS_EMPTY
    await tables.add_bot(ANN, made.table_id, "greedy", "b1")
    await tables.add_bot(ANN, made.table_id, "strong", "b2")
    started = await tables.start(ANN, made.table_id, "go")
    assert started.view.status is TableStatus.PLAYING
    # The bots chose their start cards in the same write as the start: only people are awaited now.
    table = full_table(store, made.table_id)
    assert table.version == started.version
    assert set(started.view.awaiting) == {0, 1}
    assert all(table.seats[s].human for s in table.awaiting())
    assert started.view.legal_moves and all(isinstance(m, Reveal) for m in started.view.legal_moves)
    log = store.tables.table_logs[made.table_id]
    assert log[-3].idempotency_key == "go" and log[-3].batch == 3
    assert [(type(e.entry), e.entry.seat, e.idempotency_key) for e in log[-2:]] == [  # type: ignore[union-attr]
        (SeatMoved, 2, None),
        (SeatMoved, 3, None),
    ]
    assert await tables.list_open() == []  # started tables are no longer open
    check_view(store, started)


async def test_bad_options_and_keys_are_refused_before_anything_is_stored(
    tables: TableService, store: FakeStore, limiter: FakeLimiter
) -> None:
    with pytest.raises(InvalidArgument) as bad:
        await tables.create_table(ANN, "no-such-preset")
    assert bad.value.field == "preset"
    with pytest.raises(InvalidArgument) as bad:
        await tables.create_table(ANN, seats=9)
    assert bad.value.field == "seats"
    assert store.tables.card_tables == {} and limiter.count("create") == 0
    made = await tables.create_table(ANN, seats=2)
    with pytest.raises(InvalidArgument) as bad:
        await tables.join(BOB, "", table_id=made.table_id)
    assert bad.value.field == "idempotencyKey"
    with pytest.raises(InvalidArgument):
        await tables.add_bot(ANN, made.table_id, "genius", "k")
    with pytest.raises(NotFound):
        await tables.join(BOB, "k", table_id="no-such-table")
    with pytest.raises(NotFound):
        await tables.get(BOB, "no-such-table")
    assert stored_entries(store, made.table_id) == 1


async def test_bots_act_as_soon_as_their_turn_comes(tables: TableService, store: FakeStore) -> None:
    started = await ann_and_two_bots(tables)
    reveal = started.view.legal_moves[0]
    after = await tables.act(ANN, started.table_id, reveal, "reveal", expected_version=started.version)
    # Ann's reveal ended the setup; whoever plays first, the reply comes when Ann's move is awaited again.
    assert after.view.awaiting == (0,) and after.view.legal_moves
    assert all(isinstance(e.entry, SeatMoved) for e in store.tables.table_logs[started.table_id][started.version :])
    check_view(store, after)


# -- moves: legal, illegal, retried, stale ---------------------------------------------------------------------
async def test_illegal_moves_are_refused_and_change_nothing(tables: TableService, store: FakeStore) -> None:
    started = await ann_and_two_bots(tables)
    before = stored_entries(store, started.table_id)
    with pytest.raises(TableMoveRefused) as refused:
        await tables.act(ANN, started.table_id, DrawStock(), "too-soon")
    assert refused.value.illegal.reason is Refusal.WRONG_PHASE
    with pytest.raises(TableMoveRefused) as refused:
        await tables.act(ANN, started.table_id, Reveal((0,)), "one-card")
    assert refused.value.illegal.reason is Refusal.WRONG_REVEAL_COUNT
    assert stored_entries(store, started.table_id) == before
    assert (await tables.get(ANN, started.table_id)).view == started.view
    # A refused key is not spent: the same key may carry a legal move afterwards.
    done = await tables.act(ANN, started.table_id, started.view.legal_moves[0], "too-soon")
    assert not done.replayed and done.version > started.version


async def test_a_retry_returns_the_stored_result_and_stores_once(tables: TableService, store: FakeStore) -> None:
    started = await ann_and_two_bots(tables)
    move = Reveal(tuple(reversed(started.view.legal_moves[0].positions)))  # type: ignore[union-attr]
    first = await tables.act(ANN, started.table_id, move, "k1", expected_version=started.version)
    stored = stored_entries(store, started.table_id)
    again = await tables.act(ANN, started.table_id, move, "k1", expected_version=started.version)
    assert again.replayed and not first.replayed
    assert again.view == first.view and again.version == first.version
    assert stored_entries(store, started.table_id) == stored
    # A fresh service (no cache), as after a restart or on another replica, answers the same.
    other = TableService(store, tables.clock, tables.limiter)
    assert (await other.act(ANN, started.table_id, move, "k1")).view == first.view
    # Once the table moved on, the retry still answers as of its own command.
    second = await tables.act(ANN, started.table_id, first.view.legal_moves[0], "k2")
    late = await tables.act(ANN, started.table_id, move, "k1")
    assert late.replayed and late.view == first.view and second.version > late.version
    assert stored_entries(store, started.table_id) == second.version


async def test_a_key_used_for_another_command_is_refused(tables: TableService, store: FakeStore) -> None:
    started = await ann_and_two_bots(tables)
    first = await tables.act(ANN, started.table_id, started.view.legal_moves[0], "k1")
    stored = stored_entries(store, started.table_id)
    with pytest.raises(IdempotencyKeyReused):
        await tables.act(ANN, started.table_id, first.view.legal_moves[0], "k1")
    with pytest.raises(IdempotencyKeyReused):
        await tables.resign(ANN, started.table_id, "k1")
    with pytest.raises(IdempotencyKeyReused):
        await tables.act(ANN, started.table_id, first.view.legal_moves[0], "start")  # the start's key
    assert stored_entries(store, started.table_id) == stored


async def test_a_stale_expected_version_is_refused_with_the_current_view(
    tables: TableService, store: FakeStore
) -> None:
    started = await ann_and_two_bots(tables)
    moved = await tables.act(ANN, started.table_id, started.view.legal_moves[0], "k1")
    with pytest.raises(StaleTableVersion) as stale:
        await tables.act(ANN, started.table_id, moved.view.legal_moves[0], "k2", expected_version=started.version)
    assert stale.value.current.view == moved.view and stale.value.current.table_id == started.table_id
    assert stored_entries(store, started.table_id) == moved.version
    # Another replica wrote meanwhile: this process's cache is behind, and the store's version check catches it.
    other = TableService(store, tables.clock, tables.limiter)
    await other.act(ANN, started.table_id, moved.view.legal_moves[0], "k3")
    with pytest.raises(StaleTableVersion):
        await tables.act(ANN, started.table_id, moved.view.legal_moves[0], "k4", expected_version=moved.version)
    # Without an expected version the command runs on a fresh read (and is refused or accepted on its own merits).
    now = await tables.get(ANN, started.table_id)
    if now.view.legal_moves:
        assert not (await tables.act(ANN, started.table_id, now.view.legal_moves[0], "k5")).replayed


async def test_a_lost_race_runs_the_command_again_on_a_fresh_read(tables: TableService, store: FakeStore) -> None:
    made = await tables.create_table(ANN, seats=4)
    other = TableService(store, tables.clock, tables.limiter)
    await other.join(BOB, "bob", table_id=made.table_id)  # ``tables`` still caches version 1
    joined = await tables.join(CAT, "cat", table_id=made.table_id)
    assert joined.seat == 2 and joined.version == 3 and not joined.replayed
    with pytest.raises(TableRefused) as taken:
        await tables.join(BOB, "bob-again", table_id=made.table_id)
    assert taken.value.reason is TableRefusal.ALREADY_SEATED


# -- who may act ------------------------------------------------------------------------------------------------
async def test_players_act_only_for_their_own_seat_and_spectators_only_watch(
    tables: TableService, store: FakeStore
) -> None:
    made = await tables.create_table(ANN, seats=3)
    await tables.join(BOB, "bob", table_id=made.table_id)
    await tables.add_bot(ANN, made.table_id, "greedy", "bot")
    started = await tables.start(ANN, made.table_id, "go")
    reveal = started.view.legal_moves[0]
    with pytest.raises(PermissionDenied):
        await tables.act(BOB, made.table_id, reveal, "bob-for-ann", seat=0)
    with pytest.raises(PermissionDenied):
        await tables.act(CAT, made.table_id, reveal, "cat")
    with pytest.raises(PermissionDenied):
        await tables.resign(CAT, made.table_id, "cat-resign")
    with pytest.raises(PermissionDenied):
        await tables.leave(BOB, made.table_id, "bob-frees-bot", seat=2)  # after the start: nobody removes a bot
    assert stored_entries(store, made.table_id) == started.version
    bob = await tables.act(BOB, made.table_id, reveal, "bob-own", seat=1)
    assert bob.seat == 1
    watcher = await tables.get(CAT, made.table_id)
    assert watcher.seat is None and watcher.view.legal_moves == () and watcher.join_code is None
    check_view(store, watcher)
    check_view(store, await tables.get(BOB, made.table_id))


# -- private tables ---------------------------------------------------------------------------------------------
async def test_private_tables_are_joined_with_their_code(tables: TableService, store: FakeStore) -> None:
    made = await tables.create_table(ANN, seats=3, private=True)
    code = made.join_code
    assert code is not None and len(code) == 8 and set(code) <= set(JOIN_CODE_ALPHABET)
    assert not made.view.listed and await tables.list_open() == []
    with pytest.raises(NotFound):
        await tables.get(BOB, made.table_id)  # a private table is not shown to strangers
    # Without its code, nothing a stranger asks of it says it exists.
    with pytest.raises(NotFound):
        await tables.join(BOB, "b", table_id=made.table_id)
    with pytest.raises(NotFound):
        await tables.join(BOB, "b", table_id=made.table_id, join_code="ZZZZZZ")
    for refused in (
        tables.act(BOB, made.table_id, DrawStock(), "m"),
        tables.leave(BOB, made.table_id, "l"),
        tables.resign(BOB, made.table_id, "r"),
        tables.start(BOB, made.table_id, "s"),
        tables.add_bot(BOB, made.table_id, "greedy", "a"),
    ):
        with pytest.raises(NotFound):
            await refused
    with pytest.raises(NotFound):
        await tables.join(BOB, "b", join_code="ZZZZZZ")
    joined = await tables.join(BOB, "b", join_code=code.lower())
    assert joined.table_id == made.table_id and joined.seat == 1 and joined.join_code is None
    assert (await tables.get(BOB, made.table_id)).seat == 1
    assert (await tables.get(CAT, made.table_id, join_code=code)).seat is None
    assert (await tables.find_by_code(CAT, code)).table_id == made.table_id
    assert (await tables.get(ANN, made.table_id)).join_code == code
    assert (await tables.join(CAT, "c", table_id=made.table_id, join_code=code)).seat == 2


async def test_a_join_code_taken_by_an_open_table_is_drawn_again(
    store: FakeStore, clock: FakeClock, limiter: FakeLimiter
) -> None:
    codes = iter(["AAAAAA", "AAAAAA", "BBBBBB"])
    tables = TableService(store, clock, limiter, join_codes=lambda: next(codes))
    first = await tables.create_table(ANN, private=True)
    second = await tables.create_table(BOB, private=True)
    assert (first.join_code, second.join_code) == ("AAAAAA", "BBBBBB")
    stuck = TableService(store, clock, limiter, join_codes=lambda: "AAAAAA")
    with pytest.raises(Conflict):
        await stuck.create_table(CAT, private=True)


async def test_a_retried_create_finds_its_table(tables: TableService, store: FakeStore) -> None:
    made = await tables.create_table(ANN, seats=3, private=True, idempotency_key="create-1")
    again = await tables.create_table(ANN, seats=3, private=True, idempotency_key="create-1")
    assert again.replayed and again.table_id == made.table_id and again.view == made.view
    assert again.join_code == made.join_code and len(store.tables.card_tables) == 1
    with pytest.raises(IdempotencyKeyReused):
        await tables.create_table(ANN, seats=4, private=True, idempotency_key="create-1")
    other = await tables.create_table(BOB, seats=3, private=True, idempotency_key="create-1")
    assert other.table_id != made.table_id  # keys are the player's own


# -- leaving and resigning --------------------------------------------------------------------------------------
async def test_leave_before_the_start_frees_the_seat_and_after_it_resigns(
    tables: TableService, store: FakeStore
) -> None:
    made = await tables.create_table(ANN, seats=3)
    await tables.join(BOB, "bob", table_id=made.table_id)
    bot = await tables.add_bot(ANN, made.table_id, "greedy", "bot")
    assert bot.view.seats[2].bot == "greedy"
    with pytest.raises(PermissionDenied):
        await tables.leave(BOB, made.table_id, "bob-removes-bot", seat=2)
    removed = await tables.leave(ANN, made.table_id, "no-bot", seat=2)
    assert removed.view.seats[2].bot is None
    left = await tables.leave(BOB, made.table_id, "bob-leaves")
    assert left.seat is None and left.view.seats[1].player_id is None
    assert (await tables.leave(BOB, made.table_id, "bob-leaves")).replayed
    await tables.join(BOB, "bob-back", table_id=made.table_id)
    await tables.add_bot(ANN, made.table_id, "random", "bot-2")
    await tables.start(ANN, made.table_id, "go")
    resigned = await tables.leave(BOB, made.table_id, "bob-goes")  # after the start: a resignation
    assert resigned.seat == 1 and resigned.view.seats[1].resigned and resigned.view.seats[1].bot == "greedy"
    assert resigned.view.status is TableStatus.PLAYING
    with pytest.raises(TableRefused) as twice:
        await tables.resign(BOB, made.table_id, "bob-again")
    assert twice.value.reason is TableRefusal.BOT_SEAT
    over = await tables.resign(ANN, made.table_id, "ann-goes")
    assert over.view.status is TableStatus.OVER and over.view.end is MatchEnd.ABANDONED
    assert (await tables.resign(ANN, made.table_id, "ann-goes")).replayed
    check_view(store, over)


# -- whole matches ------------------------------------------------------------------------------------------------
def choose(legal: tuple[Move, ...], rng: random.Random) -> Move:
    """A random legal move, knocking seldom so holes last."""
    plain = [m for m in legal if not isinstance(m, Knock)]
    return rng.choice(plain if plain and rng.random() < 0.9 else list(legal))


@pytest.mark.parametrize("preset", ["six-card", "four-card", "cambio"])
async def test_a_match_against_bots_runs_to_the_end_and_never_leaks(
    tables: TableService, store: FakeStore, preset: str
) -> None:
    rng = random.Random(preset)
    made = await tables.create_table(ANN, preset, seats=3, holes=3)
    await tables.join(BOB, "bob", table_id=made.table_id)
    await tables.add_bot(ANN, made.table_id, "greedy", "bot")
    snap = await tables.start(ANN, made.table_id, "go")
    key = keys()
    players = {ANN.player_id: ANN, BOB.player_id: BOB}
    for _ in range(3000):
        if snap.view.status is TableStatus.OVER:
            break
        seat = rng.choice(snap.view.awaiting)
        caller = players[snap.view.seats[seat].player_id]  # type: ignore[index]
        mine = await tables.get(caller, made.table_id)
        check_view(store, mine)
        assert mine.view.legal_moves
        snap = await tables.act(caller, made.table_id, choose(mine.view.legal_moves, rng), next(key), mine.version)
        check_view(store, snap)
        check_view(store, await tables.get(CAT, made.table_id))
    assert snap.view.status is TableStatus.OVER and snap.view.end is MatchEnd.COMPLETED
    assert len(snap.view.sheet.holes) == 3 and len(snap.view.results) == 3
    assert snap.version == stored_entries(store, made.table_id)
    # A service with an empty cache rebuilds the same table from the log.
    fresh = TableService(store, tables.clock, tables.limiter)
    assert (await fresh.get(ANN, made.table_id)).view == (await tables.get(ANN, made.table_id)).view


async def test_a_table_of_bots_plays_its_match_in_bounded_appends(tables: TableService) -> None:
    made = await tables.create_table(ANN, seats=2, take_seat=False)
    assert made.seat is None and made.version == 0
    await tables.add_bot(ANN, made.table_id, "greedy", "b1")
    await tables.add_bot(ANN, made.table_id, "random", "b2")
    done = await tables.start(ANN, made.table_id, "go")
    # Nobody is a person, but the start's write holds only the bot budget's moves (a request never plays a whole
    # match): the rest is due at once, and each run of the due work appends at most another budget's worth.
    assert done.view.status is TableStatus.PLAYING and done.version == 3 + BOT_BUDGET
    runs = 0
    while (await tables.get(ANN, made.table_id)).view.status is TableStatus.PLAYING:
        before = (await tables.get(ANN, made.table_id)).version
        assert await tables.run_due(made.table_id)
        assert 0 < (await tables.get(ANN, made.table_id)).version - before <= BOT_BUDGET
        runs += 1
    done = await tables.get(ANN, made.table_id)
    assert done.view.end is MatchEnd.COMPLETED and runs > 1
    assert not await tables.run_due(made.table_id)  # nothing is due any more


# -- the strict game (peeks_stay_visible off) ------------------------------------------------------------------
async def test_the_answer_to_a_peek_stroke_shows_the_card_though_a_bot_moved_after_it(
    tables: TableService, store: FakeStore
) -> None:
    """Seed 004's four-card stroke "to look at one of these cards again": the player pays a point, and the answer to
    the peek (which comes once the bot after them has moved) shows the card they looked at again."""
    rules = {"peek_stroke": 1, "peeks_stay_visible": False}
    made = await tables.create_table(ANN, "four-card", rules=rules, seats=2)
    await tables.add_bot(ANN, made.table_id, "greedy", "bot")
    snap = await tables.start(ANN, made.table_id, "go")
    snap = await tables.act(ANN, made.table_id, Reveal((0, 1)), "reveal")
    assert snap.view.hole is not None and snap.view.hole.grids[0][0] is not None  # the peek at the start
    if DrawStock() not in snap.view.legal_moves or PeekStroke(0) not in snap.view.legal_moves:
        pytest.fail(f"ann's turn was expected, not {snap.view.legal_moves}")
    snap = await tables.act(ANN, made.table_id, DrawStock(), "draw")
    snap = await tables.act(ANN, made.table_id, Discard(), "discard")
    assert snap.view.hole is not None and snap.view.hole.grids[0][0] is None, "the strict game: players remember"
    peeked = await tables.act(ANN, made.table_id, PeekStroke(0), "again")
    table = full_table(store, made.table_id, peeked.version)
    assert table.hole is not None and table.hole.turn == 0 and table.hole.strokes[0] == 1  # the bot moved since
    assert peeked.view.hole is not None and peeked.view.hole.grids[0][0] == table.hole.grids[0][0]
    check_view(store, peeked)
