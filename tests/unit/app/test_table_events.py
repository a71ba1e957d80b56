"""Live table events (``golf.app.tables.events``) through the in-process hub (``golf.adapters.table_fanout``) over
the in-memory store: order, nothing twice, resuming after a sequence number (from memory and from the log), each
viewer's own view at each event, private tables, heartbeats, slow subscribers cut off, lost notifications caught
up by the timer, and views shared between subscribers."""

from __future__ import annotations

import asyncio
import random

import pytest

from golf.adapters.table_fanout import TableHub
from golf.app.errors import InvalidArgument, NotFound
from golf.app.identity import Caller
from golf.app.tables import SeatJoined, TableStatus, view_for
from golf.app.tables.events import EventKind, Heartbeat, StreamEnded, TableEvent, TableEvents, Watch
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.service import TableService
from golf.engine.cardgolf import Knock, Move
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore
from tests.unit.app.table_checks import full_table, scan

ANN, BOB, CAT, DAN = Caller("player-ann"), Caller("player-bob"), Caller("player-cat"), Caller("player-dan")
WAIT = 5.0


@pytest.fixture
def hub(store: FakeStore) -> TableHub:
    return TableHub(store, queue_size=64, buffer_size=8, catch_up_seconds=60)


@pytest.fixture
def tables(store: FakeStore, clock: FakeClock, limiter: FakeLimiter, hub: TableHub) -> TableService:
    service = TableService(store, clock, limiter)
    service.publishers.append(hub.publish)
    return service


@pytest.fixture
def events(store: FakeStore, hub: TableHub) -> TableEvents:
    return TableEvents(store, hub, heartbeat_seconds=0.05)


async def anext_item(watch: Watch, seconds: float = WAIT) -> TableEvent | Heartbeat:
    return await asyncio.wait_for(watch.__anext__(), seconds)


async def take_events(watch: Watch, until_seq: int, seconds: float = WAIT) -> list[TableEvent]:
    """Events (heartbeats skipped) until the one with ``until_seq``."""
    got: list[TableEvent] = []
    while not got or got[-1].seq < until_seq:
        item = await anext_item(watch, seconds)
        if isinstance(item, TableEvent):
            got.append(item)
    return got


async def rest_of(watch: Watch) -> list[TableEvent | Heartbeat]:
    """Everything until the stream ends."""
    return [item async for item in watch]


def check_event(store: FakeStore, event: TableEvent, viewer: Caller) -> None:
    """The event's table is the viewer's view of the stored table at the event, for the viewer's seat then, and
    it leaks nothing."""
    table = full_table(store, event.table_id, event.seq)
    seat = table.seat_of(viewer.player_id)
    assert event.snapshot.seat == seat
    assert event.snapshot.view == view_for(table, seat)
    scan(table, seat)
    record = store.tables.card_tables[event.table_id]
    sees_code = viewer.player_id == record.owner_id
    assert event.snapshot.join_code == (record.join_code if sees_code else None)


def choose(legal: tuple[Move, ...], rng: random.Random) -> Move:
    plain = [m for m in legal if not isinstance(m, Knock)]
    return rng.choice(plain if plain and rng.random() < 0.9 else list(legal))


async def ann_against_bots(tables: TableService, bots: int = 2, holes: int = 1, private: bool = False) -> TableSnapshot:
    made = await tables.create_table(ANN, "six-card", seats=bots + 1, holes=holes, private=private)
    for n in range(bots):
        await tables.add_bot(ANN, made.table_id, "greedy", f"bot-{n}")
    return await tables.start(ANN, made.table_id, "start")


async def ann_moves(tables: TableService, snap: TableSnapshot, rng: random.Random, count: int) -> TableSnapshot:
    """Up to ``count`` moves of the people awaited (Ann, Bob), each followed by the bots' turns; fewer if the
    match ends."""
    people = {ANN.player_id: ANN, BOB.player_id: BOB}
    for n in range(count):
        if snap.view.status is not TableStatus.PLAYING:
            break
        player = people[snap.view.seats[rng.choice(snap.view.awaiting)].player_id or ""]
        mine = await tables.get(player, snap.table_id)
        snap = await tables.act(player, snap.table_id, choose(mine.view.legal_moves, rng), f"{snap.version}-{n}")
    return snap


async def test_a_watcher_gets_a_snapshot_then_every_event_once_in_order(
    tables: TableService, events: TableEvents, store: FakeStore
) -> None:
    snap = await ann_against_bots(tables)
    watch = await events.watch(BOB, snap.table_id)
    try:
        first = await anext_item(watch)
        assert isinstance(first, TableEvent) and first.kind is EventKind.SNAPSHOT
        assert first.seq == snap.version and first.snapshot.view == view_for(full_table(store, snap.table_id), None)
        rng = random.Random(1)
        snap = await ann_moves(tables, snap, rng, 6)
        got = await take_events(watch, snap.version)
        assert [e.seq for e in got] == list(range(first.seq + 1, snap.version + 1))
        for event in got:
            check_event(store, event, BOB)
            assert event.kind in (EventKind.MOVED, EventKind.STARTED)
            assert event.move is not None and event.seat is not None
    finally:
        await watch.aclose()


async def test_each_viewer_sees_their_seat_at_each_event_from_the_first(
    tables: TableService, events: TableEvents, store: FakeStore
) -> None:
    made = await tables.create_table(ANN, "six-card", seats=3, holes=1)
    bob = await events.watch(BOB, made.table_id, after_seq=0)
    ann = await events.watch(ANN, made.table_id, after_seq=0)
    try:
        await tables.join(BOB, "bob-joins", made.table_id)
        await tables.add_bot(ANN, made.table_id, "random", "bot")
        snap = await tables.start(ANN, made.table_id, "go")
        snap = await ann_moves(tables, snap, random.Random(2), 3)
        for viewer, watch in ((BOB, bob), (ANN, ann)):
            got = await take_events(watch, snap.version)
            assert [e.seq for e in got] == list(range(1, snap.version + 1))
            for event in got:
                check_event(store, event, viewer)
            kinds = [e.kind for e in got[:4]]
            assert kinds == [EventKind.SEAT_JOINED, EventKind.SEAT_JOINED, EventKind.BOT_ADDED, EventKind.STARTED]
        # Bob watched as a spectator until he sat down at event 2.
        bob_events = await take_events(await events.watch(BOB, made.table_id, after_seq=0), 2)
        assert bob_events[0].snapshot.seat is None and bob_events[1].snapshot.seat == 1
        assert bob_events[1].seat == 1 and bob_events[2 - 1].kind is EventKind.SEAT_JOINED
    finally:
        await bob.aclose()
        await ann.aclose()


async def test_resuming_after_a_sequence_number_gets_the_same_events_from_memory_or_the_log(
    tables: TableService, events: TableEvents, store: FakeStore, hub: TableHub
) -> None:
    snap = await ann_against_bots(tables, bots=3)
    first = await events.watch(ANN, snap.table_id, after_seq=0)
    try:
        snap = await ann_moves(tables, snap, random.Random(3), 12)
        whole = await take_events(first, snap.version)
    finally:
        await first.aclose()
    assert snap.version > hub.buffer_size + 5
    for after in (0, 3, snap.version - 4, snap.version - 1):
        watch = await events.watch(ANN, snap.table_id, after_seq=after)
        try:
            got = await take_events(watch, snap.version)
        finally:
            await watch.aclose()
        assert [e.seq for e in got] == [e.seq for e in whole if e.seq > after]
        assert [e.snapshot.view for e in got] == [e.snapshot.view for e in whole if e.seq > after]
        assert [(e.kind, e.seat, e.move) for e in got] == [(e.kind, e.seat, e.move) for e in whole if e.seq > after]


async def test_a_watcher_up_to_date_gets_a_heartbeat_first_and_then_on_idle(
    tables: TableService, events: TableEvents
) -> None:
    snap = await ann_against_bots(tables)
    watch = await events.watch(ANN, snap.table_id, after_seq=snap.version)
    try:
        assert await anext_item(watch) == Heartbeat(snap.version)
        assert await anext_item(watch, seconds=1.0) == Heartbeat(snap.version)
        snap = await ann_moves(tables, snap, random.Random(4), 1)
        got = await take_events(watch, snap.version)
        assert got[-1].seq == snap.version
        assert await anext_item(watch, seconds=1.0) == Heartbeat(snap.version)
    finally:
        await watch.aclose()


async def test_after_seq_past_the_table_is_refused(tables: TableService, events: TableEvents) -> None:
    snap = await ann_against_bots(tables)
    with pytest.raises(InvalidArgument) as refused:
        await events.watch(ANN, snap.table_id, after_seq=snap.version + 1)
    assert refused.value.field == "afterSeq"
    with pytest.raises(InvalidArgument):
        await events.watch(ANN, snap.table_id, after_seq=-1)
    with pytest.raises(NotFound):
        await events.watch(ANN, "no-such-table")


async def test_a_player_who_joined_through_another_process_may_watch_at_once(
    tables: TableService, events: TableEvents, store: FakeStore, clock: FakeClock, limiter: FakeLimiter
) -> None:
    """Bob joins a private table by its code through another process, whose commit this process's hub has not
    heard of yet (it follows the table for Ann), and watches at once without the code: he is seated, so he may."""
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1, private=True)
    ann = await events.watch(ANN, made.table_id)
    try:
        assert isinstance(await anext_item(ann), TableEvent)
        elsewhere = TableService(store, clock, limiter)  # another process: no publisher to this hub
        assert made.join_code is not None
        joined = await elsewhere.join(BOB, "bob", join_code=made.join_code)
        bob = await events.watch(BOB, made.table_id)
        try:
            first = await anext_item(bob)
            assert isinstance(first, TableEvent) and first.seq == joined.version and first.snapshot.seat == 1
        finally:
            await bob.aclose()
        with pytest.raises(NotFound):
            await events.watch(CAT, made.table_id)  # a stranger still is refused
    finally:
        await ann.aclose()


async def test_private_tables_are_watched_by_their_people_or_with_the_code(
    tables: TableService, events: TableEvents, store: FakeStore, hub: TableHub
) -> None:
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1, private=True)
    assert made.join_code is not None
    with pytest.raises(NotFound):
        await events.watch(CAT, made.table_id)
    with pytest.raises(NotFound):
        await events.watch(CAT, made.table_id, join_code="WRONG")
    assert hub.subscribers == 0
    cat = await events.watch(CAT, made.table_id, join_code=made.join_code.lower())
    ann = await events.watch(ANN, made.table_id)
    try:
        cat_first, ann_first = await anext_item(cat), await anext_item(ann)
        assert isinstance(cat_first, TableEvent) and isinstance(ann_first, TableEvent)
        assert cat_first.snapshot.join_code is None and ann_first.snapshot.join_code == made.join_code
        await tables.join(BOB, "bob", join_code=made.join_code)
        for viewer, watch in ((CAT, cat), (ANN, ann)):
            (joined,) = await take_events(watch, 2)
            assert joined.kind is EventKind.SEAT_JOINED and joined.seat == 1
            check_event(store, joined, viewer)
    finally:
        await cat.aclose()
        await ann.aclose()
    # Bob, seated, needs no code; once he leaves he sees his leaving, then the stream ends.
    bob = await events.watch(BOB, made.table_id, after_seq=2)
    try:
        assert await anext_item(bob) == Heartbeat(2)
        await tables.leave(BOB, made.table_id, "bob-leaves")
        rest = [item for item in await rest_of(bob) if isinstance(item, TableEvent)]
        assert [(e.seq, e.kind, e.snapshot.seat) for e in rest] == [(3, EventKind.SEAT_LEFT, None)]
    finally:
        await bob.aclose()
    with pytest.raises(NotFound):
        await events.watch(BOB, made.table_id)


async def test_the_stream_ends_with_the_match_and_a_finished_table_gives_what_is_left(
    tables: TableService, events: TableEvents, store: FakeStore
) -> None:
    snap = await ann_against_bots(tables, bots=1)
    watch = await events.watch(ANN, snap.table_id, after_seq=snap.version)
    rng = random.Random(5)
    try:
        while snap.view.status is TableStatus.PLAYING:
            snap = await ann_moves(tables, snap, rng, 1)
        items = await asyncio.wait_for(rest_of(watch), WAIT)
    finally:
        await watch.aclose()
    got = [i for i in items if isinstance(i, TableEvent)]
    assert got[-1].seq == snap.version and got[-1].snapshot.view.status is TableStatus.OVER
    assert [e.seq for e in got] == sorted({e.seq for e in got})
    # Over: a watcher with everything gets nothing (not even a heartbeat); one without gets the snapshot only.
    done = await events.watch(ANN, snap.table_id, after_seq=snap.version)
    assert await asyncio.wait_for(rest_of(done), WAIT) == []
    await done.aclose()
    late = await events.watch(BOB, snap.table_id)
    (only,) = await asyncio.wait_for(rest_of(late), WAIT)
    await late.aclose()
    assert isinstance(only, TableEvent) and only.kind is EventKind.SNAPSHOT and only.seq == snap.version
    check_event(store, only, BOB)


async def test_a_subscriber_that_does_not_read_is_cut_off_and_resumes_without_loss(
    store: FakeStore, clock: FakeClock, limiter: FakeLimiter
) -> None:
    hub = TableHub(store, queue_size=3, catch_up_seconds=60)
    tables = TableService(store, clock, limiter)
    tables.publishers.append(hub.publish)
    events = TableEvents(store, hub, heartbeat_seconds=10)
    snap = await ann_against_bots(tables)
    slow = await events.watch(BOB, snap.table_id, after_seq=snap.version)
    fast = await events.watch(CAT, snap.table_id, after_seq=snap.version)
    assert hub.subscribers == 2
    try:
        assert await anext_item(slow) == Heartbeat(snap.version)
        seen = snap.version
        rng = random.Random(6)
        for _ in range(6):  # each move is a commit: one batch in each queue
            snap = await ann_moves(tables, snap, rng, 1)
            await take_events(fast, snap.version)  # the fast one keeps up
        with pytest.raises(StreamEnded) as cut:
            await anext_item(slow)
        assert "did not keep up" in cut.value.message
        assert hub.subscribers == 1
    finally:
        await slow.aclose()
        await fast.aclose()
    assert hub.subscribers == 0
    again = await events.watch(BOB, snap.table_id, after_seq=seen)
    try:
        got = await take_events(again, snap.version)
    finally:
        await again.aclose()
    assert [e.seq for e in got] == list(range(seen + 1, snap.version + 1))


async def test_commits_of_many_entries_reach_a_watcher_of_a_small_queue(
    store: FakeStore, clock: FakeClock, limiter: FakeLimiter
) -> None:
    """The queue bound counts commits, not entries: a table of bots plays in commits of dozens of moves (the
    start, then the table clock's runs), and a watcher whose queue holds two commits misses none of them."""
    hub = TableHub(store, queue_size=2, catch_up_seconds=60)
    tables = TableService(store, clock, limiter)
    tables.publishers.append(hub.publish)
    events = TableEvents(store, hub)
    made = await tables.create_table(ANN, "six-card", seats=3, holes=2, take_seat=False)
    for n in range(3):
        await tables.add_bot(ANN, made.table_id, "random", f"bot-{n}")
    watch = await events.watch(DAN, made.table_id, after_seq=3)
    got: list[TableEvent] = []
    try:
        snap = await tables.start(ANN, made.table_id, "go")
        assert snap.version - 3 > 2 * hub.queue_size  # one commit of more events than the queue has room for
        while True:
            got += await take_events(watch, snap.version)
            if snap.view.status is TableStatus.OVER:
                break
            assert await tables.run_due(made.table_id)  # the bot moves past one commit's budget: due at once
            snap = await tables.get(DAN, made.table_id)
        assert await asyncio.wait_for(rest_of(watch), WAIT) == []  # the match is over: the stream ends
    finally:
        await watch.aclose()
    assert [e.seq for e in got] == list(range(4, snap.version + 1)) and snap.version > 50
    for event in got[:: max(1, len(got) // 10)]:
        check_event(store, event, DAN)


async def test_a_lost_notification_is_caught_up_by_the_timer(
    store: FakeStore, clock: FakeClock, limiter: FakeLimiter
) -> None:
    hub = TableHub(store, catch_up_seconds=0.05)
    tables = TableService(store, clock, limiter)  # not wired to the hub: every notification is lost
    events = TableEvents(store, hub, heartbeat_seconds=10)
    hub.start()
    try:
        snap = await ann_against_bots(tables)
        watch = await events.watch(BOB, snap.table_id, after_seq=snap.version)
        try:
            assert await anext_item(watch) == Heartbeat(snap.version)
            start = snap.version
            snap = await ann_moves(tables, snap, random.Random(7), 2)
            got = await take_events(watch, snap.version, seconds=2.0)
            assert [e.seq for e in got] == list(range(start + 1, snap.version + 1))
            assert hub.caught_up >= 1
        finally:
            await watch.aclose()
    finally:
        await hub.close()


async def test_subscribers_with_the_same_view_share_one_event_object(
    tables: TableService, events: TableEvents, store: FakeStore
) -> None:
    snap = await ann_against_bots(tables)
    watches = [await events.watch(Caller(f"spectator-{n}"), snap.table_id, after_seq=snap.version) for n in range(5)]
    ann = await events.watch(ANN, snap.table_id, after_seq=snap.version)
    try:
        snap = await ann_moves(tables, snap, random.Random(8), 2)
        got = [await take_events(w, snap.version) for w in watches]
        mine = await take_events(ann, snap.version)
        for n in range(len(got[0])):
            assert all(g[n] is got[0][n] for g in got)  # one view, made once, for every spectator
            assert mine[n] is not got[0][n] and mine[n].snapshot.seat == 0
        # The snapshot of a table as it stands is shared too, until it moves on.
        one = await events.watch(Caller("late-1"), snap.table_id)
        two = await events.watch(Caller("late-2"), snap.table_id)
        a, b = await anext_item(one), await anext_item(two)
        assert a is b
        await one.aclose()
        await two.aclose()
    finally:
        for w in [*watches, ann]:
            await w.aclose()


async def test_closing_the_hub_ends_every_stream(tables: TableService, events: TableEvents, hub: TableHub) -> None:
    snap = await ann_against_bots(tables)
    watch = await events.watch(BOB, snap.table_id, after_seq=snap.version)
    assert await anext_item(watch) == Heartbeat(snap.version)
    await hub.close()
    with pytest.raises(StreamEnded):
        await anext_item(watch)
    await watch.aclose()
    assert hub.subscribers == 0
    with pytest.raises(StreamEnded):
        await events.watch(BOB, snap.table_id)


async def test_many_wake_ups_read_the_log_once_and_nothing_twice(
    tables: TableService, events: TableEvents, store: FakeStore, hub: TableHub
) -> None:
    snap = await ann_against_bots(tables)
    watch = await events.watch(BOB, snap.table_id, after_seq=snap.version)
    try:
        start = snap.version
        snap = await ann_moves(tables, snap, random.Random(9), 3)
        for _ in range(20):  # repeated and stale notifications, and the timer, all at once
            hub.wake(snap.table_id, snap.version)
            hub.wake(snap.table_id, start)
            hub.wake(snap.table_id)
        await hub.catch_up()
        got = await take_events(watch, snap.version)
        assert [e.seq for e in got] == list(range(start + 1, snap.version + 1))
        item = await anext_item(watch, seconds=1.0)
        assert item == Heartbeat(snap.version)
    finally:
        await watch.aclose()


async def test_events_of_a_join_carry_no_secret(tables: TableService, events: TableEvents, store: FakeStore) -> None:
    """Every event of a whole match with a person, as each of three viewers sees it, passes the leak scan."""
    made = await tables.create_table(ANN, "six-card", seats=3, holes=2)
    watches = {c: await events.watch(c, made.table_id, after_seq=0) for c in (ANN, BOB, CAT)}
    # Read while the match is played, as a client does (one that stops reading is cut off after a queue of commits).
    reading = {c: asyncio.create_task(rest_of(watch)) for c, watch in watches.items()}
    try:
        await tables.join(BOB, "bob", made.table_id)
        await tables.add_bot(ANN, made.table_id, "strong", "bot")
        snap = await tables.start(ANN, made.table_id, "go")
        rng = random.Random(10)
        players = {ANN.player_id: ANN, BOB.player_id: BOB}
        n = 0
        while snap.view.status is TableStatus.PLAYING:
            seat = rng.choice(snap.view.awaiting)
            player = players[snap.view.seats[seat].player_id or ""]
            mine = await tables.get(player, made.table_id)
            snap = await tables.act(player, made.table_id, choose(mine.view.legal_moves, rng), f"m{n}")
            await asyncio.sleep(0)  # the in-memory store never waits: give the readers their turn, as I/O would
            n += 1
        for viewer in watches:
            got = [i for i in await asyncio.wait_for(reading[viewer], WAIT) if isinstance(i, TableEvent)]
            assert [e.seq for e in got] == list(range(1, snap.version + 1))
            for event in got:
                check_event(store, event, viewer)
            assert isinstance(store.tables.table_logs[made.table_id][1].entry, SeatJoined)
    finally:
        for watch in watches.values():
            await watch.aclose()


async def test_a_timeout_of_the_turn_clock_is_an_event_and_deadlines_are_those_get_gives(
    tables: TableService, events: TableEvents, store: FakeStore, clock: FakeClock
) -> None:
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1, turn_seconds=30)
    await tables.add_bot(ANN, made.table_id, "greedy", "bot")
    snap = await tables.start(ANN, made.table_id, "go")
    bob = await events.watch(BOB, made.table_id, after_seq=snap.version)
    ann = await events.watch(ANN, made.table_id)
    try:
        first = await anext_item(ann)
        assert isinstance(first, TableEvent) and first.kind is EventKind.SNAPSHOT
        deadline = (await tables.get(ANN, made.table_id)).turn_deadline
        assert deadline is not None and first.snapshot.turn_deadline == deadline
        clock.advance(31)
        assert await tables.run_due(made.table_id)
        now = await tables.get(BOB, made.table_id)
        for viewer, watch in ((BOB, bob), (ANN, ann)):
            got = await take_events(watch, now.version)
            timed = [e for e in got if e.kind is EventKind.TIMED_OUT]
            assert timed and timed[0].seat == 0 and timed[0].move is not None
            for event in got:
                check_event(store, event, viewer)
            assert got[-1].snapshot.turn_deadline == now.turn_deadline
    finally:
        await bob.aclose()
        await ann.aclose()


def test_the_rpc_table_takes_a_stream_handler_for_watch_table_and_only_for_it(events: TableEvents) -> None:
    from golf.api.rpc import Rpc, streaming
    from golf.api.table_watch import SERVICE, watch_rpcs
    from golf.v1 import table_service_pb2 as tpb

    (row,) = watch_rpcs(events)
    assert row.stream is not None and row.http_method == "GET" and row.http_path == "/v1/tables/{tableId}/events"
    assert (
        row.resume_from == "afterSeq"
        and row.event_name("event") == "table"
        and row.event_name("heartbeat") == ("heartbeat")
    )
    with pytest.raises(ValueError, match="server-streaming"):
        Rpc(SERVICE, "WatchTable", tpb.WatchTableRequest, tpb.WatchTableResponse, row.handler)
    with pytest.raises(ValueError, match="server-streaming"):
        streaming(SERVICE, "GetTable", tpb.GetTableRequest, tpb.GetTableResponse, row.stream)
