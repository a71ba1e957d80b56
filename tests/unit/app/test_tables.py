"""Live tables (``golf.app.tables``): options, seats, commands and their refusals, bots, chained holes, replay
from the log, and the per-viewer views scanned for any card the viewer may not know."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass, replace
from enum import Enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from golf.app.errors import InvalidArgument, PermissionDenied
from golf.app.tables import (
    RESIGNED_SEAT_BOT,
    Applied,
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
    GCard,
    GolfRules,
    HoleState,
    Knock,
    Move,
    Phase,
    Refusal,
    Reveal,
    SeatView,
    Source,
    Swap,
    UsePower,
)
from golf.engine.cardgolf.bots import make_bot
from golf.engine.cardgolf.cards import Joker
from golf.engine.cards import Card
from golf.engine.shuffle import ALGORITHM, commitment

SEED = "table-test-seed-7f3a"


def options(preset: str = "six-card", seats: int = 3, holes: int = 1, **kw: Any) -> TableOptions:
    return TableOptions.build(preset, seats=seats, holes=holes, **kw)


# -- the leak scan ---------------------------------------------------------------------------------------------
_LEAVES = frozenset({int, float, bool, type(None)})


_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    if cls not in _FIELDS:
        _FIELDS[cls] = tuple(f.name for f in fields(cls))
    return _FIELDS[cls]


def _walk(obj: Any, cards: Counter[GCard], strings: list[str], tuples: list[tuple[Any, ...]]) -> None:
    """Every card, string and tuple anywhere inside a view."""
    kind = type(obj)
    if kind in _LEAVES or kind is GolfRules or isinstance(obj, Enum):
        return  # the rules are public and hold no card object (special values name cards only as text)
    if kind is Card or kind is Joker:
        cards[obj] += 1
        return
    if kind is str:
        strings.append(obj)
        return
    if kind is tuple or kind is list or kind is frozenset or kind is set:
        if kind is tuple:
            tuples.append(obj)
        for item in obj:
            if type(item) not in _LEAVES:
                _walk(item, cards, strings, tuples)
        return
    if kind is dict:
        for k, v in obj.items():
            _walk(k, cards, strings, tuples)
            _walk(v, cards, strings, tuples)
        return
    if is_dataclass(obj):
        for name in _field_names(kind):
            _walk(getattr(obj, name), cards, strings, tuples)
        return
    raise AssertionError(f"the scan does not know {kind.__name__}")


def _may_know(hole: HoleState, viewer: int | None, owner: int, position: int) -> bool:
    """Computed from the full state: face up, or a face-down card the viewer peeked at or placed (or saw placed)."""
    if hole.phase is Phase.OVER or hole.face_up[owner][position]:
        return True
    return viewer is not None and (owner, position) in hole.known[viewer]


def _forgotten(hole: HoleState, viewer: int | None, owner: int, position: int) -> bool:
    """The strict game (``peeks_stay_visible`` off): a known face-down card is shown only until the viewer's next
    move after it saw the card (``glimpsed``); players remember the rest."""
    if hole.rules.peeks_stay_visible or hole.phase is Phase.OVER or hole.face_up[owner][position]:
        return False
    return viewer is None or (owner, position) not in hole.glimpsed[viewer]


def scan(table: Table, viewer: int | None) -> None:
    """No card the viewer may not know, no seed, no stock order, no join code anywhere in its view."""
    tv = view_for(table, viewer)
    cards: Counter[GCard] = Counter()
    strings: list[str] = []
    tuples: list[tuple[Any, ...]] = []
    _walk(tv, cards, strings, tuples)
    allowed: Counter[GCard] = Counter()
    hole = table.hole
    if hole is None:
        assert tv.hole is None
    else:
        assert tv.hole is not None and tv.hole.seat == viewer
        for owner, grid in enumerate(hole.grids):
            for p, card in enumerate(grid):
                shown = tv.hole.grids[owner][p]
                if _may_know(hole, viewer, owner, p):
                    if _forgotten(hole, viewer, owner, p):
                        assert shown is None, f"seat {viewer} is shown {owner}:{p} in the strict game"
                        continue
                    assert shown == card
                    if card is not None:  # ``None``: an empty place (the ace of Powers took its card)
                        allowed[card] += 1
                else:
                    assert shown is None, f"seat {viewer} sees {owner}:{p} face down"
        allowed.update(hole.discard)
        allowed.update(c for aside in hole.aside for c in aside)  # shields are kept aside face up
        assert tv.hole.discard == hole.discard
        if viewer == hole.turn:  # the cards the mover chooses from (the 8 of Powers): the mover's only
            assert tv.hole.offered == hole.offered
            allowed.update(hole.offered)
        else:
            assert tv.hole.offered == ()
        if hole.held is not None and (viewer == hole.turn or hole.held_from is Source.DISCARD):
            assert tv.hole.held == hole.held
            allowed[hole.held] += 1
        else:
            assert tv.hole.held is None
        assert tv.hole.stock_count == len(hole.stock)
        if len(hole.stock) > 1:
            assert hole.stock not in tuples and tuple(reversed(hole.stock)) not in tuples
        assert not any(hole.seed in s for s in strings)
    if table.last_hole is not None:
        allowed.update(c for g in table.last_hole.grids for c in g if c is not None)
        allowed.update(c for aside in table.last_hole.aside for c in aside)
        allowed.update(table.last_hole.discard)
    assert not cards - allowed, f"seat {viewer} sees {cards - allowed}"
    # The match seed only in ``seed``, and only once the match is over; the commitment from the start.
    assert tv.seed == (table.seed if table.status is TableStatus.OVER else None)
    assert tv.commitment == commitment(ALGORITHM, table.seed, table.options.rules.canonical())
    assert not any(table.seed in s for s in strings if s is not tv.seed)
    code = table.options.join_code
    assert code is None or not any(code in s for s in strings)
    if viewer is None or not table.seats[viewer].human:
        assert tv.legal_moves == ()


# -- a driver that checks the table after every step -----------------------------------------------------------
class Driver:
    """Runs commands on one table, keeps its log as a store would, and checks after every step: versions count
    entries, a replay of the log equals the live table, and no view leaks."""

    def __init__(self, opts: TableOptions, seed: str = SEED, scan_views: bool = True) -> None:
        self.options = opts
        self.seed = seed
        self.table = new_table(opts, seed)
        self.log: list[Entry] = []
        self.scan_views = scan_views

    def do(self, command: Callable[..., Applied], *args: Any, **kw: Any) -> tuple[Entry, ...]:
        before = self.table.version
        table, entries = command(self.table, *args, **kw)
        assert table.version == before + len(entries)
        self.table = table
        self.log.extend(entries)
        self.check()
        return entries

    def bots(self) -> tuple[Entry, ...]:
        return self.do(play_bots)

    def refused(self, error: type[Exception], command: Callable[..., Applied], *args: Any, **kw: Any) -> Exception:
        before = self.table
        with pytest.raises(error) as info:
            command(self.table, *args, **kw)
        assert self.table == before and self.table.version == len(self.log)
        return info.value

    def check(self) -> None:
        assert self.table.version == len(self.log)
        assert replay(self.options, self.seed, self.log) == self.table
        if self.scan_views:
            for viewer in [None, *range(self.options.seats)]:
                scan(self.table, viewer)


def refusal(err: Exception) -> TableRefusal | Refusal:
    if isinstance(err, TableRefused):
        return err.reason
    assert isinstance(err, TableMoveRefused)
    return err.illegal.reason


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


def play_humans(d: Driver, rng: random.Random, resign_chance: float = 0.0, powers: bool = False) -> None:
    """Play to the end: bots through ``play_bots``, people by random legal moves (a kind of move, then one; with
    ``powers``, always from the stock and always a power card's power)."""
    while d.table.status is TableStatus.PLAYING:
        d.bots()
        if d.table.status is not TableStatus.PLAYING:
            break
        waiting = [s for s in d.table.awaiting() if d.table.seats[s].human]
        assert waiting, "the bots stopped while no person may move"
        seat = rng.choice(waiting)
        legal = view_for(d.table, seat).legal_moves
        assert legal
        hole = d.table.hole
        assert hole is not None
        idle = [s for s, x in enumerate(d.table.seats) if x.human and s not in d.table.awaiting()]
        if idle and rng.random() < 0.05:
            assert refusal(d.refused(TableMoveRefused, act, rng.choice(idle), legal[0])) in (
                Refusal.NOT_YOUR_TURN,
                Refusal.ALREADY_REVEALED,
            )
        if rng.random() < resign_chance:
            d.do(resign, seat)
            continue
        by_kind: dict[type, list[Move]] = {}
        for move in legal:
            by_kind.setdefault(type(move), []).append(move)
        kinds = sorted(by_kind, key=lambda k: k.__name__)
        if Knock in by_kind and len(kinds) > 1 and rng.random() < 0.9:
            kinds.remove(Knock)  # knock seldom, so holes last and power cards get played
        kind = rng.choice(kinds)
        if powers:  # draw from the stock and use every power card drawn
            kind = next((k for k in (UsePower, DrawStock) if k in by_kind and k in kinds), kind)
        d.do(act, seat, rng.choice(by_kind[kind]))


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


# -- random tables, to the end ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Plan:
    seats: int
    holes: int
    kinds: tuple[str, ...]
    rng_seed: int


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    seats = draw(st.integers(2, 6))
    holes = draw(st.integers(1, 3))
    kinds = draw(st.lists(st.sampled_from(("human", "human", "random", "greedy")), min_size=seats, max_size=seats))
    return Plan(seats, holes, tuple(kinds), draw(st.integers(0, 2**32 - 1)))


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
