"""Turn clocks, paced bots, away seats and autofill in the pure table aggregate (``golf.app.tables.clocks``): the
timeout action is always legal and decided from the seat's view; missed turns count turns, not moves; away and
resign after N; replay gives the same table; due times; the stored text of the new options and entry."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from golf.app.errors import InvalidArgument
from golf.app.tables import (
    AWAY_GRACE_SECONDS,
    Applied,
    BotAdded,
    Entry,
    SeatMoved,
    SeatResigned,
    SeatTimedOut,
    Table,
    TableOptions,
    TableRefusal,
    TableRefused,
    TableStarted,
    TableStatus,
    act,
    add_bot,
    apply_entry,
    away_grace,
    due_at,
    due_work,
    immediate_bots,
    join,
    new_table,
    replay,
    start,
    timeout_move,
    turn_deadline,
    view_for,
)
from golf.app.tables.records import TableRecordError, decode_entry, decode_options, encode_entry, encode_options
from golf.engine.cardgolf import PRESETS, Discard, DrawDiscard, DrawStock, Knock, Move, Phase, Reveal, Source, Swap
from golf.engine.cardgolf.moves import Flip, Pass, PeekStroke, UsePower
from golf.engine.cardgolf.view import view
from tests.unit.app.table_checks import scan

SEED = "clock-test-seed-41c2"
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def opts(preset: str = "six-card", seats: int = 3, holes: int = 2, **kw: Any) -> TableOptions:
    return TableOptions.build(preset, seats=seats, holes=holes, **kw)


@dataclass
class Timeline:
    """A table and when each of its entries was written, as a store keeps them (``times[0]``: the creation)."""

    table: Table
    log: list[Entry] = field(default_factory=list)
    times: dict[int, datetime] = field(default_factory=lambda: {0: T0})

    @classmethod
    def seated(cls, options: TableOptions, people: int, bots: int = 0, started: bool = True) -> Timeline:
        line = cls(new_table(options, SEED))
        for n in range(people):
            line.write(join(line.table, f"player-{n}", n), T0)
        for n in range(bots):
            line.write(add_bot(line.table, "greedy", people + n), T0)
        if started:
            begun = start(line.table)
            moved = immediate_bots(begun.table)
            line.write(Applied(moved.table, begun.entries + moved.entries), T0)
        return line

    def write(self, applied: Applied, when: datetime) -> None:
        for entry in applied.entries:
            self.log.append(entry)
            self.times[len(self.log)] = when
        assert applied.table.version == len(self.log)
        self.table = applied.table

    @property
    def since(self) -> datetime:
        return self.times[self.table.wait_from]

    @property
    def last(self) -> datetime:
        return self.times[self.table.version]

    def due(self) -> datetime | None:
        return due_at(self.table, self.since, self.last)

    def deadline(self) -> datetime | None:
        return turn_deadline(self.table, self.since, self.last)

    def run(self, now: datetime) -> tuple[Entry, ...]:
        work = due_work(self.table, self.since, self.last, now)
        self.write(work, now)
        return work.entries

    def act(self, seat: int, move: Move, when: datetime) -> None:
        applied = act(self.table, seat, move)
        bots = immediate_bots(applied.table)
        self.write(Applied(bots.table, applied.entries + bots.entries), when)


# -- options -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kw", "field_name"),
    [
        ({"turn_seconds": 4}, "turnClock.turnTime"),
        ({"turn_seconds": 30 * 24 * 3600 + 1}, "turnClock.turnTime"),
        ({"turn_seconds": True}, "turnClock.turnTime"),
        ({"missed_turns_limit": 0}, "turnClock.missedTurnsLimit"),
        ({"missed_turns_limit": 101}, "turnClock.missedTurnsLimit"),
        ({"missed_action": "nap"}, "turnClock.action"),
        ({"bot_delay_ms": -1}, "botDelay"),
        ({"bot_delay_ms": 30_001}, "botDelay"),
        ({"autofill_seconds": 601}, "wait"),
        ({"autofill_seconds": -1}, "wait"),
    ],
)
def test_timing_options_are_validated_naming_the_request_field(kw: dict[str, Any], field_name: str) -> None:
    with pytest.raises(InvalidArgument) as bad:
        opts(**kw)
    assert bad.value.field == field_name


def test_timing_options_at_their_limits() -> None:
    o = opts(turn_seconds=5, missed_turns_limit=1, missed_action="resign", bot_delay_ms=0, autofill_seconds=0)
    assert o.clocked and o.turn_seconds == 5 and o.missed_action == "resign"
    assert opts(turn_seconds=30 * 24 * 3600, missed_turns_limit=100, bot_delay_ms=30_000).clocked
    assert not opts().clocked and opts(bot_delay_ms=1).clocked and opts(autofill_seconds=0).clocked
    assert away_grace(opts(turn_seconds=5)) == timedelta(seconds=5)
    assert away_grace(opts(turn_seconds=3600)) == timedelta(seconds=AWAY_GRACE_SECONDS)


# -- the timeout action ------------------------------------------------------------------------------------------
@given(preset=st.sampled_from(sorted(PRESETS)), seats=st.integers(2, 5), seed=st.integers(0, 10**6))
@example(preset="powers", seats=2, seed=411)  # a face-up place a power emptied, while a discard is swapped in
@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_timeout_action_is_always_legal_and_safe(preset: str, seats: int, seed: int) -> None:
    """Random playouts where every seat is a person and half the moves are timeouts: at every position the timeout
    action is one of the seat's legal moves, never a knock, a peek stroke or a power, and it follows its rules."""
    rng = random.Random(seed)
    try:
        options = opts(preset, seats=seats, holes=2, turn_seconds=30)
    except InvalidArgument:
        return  # more seats than the preset's decks deal
    line = Timeline.seated(options, seats)
    for _ in range(600):
        table = line.table
        if table.status is not TableStatus.PLAYING:
            break
        seat = rng.choice(table.awaiting())
        hole = table.hole
        assert hole is not None
        seen = view(hole, seat)
        move = timeout_move(seen)
        assert move in seen.legal_moves
        # What the seat cannot see (the stock's order) changes nothing.
        assert timeout_move(view(replace(hole, stock=tuple(reversed(hole.stock))), seat)) == move
        assert not isinstance(move, Knock | PeekStroke | UsePower)
        if seen.phase is Phase.SETUP:
            assert move == seen.legal_moves[0]
        elif seen.phase is Phase.DRAW:
            assert move == (DrawStock() if seen.stock_count else DrawDiscard())
        elif seen.phase is Phase.PLACE and seen.held_from is Source.STOCK:
            assert move == Discard()
        elif seen.phase is Phase.PLACE and Discard() not in seen.legal_moves:
            assert isinstance(move, Swap)
            # Face-up cards it may swap: a place a power emptied is face up with no card, and cannot be swapped.
            up = [p for p, u in enumerate(seen.face_up[seat]) if u and Swap(p) in seen.legal_moves]
            if up:
                worth = [seen.rules.card_value(c) for p, c in enumerate(seen.grids[seat]) if p in up and c]
                card = seen.grids[seat][move.position]
                assert move.position in up and card is not None and seen.rules.card_value(card) == max(worth)
        elif seen.phase is Phase.FLIP:
            flips = sorted(m.position for m in seen.legal_moves if isinstance(m, Flip))
            assert move == (Pass() if Pass() in seen.legal_moves else Flip(flips[0]))
        if rng.random() < 0.5:
            line.write(Applied(apply_entry(table, SeatTimedOut(seat, move)), (SeatTimedOut(seat, move),)), T0)
        else:
            other = rng.choice(seen.legal_moves)
            line.write(Applied(apply_entry(table, SeatMoved(seat, other)), (SeatMoved(seat, other),)), T0)
    assert replay(line.table.options, SEED, line.log) == line.table


def test_the_timeout_action_is_decided_from_the_seat_view_alone() -> None:
    """Two positions that differ only in cards the seat cannot see give the same timeout action."""
    line = Timeline.seated(opts(turn_seconds=30), 3)
    table = line.table
    hole = table.hole
    assert hole is not None
    seat = table.awaiting()[0]
    hidden = replace(hole, stock=tuple(reversed(hole.stock)))
    assert timeout_move(view(hole, seat)) == timeout_move(view(hidden, seat)) == Reveal((0, 1))


def test_a_timeout_for_a_bot_seat_or_outside_play_is_refused() -> None:
    line = Timeline.seated(opts(turn_seconds=30), 2, bots=1)
    with pytest.raises(TableRefused) as refused:
        apply_entry(line.table, SeatTimedOut(2, Reveal((0, 1))))
    assert refused.value.reason is TableRefusal.BOT_SEAT
    seating = Timeline.seated(opts(turn_seconds=30), 2, started=False)
    with pytest.raises(TableRefused):
        apply_entry(seating.table, SeatTimedOut(0, Reveal((0, 1))))


# -- missed turns, away, resign ----------------------------------------------------------------------------------
def test_a_turn_clock_times_out_whole_turns_counts_them_and_hands_the_seat_to_a_bot() -> None:
    """Nobody acts: every due run finishes the awaited turns with the timeout action (several entries a turn count
    one missed turn); at the limit the seat is away and then its turns wait only the short grace for the player; the
    player's own move brings them back. The table rebuilt from its log is the same table."""
    line = Timeline.seated(opts(turn_seconds=30, missed_turns_limit=2), 2, bots=1)
    assert line.table.awaiting() == (0, 1)  # setup: both people, the bot revealed at once
    assert line.due() == line.deadline() == at(30)
    assert line.run(at(29)) == ()  # not yet
    done = line.run(at(30))
    assert done == (SeatTimedOut(0, Reveal((0, 1))), SeatTimedOut(1, Reveal((0, 1))))
    assert [s.missed for s in line.table.seats[:2]] == [1, 1]
    for _ in range(12):  # the turns go round: each person's next turn times out too, until both are away
        due = line.due()
        assert due is not None
        entries = line.run(due)
        assert entries and all(isinstance(e, SeatTimedOut | SeatMoved) for e in entries)
        if all(s.away for s in line.table.seats[:2]):
            break
    seats = line.table.seats
    assert seats[0].away and seats[1].away and seats[0].missed >= 2 and seats[1].missed >= 2
    assert view_for(line.table, None).seats[0].bot == "greedy" and view_for(line.table, None).seats[0].away
    # An away seat's turn waits the grace (10 s here), not the clock; the player still sees their moves.
    mover = line.table.awaiting()[0]
    assert line.due() == line.last + timedelta(seconds=AWAY_GRACE_SECONDS) == line.deadline()
    assert view_for(line.table, mover).legal_moves
    scan(line.table, mover)
    due = line.due()
    assert due is not None
    entries = line.run(due)  # the grace ran out: the bot plays the whole turn, as timeouts
    assert entries and all(isinstance(e, SeatTimedOut) for e in entries[:1])
    # The player takes the seat back by acting within the grace.
    mover = line.table.awaiting()[0]
    hole = line.table.hole
    assert hole is not None and line.table.seats[mover].away
    line.act(mover, view(hole, mover).legal_moves[0], line.last + timedelta(seconds=5))
    assert not line.table.seats[mover].away and line.table.seats[mover].missed == 0
    assert replay(line.table.options, SEED, line.log) == line.table


def test_a_draw_does_not_restart_the_turn_clock() -> None:
    line = Timeline.seated(opts(seats=2, turn_seconds=30), 2)
    line.act(1, Reveal((0, 1)), at(1))
    line.act(0, Reveal((0, 1)), at(2))
    (mover,) = line.table.awaiting()
    assert line.since == at(2) and line.due() == at(32)
    line.act(mover, DrawStock(), at(10))
    assert line.since == at(2) and line.due() == line.deadline() == at(32)
    line.act(mover, Discard(), at(20))
    assert line.since == at(20) and line.due() == at(50)


def test_a_seat_resigns_after_the_limit_when_the_table_says_so() -> None:
    line = Timeline.seated(opts(turn_seconds=10, missed_turns_limit=2, missed_action="resign"), 2, bots=1)
    steps = 0
    while line.table.seats[0].human:  # seat 1 plays its own moves; seat 0 never does
        steps += 1
        assert steps < 50
        if 1 in line.table.awaiting():
            hole = line.table.hole
            assert hole is not None
            line.act(1, timeout_move(view(hole, 1)), line.last + timedelta(seconds=1))
            continue
        due = line.due()
        assert due is not None
        line.run(due)
    seat = line.table.seats[0]
    assert seat.resigned and seat.bot == "greedy" and not seat.away and seat.missed == 2
    assert line.log.count(SeatResigned(0)) == 1
    assert isinstance(line.log[line.log.index(SeatResigned(0)) - 1], SeatTimedOut)
    assert replay(line.table.options, SEED, line.log) == line.table


def test_the_last_person_resigning_by_the_clock_ends_the_match() -> None:
    line = Timeline.seated(opts(seats=2, turn_seconds=10, missed_turns_limit=1, missed_action="resign"), 1, bots=1)
    due = line.due()
    assert due is not None
    entries = line.run(due)
    assert entries[-1] == SeatResigned(0)
    assert line.table.status is TableStatus.OVER and line.due() is None


# -- due times -----------------------------------------------------------------------------------------------------
def test_nothing_is_due_at_a_table_without_clocks() -> None:
    line = Timeline.seated(opts(), 2, bots=1)
    assert line.due() is None and line.deadline() is None and line.run(at(10**6)) == ()


def test_paced_bots_move_one_at_a_time() -> None:
    line = Timeline.seated(opts(bot_delay_ms=1500), 1, bots=2)
    assert [isinstance(e, TableStarted) for e in line.log[-1:]] == [True]  # the start stored alone: bots wait
    assert line.due() == at(1.5) and line.deadline() is None
    assert line.run(at(1.4)) == ()
    assert line.run(at(1.5)) == (SeatMoved(1, Reveal((0, 1))),)
    assert line.due() == at(3.0)
    assert line.run(at(3.0)) == (SeatMoved(2, Reveal((0, 1))),)
    assert line.due() is None  # only the person is awaited, and there is no clock
    line.act(0, Reveal((0, 1)), at(60))
    while line.table.status is TableStatus.PLAYING and 0 not in line.table.awaiting():
        due = line.due()
        assert due is not None and due == line.last + timedelta(seconds=1.5)
        assert len(line.run(due)) == 1
    assert replay(line.table.options, SEED, line.log) == line.table


def test_autofill_fills_the_empty_seats_with_greedy_bots_and_starts() -> None:
    line = Timeline.seated(opts(seats=4, autofill_seconds=30), 1, started=False)
    assert line.due() == at(30)
    assert line.run(at(29.9)) == ()
    entries = line.run(at(30))
    assert entries[:4] == (BotAdded(1, "greedy"), BotAdded(2, "greedy"), BotAdded(3, "greedy"), TableStarted())
    assert line.table.status is TableStatus.PLAYING and line.table.awaiting() == (0,)  # the bots revealed at once
    assert line.due() is None


def test_autofill_waits_for_a_person() -> None:
    line = Timeline(new_table(opts(seats=3, autofill_seconds=5), SEED))
    assert line.due() is None
    line.write(join(line.table, "ann", 2), at(50))
    assert line.due() == at(5)  # counted from the table's creation: due at once now
    assert TableStarted() in line.run(at(50)) and line.table.status is TableStatus.PLAYING


def test_the_setup_clock_runs_from_the_deal_for_every_seat_not_ready() -> None:
    line = Timeline.seated(opts(turn_seconds=20), 3)
    line.act(1, Reveal((0, 1)), at(15))
    assert line.since == T0 and line.due() == at(20)  # seat 1's reveal does not restart the others' clock
    entries = line.run(at(20))
    assert {e.seat for e in entries if isinstance(e, SeatTimedOut)} == {0, 2}
    assert line.table.seats[1].missed == 0 and line.since == at(20)


def test_a_mixed_table_due_time_is_the_earliest_of_its_clocks() -> None:
    line = Timeline.seated(opts(seats=2, turn_seconds=60, bot_delay_ms=2000), 1, bots=1)
    assert line.due() == at(2) and line.deadline() == at(60)


# -- stored text ---------------------------------------------------------------------------------------------------
def _compact(text: str) -> str:
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))


def test_the_timeout_entry_text_is_pinned() -> None:
    entry = SeatTimedOut(1, DrawStock())
    text = '{"move":"stock","seat":1,"type":"timeout","v":1}'
    assert encode_entry(entry) == text and decode_entry(text) == entry
    for move in (Reveal((0, 1)), Discard(), Swap(4), Pass(), Flip(2)):
        assert decode_entry(encode_entry(SeatTimedOut(0, move))) == SeatTimedOut(0, move)
    for bad in ('{"seat":1,"type":"timeout","v":1}', '{"move":"stock","type":"timeout","v":1}'):
        with pytest.raises(TableRecordError):
            decode_entry(bad)


def test_the_options_text_with_clocks_is_pinned() -> None:
    options = opts("six-card", seats=4, holes=9, turn_seconds=90, missed_turns_limit=2, missed_action="resign",
                   bot_delay_ms=1500, autofill_seconds=20)  # fmt: skip
    rules = _compact(options.rules.canonical())
    text = (
        '{"autofill_seconds":20,"bot_delay_ms":1500,"join_code":null,"missed_action":"resign",'
        f'"missed_turns_limit":2,"preset":"six-card","rules":{rules},"seats":4,"turn_seconds":90,"v":1}}'
    )
    assert encode_options(options) == text and decode_options(text) == options
    plain = opts("six-card", seats=4, holes=9)
    assert encode_options(plain) == (
        '{"autofill_seconds":null,"bot_delay_ms":0,"join_code":null,"missed_action":"bot",'
        f'"missed_turns_limit":3,"preset":"six-card","rules":{rules},"seats":4,"turn_seconds":null,"v":1}}'
    )


def test_options_stored_before_clocks_still_read_with_the_defaults() -> None:
    plain = opts("four-card", seats=3, holes=4)
    rules = _compact(plain.rules.canonical())
    old = f'{{"join_code":null,"preset":"four-card","rules":{rules},"seats":3,"v":1}}'
    decoded = decode_options(old)
    assert decoded == plain and decoded.turn_seconds is None and decoded.missed_turns_limit == 3
    assert decoded.missed_action == "bot" and decoded.bot_delay_ms == 0 and decoded.autofill_seconds is None


@pytest.mark.parametrize(
    "change",
    [
        {"turn_seconds": 30},  # some of the five keys, not all: not a record this module wrote
        {"turn_seconds": "30", "missed_turns_limit": 3, "missed_action": "bot", "bot_delay_ms": 0,
         "autofill_seconds": None},
        {"turn_seconds": 30, "missed_turns_limit": True, "missed_action": "bot", "bot_delay_ms": 0,
         "autofill_seconds": None},
        {"turn_seconds": 30, "missed_turns_limit": 3, "missed_action": 1, "bot_delay_ms": 0,
         "autofill_seconds": None},
        {"turn_seconds": 30, "missed_turns_limit": 3, "missed_action": "bot", "bot_delay_ms": None,
         "autofill_seconds": None},
        {"turn_seconds": 1, "missed_turns_limit": 3, "missed_action": "bot", "bot_delay_ms": 0,
         "autofill_seconds": None},
    ],
)  # fmt: skip
def test_bad_clock_options_do_not_decode(change: dict[str, Any]) -> None:
    data = json.loads(encode_options(opts()))
    for key in ("turn_seconds", "missed_turns_limit", "missed_action", "bot_delay_ms", "autofill_seconds"):
        del data[key]
    data.update(change)
    with pytest.raises(TableRecordError):
        decode_options(json.dumps(data))


@given(
    turn=st.one_of(st.none(), st.integers(5, 30 * 24 * 3600)),
    limit=st.integers(1, 100),
    action=st.sampled_from(["bot", "resign"]),
    delay=st.integers(0, 30_000),
    fill=st.one_of(st.none(), st.integers(0, 600)),
)
@settings(max_examples=60, deadline=None, database=None)
def test_clock_options_round_trip(turn: int | None, limit: int, action: str, delay: int, fill: int | None) -> None:
    options = opts(turn_seconds=turn, missed_turns_limit=limit, missed_action=action, bot_delay_ms=delay,
                   autofill_seconds=fill)  # fmt: skip
    text = encode_options(options)
    assert decode_options(text) == options and encode_options(decode_options(text)) == text
