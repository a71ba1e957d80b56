"""Live tables (``golf.app.tables``): options, seats, commands and their refusals, bots, chained holes, replay
from the log, and the per-viewer views scanned for any card the viewer may not know."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from golf.app.errors import InvalidArgument, PermissionDenied
from golf.app.tables import (
    RESIGNED_SEAT_BOT,
    BotAdded,
    Entry,
    MatchEnd,
    SeatJoined,
    SeatMoved,
    SeatResigned,
    Table,
    TableMoveRefused,
    TableOptions,
    TableRefusal,
    TableRefused,
    TableStarted,
    TableStatus,
    act,
    add_bot,
    join,
    leave,
    new_table,
    play_bots,
    replay,
    resign,
    start,
    view_for,
)
from golf.app.tables import bots as table_bots
from golf.engine.cardgolf import (
    PRESETS,
    Discard,
    DrawDiscard,
    DrawStock,
    Move,
    Phase,
    Refusal,
    Reveal,
    SeatView,
    Swap,
    UsePower,
)
from golf.engine.cardgolf.bots import make_bot
from tests.unit.app.table_checks import (
    SEED,
    Driver,
    Plan,
    plans,
    play_humans,
    refusal,
)


def options(preset: str = "six-card", seats: int = 3, holes: int = 1, **kw: Any) -> TableOptions:
    return TableOptions.build(preset, seats=seats, holes=holes, **kw)


# -- options ---------------------------------------------------------------------------------------------------
def test_options_from_a_preset_and_options_one_by_one() -> None:
    o = TableOptions.build("four-card", rules={"knocker_penalty": "plus_10"}, seats=5, holes=3)
    assert o.rules.knocking and o.rules.knocker_penalty.value == "plus_10" and o.holes == 3 == o.rules.holes
    assert o.custom and o.listed
    plain = TableOptions.build("nine-card", seats=2)
    assert plain.holes == 9 and not plain.custom
    private = TableOptions.build(join_code=" ab12cd ")
    assert private.join_code == "AB12CD" and not private.listed
    assert private.code_matches("ab12cd") and not private.code_matches("AB12CE") and not private.code_matches(None)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"preset": "no-such"}, "preset"),
        ({"seats": 1}, "seats"),
        ({"seats": 9}, "seats"),
        ({"holes": 0}, "holes"),
        ({"holes": 19}, "holes"),
        ({"rules": {"no_such_option": 1}}, "rules"),
        ({"rules": {"rows": 5}}, "rules.rows"),
        ({"rules": {"decks": "two"}}, "rules"),
        ({"preset": "nine-card", "rules": {"decks": 1}, "seats": 6}, "rules.decks"),
        ({"join_code": "a b"}, "joinCode"),
        ({"join_code": "abc"}, "joinCode"),
    ],
)
def test_options_refused(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        TableOptions.build(**kwargs)
    assert info.value.field == field


def test_new_table_needs_a_seed() -> None:
    with pytest.raises(InvalidArgument):
        new_table(options(), "")


# -- seating ---------------------------------------------------------------------------------------------------
def test_join_fills_free_seats_and_refuses_what_the_table_forbids() -> None:
    d = Driver(options(seats=3))
    assert d.do(join, "ann") == (SeatJoined(0, "ann"),)
    assert d.do(join, "bob", 2) == (SeatJoined(2, "bob"),)
    assert refusal(d.refused(TableRefused, join, "cat", 2)) is TableRefusal.SEAT_TAKEN
    assert refusal(d.refused(TableRefused, join, "ann")) is TableRefusal.ALREADY_SEATED
    assert refusal(d.refused(TableRefused, join, "ann", 1)) is TableRefusal.ALREADY_SEATED
    assert refusal(d.refused(TableRefused, start)) is TableRefusal.SEATS_EMPTY
    assert d.refused(InvalidArgument, join, "cat", 3).field == "seat"  # type: ignore[attr-defined]
    assert d.refused(InvalidArgument, join, "").field == "playerId"  # type: ignore[attr-defined]
    assert d.refused(InvalidArgument, add_bot, "genius").field == "kind"  # type: ignore[attr-defined]
    assert d.do(add_bot, "greedy") == (BotAdded(1, "greedy"),)
    assert refusal(d.refused(TableRefused, join, "cat")) is TableRefusal.TABLE_FULL
    assert refusal(d.refused(TableRefused, add_bot, "random")) is TableRefusal.TABLE_FULL
    seats = view_for(d.table, None).seats
    assert [(s.player_id, s.bot) for s in seats] == [("ann", None), (None, "greedy"), ("bob", None)]
    assert d.table.seat_of("bob") == 2 and d.table.seat_of("cat") is None


def test_leave_before_the_start_frees_the_seat() -> None:
    d = Driver(options(seats=2))
    d.do(join, "ann")
    d.do(add_bot, "random")
    d.do(leave, 1)  # a bot's seat can be freed too
    d.do(leave, 0)
    assert all(s.empty for s in d.table.seats) and d.table.version == 4
    assert refusal(d.refused(TableRefused, leave, 0)) is TableRefusal.SEAT_EMPTY
    assert refusal(d.refused(TableRefused, resign, 0)) is TableRefusal.NOT_STARTED
    d.do(join, "ann", 1)
    d.do(join, "bob")
    assert d.table.seat_of("bob") == 0


def test_private_table_asks_for_its_join_code() -> None:
    d = Driver(options(join_code="golf42"))
    assert isinstance(d.refused(PermissionDenied, join, "ann"), PermissionDenied)
    d.refused(PermissionDenied, join, "ann", join_code="golf43")
    d.do(join, "ann", join_code="GOLF42")
    assert view_for(d.table, 0).listed is False  # and the scan checked the code is in no view


# -- playing ---------------------------------------------------------------------------------------------------
def two_humans_and_a_bot(holes: int = 1, preset: str = "six-card", bots: int = 1) -> Driver:
    d = Driver(options(preset, seats=2 + bots, holes=holes))
    d.do(join, "ann")
    d.do(join, "bob")
    for _ in range(bots):
        d.do(add_bot, "greedy")
    assert refusal(d.refused(TableRefused, act, 0, Reveal((0, 1)))) is TableRefusal.NOT_STARTED
    d.do(start)
    return d


def test_act_out_of_turn_or_illegal_is_refused_and_changes_nothing() -> None:
    d = two_humans_and_a_bot()
    assert refusal(d.refused(TableRefused, start)) is TableRefusal.ALREADY_STARTED
    assert refusal(d.refused(TableRefused, join, "cat")) is TableRefusal.ALREADY_STARTED
    assert refusal(d.refused(TableRefused, act, 2, Reveal((0, 1)))) is TableRefusal.BOT_SEAT
    assert d.refused(InvalidArgument, act, 5, DrawStock()).field == "seat"  # type: ignore[attr-defined]
    # Setup: the bot chooses its start cards at once; people choose theirs in any order.
    assert d.bots() == (SeatMoved(2, Reveal((0, 1))),)
    assert set(d.table.awaiting()) == {0, 1}
    assert refusal(d.refused(TableMoveRefused, act, 0, DrawStock())) is Refusal.WRONG_PHASE
    assert refusal(d.refused(TableMoveRefused, act, 0, Reveal((0,)))) is Refusal.WRONG_REVEAL_COUNT
    assert refusal(d.refused(TableMoveRefused, act, 0, Reveal((0, 0)))) is Refusal.DUPLICATE_POSITION
    # A reveal may name its positions in any order; the log keeps the listed form.
    assert d.do(act, 1, Reveal((4, 2))) == (SeatMoved(1, Reveal((2, 4))),)
    assert refusal(d.refused(TableMoveRefused, act, 1, Reveal((0, 1)))) is Refusal.ALREADY_REVEALED
    d.do(act, 0, Reveal((0, 1)))
    hole = d.table.hole
    assert hole is not None and hole.phase is Phase.DRAW and hole.turn == 0  # hole 0: seat 0 plays first
    other = 1
    assert refusal(d.refused(TableMoveRefused, act, other, DrawStock())) is Refusal.NOT_YOUR_TURN
    assert refusal(d.refused(TableMoveRefused, act, 0, Swap(0))) is Refusal.WRONG_PHASE
    d.do(act, 0, DrawDiscard())
    assert refusal(d.refused(TableMoveRefused, act, 0, Swap(6))) is Refusal.NO_SUCH_POSITION
    assert refusal(d.refused(TableMoveRefused, act, 0, Discard())) is Refusal.MUST_SWAP_TAKEN_DISCARD
    # A move the engine would take but does not list (a power's ignored fields) is refused too.
    assert refusal(d.refused(TableMoveRefused, act, 0, UsePower(1, 0))) is Refusal.NO_POWER
    d.do(act, 0, Swap(5))
    assert d.table.awaiting() == (1,)
    tv = view_for(d.table, 1)
    assert tv.legal_moves == tuple(d.table.hole.legal_moves(1)) == tv.hole.legal_moves  # type: ignore[union-attr]
    assert view_for(d.table, 0).legal_moves == () and view_for(d.table, None).legal_moves == ()
    with pytest.raises(InvalidArgument):
        view_for(d.table, 3)


def test_holes_chain_into_a_match_on_the_score_sheet() -> None:
    d = two_humans_and_a_bot(holes=2)
    rng = random.Random(3)
    while d.table.hole_index == 0:
        d.bots()
        seat = next(s for s in d.table.awaiting() if d.table.seats[s].human)
        d.do(act, seat, rng.choice(view_for(d.table, seat).legal_moves))
    assert d.table.status is TableStatus.PLAYING and len(d.table.sheet.holes) == 1
    assert d.table.hole is not None and d.table.hole.first == 1  # the deal passes round the table
    last = view_for(d.table, 0).last_hole
    assert last is not None and last.result == d.table.results[0]
    assert all(c is not None for g in last.grids for c in g)  # the finished hole is shown whole
    assert view_for(d.table, None).hole_number == 2
    play_humans(d, rng)
    table = d.table  # a fresh name: mypy keeps the narrowing of d.table across the call
    assert table.status is TableStatus.OVER and table.end is MatchEnd.COMPLETED
    assert len(d.table.sheet.holes) == 2 and d.table.hole is None
    assert d.table.sheet.holes == tuple(r.scores for r in d.table.results)
    for command, args in [(act, (0, DrawStock())), (join, ("cat",)), (resign, (0,)), (leave, (0,)), (start, ())]:
        assert refusal(d.refused(TableRefused, command, *args)) is TableRefusal.MATCH_OVER


def test_resigning_hands_the_seat_to_a_greedy_bot_and_the_last_person_ends_the_match() -> None:
    d = two_humans_and_a_bot(holes=3)
    d.bots()
    d.do(act, 0, Reveal((0, 1)))
    assert d.do(leave, 1) == (SeatResigned(1),)  # after the start, leaving is resigning
    seat = d.table.seats[1]
    assert seat.player_id == "bob" and seat.bot == RESIGNED_SEAT_BOT and seat.resigned
    assert refusal(d.refused(TableRefused, act, 1, Reveal((0, 1)))) is TableRefusal.BOT_SEAT
    assert refusal(d.refused(TableRefused, resign, 2)) is TableRefusal.BOT_SEAT
    assert refusal(d.refused(TableRefused, resign, 1)) is TableRefusal.BOT_SEAT
    moved = d.bots()  # bob's bot chooses its start cards, then plays until ann must act
    assert moved[0] == SeatMoved(1, Reveal((0, 1))) and d.table.awaiting() == (0,)
    d.do(resign, 0)
    assert d.table.status is TableStatus.OVER and d.table.end is MatchEnd.ABANDONED
    assert d.table.hole is None and d.table.sheet.holes == ()
    assert d.bots() == ()


def test_a_table_of_bots_plays_its_match_deterministically() -> None:
    def run() -> tuple[Table, list[Entry]]:
        d = Driver(options("six-card", seats=3, holes=2), scan_views=False)
        for kind in ("strong", "greedy", "random"):
            d.do(add_bot, kind)
        d.do(start)
        d.bots()
        return d.table, d.log

    table, log = run()
    assert table.status is TableStatus.OVER and table.end is MatchEnd.COMPLETED and len(table.sheet.holes) == 2
    assert run() == (table, log)
    # The seed is what makes them: the same seats at a table of another seed play another match.
    other = replay(table.options, SEED + "-other", log[:4])
    assert play_bots(other).entries != tuple(log[4:])


def test_a_restarted_server_goes_on_identically_mid_hole() -> None:
    def play(d: Driver, rng: random.Random, until: Callable[[Table], bool]) -> None:
        while d.table.status is TableStatus.PLAYING and not until(d.table):
            d.bots()
            if d.table.status is not TableStatus.PLAYING or until(d.table):
                return
            seat = next(s for s in d.table.awaiting() if d.table.seats[s].human)
            d.do(act, seat, rng.choice(view_for(d.table, seat).legal_moves))

    def mid_second_hole(t: Table) -> bool:
        return t.hole_index == 1 and t.hole is not None and t.hole.turns >= 3 and t.hole.held is not None

    live = two_humans_and_a_bot(holes=3, preset="six-card-jokers", bots=2)  # seed 001: four or more
    play(live, random.Random(5), mid_second_hole)
    assert live.table.hole is not None and live.table.hole.held is not None  # a card in hand, mid-hole
    restarted = Driver(live.options, live.seed, scan_views=False)
    restarted.table = replay(live.options, live.seed, live.log)
    restarted.log = list(live.log)
    assert restarted.table == live.table
    play(live, random.Random(6), lambda t: False)
    play(restarted, random.Random(6), lambda t: False)
    assert restarted.table == live.table and restarted.log == live.log
    assert live.table.status is TableStatus.OVER and len(live.table.sheet.holes) == 3


def test_bots_choose_from_their_own_seat_view(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int | None, type]] = []

    @dataclass
    class Spy:
        inner: Any
        name: str = "spy"

        def choose(self, view: SeatView) -> Move:
            seen.append((view.seat, type(view)))
            move: Move = self.inner.choose(view)
            return move

    monkeypatch.setattr(table_bots, "make_bot", lambda kind, seed: Spy(make_bot(kind, seed)))
    d = Driver(options("powers", seats=3, holes=1))
    d.do(join, "ann", 1)
    d.do(add_bot, "random")
    d.do(add_bot, "greedy")
    d.do(start)
    d.bots()
    d.do(act, 1, Reveal((0, 1)))
    d.bots()
    assert seen and all(t is SeatView for _, t in seen)
    assert {s for s, _ in seen} == {0, 2}
    bot_moves = [e.seat for e in d.log if isinstance(e, SeatMoved) and e.seat != 1]
    assert [s for s, _ in seen] == bot_moves


def test_play_bots_can_stop_after_some_moves() -> None:
    d = Driver(options(seats=2), scan_views=False)
    d.do(add_bot, "random")
    d.do(add_bot, "random")
    d.do(start)
    assert len(d.do(play_bots, max_moves=3)) == 3
    assert d.table.version == 6
    assert isinstance(d.log[2], TableStarted)


@pytest.mark.parametrize("preset", ["powers", "cambio"])
def test_power_cards_never_leak(preset: str) -> None:
    """People who use every power card they draw (peeks, blind swaps, shuffles, cards given, lines swapped, cards
    turned up or down), with the views of every seat and of a spectator scanned after each step."""
    # A hole of Powers ends by knocking only, which these people seldom do: 25 rounds at most keep it short.
    d = Driver(options(preset, seats=4, holes=1 if preset == "powers" else 2, rules={"max_rounds": 25}))
    for seat in range(3):
        d.do(join, f"p{seat}")
    d.do(add_bot, "greedy")
    d.do(start)
    play_humans(d, random.Random(11), powers=True)
    assert sum(isinstance(e, SeatMoved) and isinstance(e.move, UsePower) for e in d.log) >= 8
    assert d.table.end is MatchEnd.COMPLETED


@settings(
    max_examples=4,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(plan=plans())
@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_random_tables_replay_exactly_and_never_leak(preset: str, plan: Plan) -> None:
    """Every preset, 2 to 6 seats of people and bots, 1 to 3 holes, people playing random legal moves (now and
    then a move out of turn, a resignation): after every step the replayed log equals the table, the version counts
    the entries, and no view of any seat or spectator holds a card its viewer may not know."""
    fewest = PRESETS[preset].min_players  # six-card-jokers seats four or more: greedy bots make up the rest
    if plan.seats < fewest:
        plan = replace(plan, seats=fewest, kinds=plan.kinds + ("greedy",) * (fewest - plan.seats))
    rng = random.Random(plan.rng_seed)
    d = Driver(options(preset, seats=plan.seats, holes=plan.holes), seed=f"prop-seed-{plan.rng_seed:x}")
    order = list(range(plan.seats))
    rng.shuffle(order)
    for n, seat in enumerate(order):
        kind = plan.kinds[seat]
        if n and rng.random() < 0.5:
            assert refusal(d.refused(TableRefused, start)) is TableRefusal.SEATS_EMPTY
        if kind == "human":
            d.do(join, f"player-{seat}", seat)
            assert refusal(d.refused(TableRefused, join, f"player-{seat}")) is TableRefusal.ALREADY_SEATED
            if rng.random() < 0.3:  # leave and come back
                d.do(leave, seat)
                d.do(join, f"player-{seat}", seat)
        else:
            d.do(add_bot, kind, seat)
        if n + 1 < plan.seats:
            taken = rng.choice([s for s in range(plan.seats) if not d.table.seats[s].empty])
            assert refusal(d.refused(TableRefused, add_bot, "greedy", taken)) is TableRefusal.SEAT_TAKEN
    d.do(start)
    humans = sum(k == "human" for k in plan.kinds)
    play_humans(d, rng, resign_chance=0.01 if humans > 1 else 0.0)
    table = d.table
    assert table.status is TableStatus.OVER
    if table.end is MatchEnd.COMPLETED:
        assert len(table.sheet.holes) == plan.holes
        assert table.sheet.totals == tuple(sum(r.scores[s] for r in table.results) for s in range(plan.seats))
    else:
        assert not any(s.human for s in table.seats)
    assert sum(isinstance(e, SeatMoved) for e in d.log) >= plan.seats
