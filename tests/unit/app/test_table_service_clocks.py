"""The table use cases with clocks, over the in-memory store and a clock the tests move: paced bots fall due one
move at a time, turn clocks time out and show their deadline, due times are stored with every write and survive a
restart, a player takes an away seat back, and quick play joins, opens, fills and answers retries."""

from __future__ import annotations

from datetime import timedelta

import pytest

from golf.app.errors import IdempotencyKeyReused, InvalidArgument
from golf.app.identity import Caller
from golf.app.tables import SeatMoved, SeatTimedOut, TableStarted, TableStatus, replay
from golf.app.tables.quick_play import QUICK_PLAY_TURN_SECONDS
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.service import TableService
from golf.engine.cardgolf import Reveal
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore
from tests.unit.app.table_checks import check_view, full_table

ANN, BOB, CAT, DAN = Caller("player-ann"), Caller("player-bob"), Caller("player-cat"), Caller("player-dan")


@pytest.fixture
def tables(store: FakeStore, clock: FakeClock, limiter: FakeLimiter) -> TableService:
    return TableService(store, clock, limiter)


def due_of(store: FakeStore, table_id: str) -> object:
    due = store.tables.table_due.get(table_id)
    return None if due is None else due.due_at


def entries(store: FakeStore, table_id: str) -> list[object]:
    return [e.entry for e in store.tables.table_logs[table_id]]


async def people_and_a_bot(tables: TableService, **clock: int | str) -> TableSnapshot:
    made = await tables.create_table(ANN, "six-card", seats=3, holes=1, **clock)  # type: ignore[arg-type]
    await tables.join(BOB, "bob", table_id=made.table_id)
    await tables.add_bot(ANN, made.table_id, "greedy", "bot")
    return await tables.start(ANN, made.table_id, "go")


# -- paced bots ------------------------------------------------------------------------------------------------
async def test_paced_bots_wait_and_move_one_at_a_time(tables: TableService, store: FakeStore, clock: FakeClock) -> None:
    made = await tables.create_table(ANN, "six-card", seats=3, holes=1, bot_delay_ms=1500)
    await tables.add_bot(ANN, made.table_id, "greedy", "b1")
    await tables.add_bot(ANN, made.table_id, "random", "b2")
    assert due_of(store, made.table_id) is None  # seating, no autofill: nothing due
    started = await tables.start(ANN, made.table_id, "go")
    assert isinstance(entries(store, made.table_id)[-1], TableStarted)  # the start stored alone: the bots wait
    assert set(started.view.awaiting) == {0, 1, 2} and started.view.bot_delay_ms == 1500
    assert started.turn_deadline is None  # no turn clock
    assert due_of(store, made.table_id) == clock.now + timedelta(seconds=1.5)
    clock.advance(1.0)
    assert not await tables.run_due(made.table_id)
    clock.advance(0.5)
    assert await tables.run_due(made.table_id)
    assert entries(store, made.table_id)[-1] == SeatMoved(1, Reveal((0, 1)))
    assert due_of(store, made.table_id) == clock.now + timedelta(seconds=1.5)
    clock.advance(1.5)
    assert await tables.run_due(made.table_id)
    assert due_of(store, made.table_id) is None  # only Ann is awaited now
    mine = await tables.get(ANN, made.table_id)
    assert mine.view.awaiting == (0,)
    check_view(store, mine)


# -- turn clocks -----------------------------------------------------------------------------------------------
async def test_a_turn_clock_times_out_and_its_deadline_is_shown(
    tables: TableService, store: FakeStore, clock: FakeClock
) -> None:
    started = await people_and_a_bot(tables, turn_seconds=30)
    table_id = started.table_id
    deadline = clock.now + timedelta(seconds=30)
    assert started.turn_deadline == deadline and started.view.turn_seconds == 30
    assert due_of(store, table_id) == deadline
    # Bob reveals: the setup clock of Ann's seat does not restart.
    bob = await tables.act(BOB, table_id, Reveal((0, 1)), "bob-reveal")
    assert bob.turn_deadline == deadline and due_of(store, table_id) == deadline
    clock.advance(29)
    assert not await tables.run_due(table_id)
    clock.advance(1)
    assert await tables.run_due(table_id)
    log = entries(store, table_id)
    assert SeatTimedOut(0, Reveal((0, 1))) in log
    ann = await tables.get(ANN, table_id)
    assert ann.view.seats[0].missed == 1 and not ann.view.seats[0].away
    if ann.view.awaiting:
        assert ann.turn_deadline == clock.now + timedelta(seconds=30) == due_of(store, table_id)
    check_view(store, ann)
    # A second run at the same time finds nothing due (another process would lose its append, then find the same).
    version = ann.version
    assert not await tables.run_due(table_id)
    assert full_table(store, table_id).version == version


async def test_due_times_and_deadlines_survive_a_restart(
    tables: TableService, store: FakeStore, clock: FakeClock, limiter: FakeLimiter
) -> None:
    started = await people_and_a_bot(tables, turn_seconds=60)
    clock.advance(20)
    await tables.act(BOB, started.table_id, Reveal((0, 1)), "bob-reveal")
    restarted = TableService(store, clock, limiter)  # a new process: nothing cached
    again = await restarted.get(ANN, started.table_id)
    assert again.turn_deadline == started.turn_deadline
    clock.advance(40)
    assert await restarted.run_due(started.table_id)
    assert SeatTimedOut(0, Reveal((0, 1))) in entries(store, started.table_id)


async def test_an_away_player_takes_the_seat_back_by_acting(
    tables: TableService, store: FakeStore, clock: FakeClock
) -> None:
    started = await people_and_a_bot(tables, turn_seconds=10, missed_turns_limit=1)
    table_id = started.table_id
    await tables.act(BOB, table_id, Reveal((0, 1)), "bob-reveal")
    clock.advance(10)
    assert await tables.run_due(table_id)
    ann = await tables.get(ANN, table_id)
    assert ann.view.seats[0].away and ann.view.seats[0].bot == "greedy" and ann.view.seats[0].missed == 1
    for n in range(20):  # Bob plays whenever it is his turn, until Ann's turn comes
        if 0 in ann.view.awaiting:
            break
        bob = await tables.get(BOB, table_id)
        await tables.act(BOB, table_id, bob.view.legal_moves[0], f"bob-{n}")
        ann = await tables.get(ANN, table_id)
    assert ann.view.awaiting == (0,) and ann.view.legal_moves  # away, but the seat is still Ann's to take back
    assert ann.turn_deadline is not None and ann.turn_deadline - clock.now <= timedelta(seconds=10)
    back = await tables.act(ANN, table_id, ann.view.legal_moves[0], "ann-back")
    assert not back.view.seats[0].away and back.view.seats[0].missed == 0 and back.view.seats[0].bot is None


async def test_the_stored_answer_to_a_retry_has_the_deadline_of_its_time(
    tables: TableService, store: FakeStore, clock: FakeClock
) -> None:
    started = await people_and_a_bot(tables, turn_seconds=30)
    clock.advance(5)
    first = await tables.act(BOB, started.table_id, Reveal((0, 1)), "bob-reveal")
    clock.advance(5)
    retried = await tables.act(BOB, started.table_id, Reveal((0, 1)), "bob-reveal")
    assert retried.replayed and retried.turn_deadline == first.turn_deadline == started.turn_deadline


# -- quick play -------------------------------------------------------------------------------------------------
async def test_quick_play_without_a_wait_starts_at_once(
    tables: TableService, store: FakeStore, limiter: FakeLimiter
) -> None:
    snap = await tables.quick_play(ANN, "six-card", seats=3, idempotency_key="qp")
    assert snap.seat == 0 and snap.view.status is TableStatus.PLAYING and snap.view.legal_moves
    assert [s.bot for s in snap.view.seats] == [None, "greedy", "greedy"]
    assert snap.view.turn_seconds == QUICK_PLAY_TURN_SECONDS and snap.view.listed
    assert snap.turn_deadline is not None and limiter.count("create") == 1
    check_view(store, snap)
    again = await tables.quick_play(ANN, "six-card", seats=3, idempotency_key="qp")
    assert again.replayed and again.table_id == snap.table_id and again.version == snap.version
    assert limiter.count("create") == 1 and len(store.tables.card_tables) == 1
    with pytest.raises(IdempotencyKeyReused):
        await tables.quick_play(ANN, "four-card", idempotency_key="qp")
    with pytest.raises(InvalidArgument) as bad:
        await tables.quick_play(ANN, wait_seconds=601, idempotency_key="qp2")
    assert bad.value.field == "wait"
    with pytest.raises(InvalidArgument) as bad:
        await tables.quick_play(ANN, "no-such-preset", idempotency_key="qp3")
    assert bad.value.field == "preset"


async def test_quick_play_joins_the_oldest_open_table_and_the_last_seat_starts_it(
    tables: TableService, store: FakeStore, clock: FakeClock
) -> None:
    first = await tables.quick_play(ANN, seats=3, wait_seconds=30, idempotency_key="a")
    assert first.view.status is TableStatus.SEATING and first.seat == 0
    assert due_of(store, first.table_id) == clock.now + timedelta(seconds=30)
    clock.advance(1)
    # A private or a plain listed table of the preset is never joined by quick play.
    await tables.create_table(DAN, "six-card", seats=3)
    second = await tables.quick_play(BOB, seats=5, wait_seconds=60, idempotency_key="b")
    assert second.table_id == first.table_id and second.seat == 1  # joined, whatever its seat count
    again = await tables.quick_play(ANN, wait_seconds=60, idempotency_key="other-key")
    assert again.table_id == first.table_id and again.seat == 0  # already seated there: the same table
    third = await tables.quick_play(CAT, wait_seconds=60, idempotency_key="c")
    assert third.table_id == first.table_id and third.view.status is TableStatus.PLAYING  # the last seat
    assert due_of(store, first.table_id) == clock.now + timedelta(seconds=QUICK_PLAY_TURN_SECONDS)
    retried = await tables.quick_play(BOB, seats=5, wait_seconds=60, idempotency_key="b")
    assert retried.replayed and retried.table_id == first.table_id and retried.seat == 1
    # Nothing open any more: the next caller opens a table.
    fourth = await tables.quick_play(DAN, wait_seconds=0, idempotency_key="d")
    assert fourth.table_id != first.table_id and fourth.view.status is TableStatus.PLAYING


async def test_quick_play_fills_the_empty_seats_when_the_wait_is_over(
    tables: TableService, store: FakeStore, clock: FakeClock
) -> None:
    snap = await tables.quick_play(ANN, seats=4, wait_seconds=12.5, idempotency_key="qp")
    await tables.quick_play(BOB, idempotency_key="qp-bob")
    clock.advance(12)
    assert not await tables.run_due(snap.table_id)  # waited in whole seconds, rounded up: 13
    clock.advance(1)
    assert await tables.run_due(snap.table_id)
    filled = await tables.get(ANN, snap.table_id)
    assert filled.view.status is TableStatus.PLAYING
    assert [s.bot for s in filled.view.seats] == [None, None, "greedy", "greedy"]
    assert [s.player_id for s in filled.view.seats[:2]] == [ANN.player_id, BOB.player_id]
    record = store.tables.card_tables[snap.table_id]
    table = replay(record.options, record.seed, entries(store, snap.table_id))  # type: ignore[arg-type]
    assert table.version == filled.version and set(table.awaiting()) == {0, 1}
    assert await tables.list_open() == []
