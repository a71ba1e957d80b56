"""What the live table tests share: a scan of every view for what its viewer may not know, a driver that checks a
table after every command, and hypothesis plans of whole matches."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields, is_dataclass
from enum import Enum
from typing import Any

import pytest
from hypothesis import strategies as st

from golf.app.tables import (
    Applied,
    Entry,
    Table,
    TableMoveRefused,
    TableOptions,
    TableRefusal,
    TableRefused,
    TableStatus,
    act,
    new_table,
    play_bots,
    replay,
    resign,
    view_for,
)
from golf.app.tables.read_model import TableSnapshot
from golf.engine.cardgolf import (
    DrawStock,
    GCard,
    GolfRules,
    HoleState,
    Knock,
    Move,
    Phase,
    Refusal,
    Source,
    UsePower,
)
from golf.engine.cardgolf.cards import Joker
from golf.engine.cards import Card
from golf.engine.shuffle import ALGORITHM, commitment
from tests.unit.app.fakes import FakeStore

SEED = "table-test-seed-7f3a"


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


def full_table(store: FakeStore, table_id: str, version: int | None = None) -> Table:
    """The whole table (hidden cards included) from the store's log, at ``version`` (default: the latest)."""
    record = store.tables.card_tables[table_id]
    log = [e.entry for e in store.tables.table_logs[table_id] if version is None or e.seq <= version]
    return replay(record.options, record.seed, log)


def check_view(store: FakeStore, snap: TableSnapshot) -> None:
    """The snapshot's view is ``view_for`` of the stored table for the caller's seat, and it leaks nothing."""
    table = full_table(store, snap.table_id, snap.version)
    assert snap.view == view_for(table, snap.seat)
    scan(table, snap.seat)
