"""A seeded random tour of live card Golf tables that scans every payload for a card its viewer may not know.

Hundreds of short matches (one hole, at most ``MAX_ROUNDS`` rounds; 2 to 4 seats; a preset drawn from all nine;
some with the turn's house rules ``HOUSE_RULES``; people and random or greedy bots mixed; listed and private tables)
over both transports: each person (two players of this test, each on a transport drawn per match) plays random moves
of its own ``legalMoves`` (from its replies, or as a thin client from its own stream), reads the table now and then,
and is refused now and then (acting out of turn, a stale ``expectedVersion``, a move of the wrong phase, acting once
the match is over); a spectator reads, lists and acts too. The spectator and every person WATCH the table (gRPC
``WatchTable`` and Server-Sent Events alternate between matches), each stream read to its end in a thread of its
own. Several matches run at once.

EVERY payload is scanned: each unary reply, each refusal's ``Error.table``, each stream event's table, each
listing. What a viewer may know is not asked of the server: :class:`Sight` rebuilds it from what the viewer
legitimately saw, event by event of its own stream, with the moves the events name (positions are public):

* face-up cards, the discard pile, the card in its own hand, a card taken from the discard pile, the shield cards
  kept aside (face up, beside a grid);
* its own start cards in PEEK mode, its peek strokes, a card it swapped in face down (it held it), a card anyone
  swapped in face down from the discard pile (everyone saw it there), a card it kept of the cards offered to it
  (the draw-two power: ``offered`` goes to the mover only);
* its power peeks (its own card, an opponent's); a card given with a power (the power card is shown as it is
  used: ``golf.engine.cardgolf.powers``); its own face-up card turned face down with a power (everyone saw it);
* a known card stays known when a blind swap or a swap of lines moves it; a shuffled grid's face-down cards are
  known to nobody, but for its shielded places (a shuffle leaves them where they are); a card another seat swaps
  in from the stock (or keeps of its offered cards) is known to that seat only; a card the ace adds to a grid from
  the stock is known to nobody; a card traded for a face-up card lies face up.

The face-up state of every place is followed from the moves too (a payload cannot make a card public by calling
it face up), and so are the empty places (the ace removed their card), the places added after a grid (the ace
added a card), the shielded places and the shield cards aside (the 5), the number of cards offered (the 8): a card
the viewer knows at a place must stay that card until a move changes it. Checked on every payload: (1) a face-down
card is shown only at a place the viewer knows, for one of the reasons above (in another seat's grid: a power peek,
a card it knew moved there by a blind swap or swapped lines, a card from the discard pile, a given power card, a
card turned face down); (2) the card another seat drew from the stock is never shown (``held`` goes to its drawer
only) until it lands face up, on the pile, or as a given power card, the cards offered to the mover are shown to
the mover only, and a card can only be in a grid (or aside), the discard pile, a hand or the offered cards
(``test_cards_travel_only_in_the_holes_of_tables``: the contract has no other place for one); (3) a spectator never
sees a face-down card; (4) no payload holds the match seed (read from the database once the match is over) nor a
field the contract does not name (strict JSON, no unknown gRPC fields), and the stock is a count only: grids (with
their added places), cards aside, offered cards, discard pile, hand and ``stockCount`` make the deck. The cards one
payload shows never exceed the deck, and what every viewer sees alike (face-up cards, empty and shielded places,
cards aside, the pile, counts, seats) agrees across viewers and transports at each version. Leaky copies of scanned
events (a face-down card shown, or shown face up, another seat's stock card in hand, cards offered to another seat)
must fail the scan: it is not blind.

Bulk on SQLite, a smaller pass on PostgreSQL. The plans (presets, house rules, seats, people, transports, moves)
come from a seeded ``random.Random``; the deals are the server's (``secrets``), so a failure names its table, viewer,
version and payload rather than a seed.
"""

from __future__ import annotations

import json
import queue
import random
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
import httpx
import psycopg
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message

from golf.v1 import card_golf_pb2 as cg
from golf.v1 import cards_pb2, errors_pb2, table_service_pb2_grpc
from golf.v1 import table_service_pb2 as tpb
from tests.e2e.support import Client, Grpc, R, Reply, Rest, Server
from tests.e2e.tables import Tables, move, tables_in

PRESETS = (
    "six-card",
    "six-card-jokers",
    "four-card",
    "eight-card",
    "nine-card",
    "cambio",
    "powers",
    "six-card-flip",
    "cutthroat",
)
HOUSE_RULES = ("flip_as_turn", "early_out", "flip_endgame")
"""The house rules of the turn some matches are created with (``CreateTable.house_rules``): a flip as the whole
turn, turning up the last one or two cards to go out, the flip after a discard only in the endgame."""
HOUSE_RULES_SHARE = 0.3
NO_EARLY_OUT = frozenset({"four-card", "cambio", "powers"})
"""Presets that end by knocking only: ``early_out`` needs ``end_on_all_face_up``."""
MATCHES = {"sqlite": (50, 50, 50), "postgres": (17, 17, 16)}
"""Matches per test, by database: 150 on SQLite and 50 on PostgreSQL. ``--dist loadfile`` runs a module's tests on
one worker, so the split does not spread them: it names the part a failure is in, each with plans of its own;
the speed comes from playing ``AT_ONCE`` matches at a time."""
AT_ONCE = 4
"""Matches played at the same time (each with its own players)."""
MAX_ROUNDS = 6
"""Short matches: a hole ends after this many rounds of turns at the latest (the presets say 60)."""
MAX_PERSON_MOVES = 300
"""A match still playing after this many moves of its people is ended by their resigning (never seen)."""
STREAM_SECONDS = 60.0
KIND_WEIGHTS = {"swap": 3.0, "flip": 2.0, "pass": 0.5, "knock": 0.4, "use_power": 4.0, "flip_all": 1.5, "keep": 1.0}
"""A person picks a kind of move among its legal ones, then one of that kind (a swap mostly into a face-down
position, a power first, then a move of it): short holes, and powers used most times one is in hand (a second power
of the 2 mostly too, rather than passing). With the house rules a flip as the whole turn and going out early are
often chosen over drawing; a ``keep`` is the only kind after the draw-two power."""
POWER_WEIGHTS = {**KIND_WEIGHTS, "knock": 0.15, "draw_stock": 3.0, "use_power": 6.0}
"""With power cards: knocking later, drawing from the stock (where powers come from) more, and using them more."""

PLAYING, OVER = cg.TABLE_STATUS_PLAYING, cg.TABLE_STATUS_OVER
STOCK, DISCARD = cg.CARD_SOURCE_STOCK, cg.CARD_SOURCE_DISCARD
P = cg.Power
Slot = tuple[int, int]
"""A grid position: (owner seat, position)."""
T = TypeVar("T")
M = TypeVar("M", bound=Message)

# Why a viewer may know a face-down card (the first four only of its own grid's cards).
START_PEEK = "its own start card, peeked"
OWN_SWAP = "its own stock card, swapped in"
PEEK_STROKE = "its own card, a peek stroke"
OWN_POWER_PEEK = "its own card, a power peek"
PILE_SWAP = "swapped in from the discard pile"
POWER_PEEK = "an opponent's card, a power peek"
GIVEN = "a power card given to a seat, shown as it is used"
TURNED_DOWN = "a face-up card turned face down"
BLIND_SWAPPED = "a card it knew, moved by a blind swap"
LINES_SWAPPED = "a card it knew, moved by swapped lines"
LOOKED_BEFORE_LAST_TURN = "its own card, looked at once another player was out"
KEPT = "its own card, kept of the cards offered to it"
CANARIES = ("face-down card shown", "shown face up", "stock card in hand", "offered to another seat")
"""The ways a leaky copy of an event is made (``canaries``)."""
OWN_GRID_ONLY = (START_PEEK, OWN_SWAP, PEEK_STROKE, OWN_POWER_PEEK, LOOKED_BEFORE_LAST_TURN, KEPT)


# -- cards and rules, as the test reads them ---------------------------------------------------------------------
def rank_key(code: str) -> str:
    return "X" if code in ("XB", "XR") else code[:-1]


def power_of(rules: cg.CardGolfRules, code: str) -> int:
    """The power ``code`` has under ``rules`` when drawn from the stock (0: none); codes win over ranks."""
    powers = dict(rules.powers)
    rank = rank_key(code)
    found = powers.get(code) or powers.get(rank) or (powers.get("10") if rank == "T" else None)
    return int(found or 0)


def deck_of(rules: cg.CardGolfRules, seats: int) -> Counter[str]:
    """Every card of the match: the packs (automatic: one for up to 4 seats, two for 3x3 grids) and the jokers."""
    packs = rules.decks or (1 if seats <= 4 and rules.rows * rules.cols != 9 else 2)
    deck = Counter({rank + suit: packs for rank in "A23456789TJQK" for suit in "CDHS"})
    deck["XB"] += (rules.jokers + 1) // 2
    deck["XR"] += rules.jokers // 2
    return +deck


def lines_of(rows: int, cols: int) -> list[list[int]]:
    """The swappable lines of a grid: rows 0..rows-1, then the columns."""
    return [[r * cols + c for c in range(cols)] for r in range(rows)] + [
        [r * cols + c for r in range(rows)] for c in range(cols)
    ]


# -- payloads ----------------------------------------------------------------------------------------------------
@dataclass
class Payload:
    """One thing a viewer received: a unary reply or refusal, a listing, or a stream event."""

    what: str
    transport: str
    message: Message
    raw: str | bytes
    """As received: the REST body, the SSE ``data``, the gRPC message's bytes (a refusal: its details, and the
    ``Error`` and status as JSON)."""
    version: int
    """The version of the match's table it shows (an event's seq; -1: none)."""

    def holds(self, secret: str) -> bool:
        if isinstance(self.raw, bytes):
            return secret.encode() in self.raw
        return secret in self.raw


class Where:
    """A payload named in an assertion message, rendered only when one fails."""

    def __init__(self, payload: Payload, viewer: str) -> None:
        self.payload, self.viewer = payload, viewer

    def __str__(self) -> str:
        p = self.payload
        text = json_format.MessageToJson(p.message, indent=None) if isinstance(p.raw, bytes) else p.raw
        return f"{p.what} ({p.transport}) to {self.viewer} at version {p.version}: {text[:1500]}"

    __repr__ = __str__


def version_in(message: Message, table_id: str) -> int:
    if isinstance(message, cg.TableEvent):
        return int(message.seq)
    return max((int(t.version) for t in tables_in(message) if t.id == table_id), default=-1)


def card_paths() -> set[tuple[str, ...]]:
    """Every chain of fields by which the contract lets a ``Card`` into a payload of ``TableService`` (its
    replies, its stream's messages, an ``Error``), as field names from the payload's type down to the card."""
    card = cards_pb2.Card.DESCRIPTOR.full_name
    found: set[tuple[str, ...]] = set()

    def walk(kind: Descriptor, chain: tuple[str, ...], inside: frozenset[str]) -> None:
        for fd in kind.fields:
            sub = fd.message_type
            if sub is None or sub.full_name in inside:
                continue
            if sub.full_name == card:
                found.add((*chain, fd.full_name))
            else:
                walk(sub, (*chain, fd.full_name), inside | {sub.full_name})

    service = tpb.DESCRIPTOR.services_by_name["TableService"]
    for root in {m.output_type for m in service.methods} | {errors_pb2.Error.DESCRIPTOR}:
        walk(root, (), frozenset({root.full_name}))
    return found


HOLE_CARDS = {
    ("golf.v1.HoleView.grids", "golf.v1.Grid.cards", "golf.v1.GridCard.card"),
    ("golf.v1.HoleView.discard",),
    ("golf.v1.HoleView.held",),
    ("golf.v1.HoleView.grids", "golf.v1.Grid.aside"),
    ("golf.v1.HoleView.offered",),
}
"""Where a card may lie in a table: the grids (and the shield cards kept aside beside them), the discard pile, the
hand, the cards offered to the mover after the draw-two power; of the hole in play or the last one."""


_PARTS: dict[str, Message] = {}
_SAME_ALL_MATCH = ("rules", "seats", "scoreSheet", "results", "legalMoves", "lastHole")
"""Fields of a table whose values recur from payload to payload (the rules never change in a match; the legal
moves of a phase are mostly the same): each value is parsed once; so are each grid and each card of a pile."""
_parses = [0]


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    assert len(set(keys)) == len(keys), f"a key twice in one object: {keys}"
    return dict(pairs)


def _once(kind: type[M], value: Any, name: str) -> M:
    """``value`` (a fragment of proto3 JSON) parsed strictly as a ``kind``, once for all payloads."""
    key = name + json.dumps(value, sort_keys=True)
    found = _PARTS.get(key)
    if found is None:
        found = _PARTS[key] = json_format.ParseDict(value, kind())
    assert isinstance(found, kind)
    return found


def parse_json(text: str, message: Message) -> None:
    """``json_format.Parse`` (strict: an unknown field or a key given twice fails), with the parts of a table that
    recur (``_SAME_ALL_MATCH``, grids, cards of the discard pile) parsed once for each value they take: they are
    most of the work. Every 40th payload is parsed by ``json_format.Parse`` as well, and must come out the same."""
    data = json.loads(text, object_pairs_hook=_no_duplicates)
    many = isinstance(data.get("tables"), list)
    dicts = data["tables"] if many else [data["table"]] if isinstance(data.get("table"), dict) else []
    taken: list[tuple[dict[str, Any], list[Any], list[Any]]] = []
    for table in dicts:
        if not isinstance(table, dict):
            taken.append(({}, [], []))
            continue
        whole = {k: table.pop(k) for k in _SAME_ALL_MATCH if k in table}
        hole = table.get("hole")
        lists = [
            hole.pop(k) if isinstance(hole, dict) and isinstance(hole.get(k), list) else []
            for k in ("grids", "discard")
        ]
        taken.append((whole, lists[0], lists[1]))
    json_format.ParseDict(data, message)
    tables = tables_in(message) if dicts else []  # the tables of the payload, in the order of their dicts
    for table, (whole, grids, discard) in zip(tables, taken, strict=True):
        for name, value in whole.items():
            table.MergeFrom(_once(cg.Table, {name: value}, name))
        for grid in grids:
            table.hole.grids.add().CopyFrom(_once(cg.Grid, grid, "grid"))
        for card in discard:
            table.hole.discard.add().CopyFrom(_once(cards_pb2.Card, card, "card"))
    _parses[0] += 1
    if _parses[0] % 40 == 0:
        assert message == json_format.Parse(text, type(message)()), f"parse_json differs from Parse: {text[:300]}"


def no_unknown_fields(message: Message, where: str) -> None:
    """A gRPC message carries no field the contract does not name (REST and SSE bodies are parsed strictly)."""
    bare = type(message)()
    bare.CopyFrom(message)
    bare.DiscardUnknownFields()
    assert bare.ByteSize() == message.ByteSize(), f"unknown fields in {where}"


# -- what a viewer may know --------------------------------------------------------------------------------------
@dataclass
class Sight:
    """What one viewer (a seat, or a spectator) may know of the hole in play, rebuilt from the events of its own
    stream and the moves they name: the places of each grid (added ones too), which are face up, empty or shielded,
    the shield cards aside, how many cards are offered, which face-down places it knows and why, and the card it
    saw at each place it may see."""

    seat: int | None
    player_id: str
    owner: bool
    hints: dict[int, str]
    """The card a person of the test used a power with, by the event's seq (the power is public: the card goes to
    the discard pile, aside, or into a grid shown to every seat); bots' powers are told from the table after the
    event."""
    rules: cg.CardGolfRules = field(default_factory=cg.CardGolfRules)
    hole_number: int = 0
    players: int = 0
    size: dict[int, int] = field(default_factory=dict)
    """Places per seat: ``rows * cols``, then any the ace of Powers added after them."""
    up: dict[Slot, bool] = field(default_factory=dict)
    """Face up, as the engine has it: an empty place is face up (the contract shows it ``empty``, not face up)."""
    empty: set[Slot] = field(default_factory=set)
    shielded: set[Slot] = field(default_factory=set)
    aside: Counter[int] = field(default_factory=Counter)
    """Shield cards kept aside, per seat."""
    offered: int = 0
    """Cards offered to the mover (the draw-two power), shown to the mover only."""
    known: dict[Slot, str] = field(default_factory=dict)
    seen: dict[Slot, str] = field(default_factory=dict)
    held_from: int = 0
    last: cg.Table | None = None
    reasons: Counter[str] = field(default_factory=Counter)
    """How often each reason let this viewer see a face-down card (for the report)."""
    powers: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    """The moves of every seat followed, by kind (for the report)."""
    cases: Counter[str] = field(default_factory=Counter)
    """Rarer turns of the new rules and powers followed (for the report)."""
    canaries: set[str] = field(default_factory=set)
    """The ways the scan was shown to catch a leak made on purpose (``canaries``)."""

    # -- following the events --------------------------------------------------------------------------------
    def apply(self, event: cg.TableEvent) -> None:
        after = event.table
        before = self.last
        if (
            event.kind in (cg.TABLE_EVENT_KIND_MOVED, cg.TABLE_EVENT_KIND_TIMED_OUT)
            and before is not None
            and self.hole_number
            and after.HasField("hole")
            and after.hole_number == self.hole_number
        ):
            self._move(int(event.seq), event.seat, event.move, before, after)
            if before.hole.HasField("ender") and not after.hole.HasField("ender"):
                self.powers[P.Name(P.POWER_CANCEL_KNOCK)] += 1  # a black king seen: the knock is off
        self._follow(after)
        self.last = after

    def _follow(self, table: cg.Table) -> None:
        if not table.HasField("hole"):
            self.hole_number = 0
            return
        if table.hole_number == self.hole_number:
            return
        # A new hole: dealt face down; nothing of its face-down cards is known yet.
        self.rules = table.rules
        self.hole_number = table.hole_number
        self.players = len(table.seats)
        n = table.rules.rows * table.rules.cols
        self.size = dict.fromkeys(range(self.players), n)
        self.up = {(s, p): False for s in range(self.players) for p in range(n)}
        self.empty, self.shielded, self.aside, self.offered = set(), set(), Counter(), 0
        self.known, self.seen, self.held_from = {}, {}, 0
        if table.rules.start_fixed:  # the first positions are the start cards, turned up (or peeked at) at the deal
            for s in range(self.players):
                for p in range(table.rules.start_cards):
                    if table.rules.start_mode == cg.START_MODE_TURN_UP:
                        self.up[(s, p)] = True
                    elif s == self.seat:
                        self._learn((s, p), START_PEEK)

    def _learn(self, slot: Slot, reason: str, code: str | None = None) -> None:
        if self.seat is None:
            return  # a spectator knows no face-down card, ever
        self.known[slot] = reason
        if code is not None:
            self.seen[slot] = code

    def _forget(self, slot: Slot) -> None:
        self.known.pop(slot, None)
        self.seen.pop(slot, None)

    def _permute(self, mapping: dict[Slot, Slot]) -> None:
        """Cards moved from key slots to value slots (a blind swap, swapped lines): what was known moves too, and
        so does an empty place (swapped lines move it with its line; shielded places are never moved)."""
        _move_keys(self.up, mapping)
        _move_keys(self.known, mapping)
        _move_keys(self.seen, mapping)
        self.empty = {mapping.get(slot, slot) for slot in self.empty}

    def _places(self, seat: int) -> list[Slot]:
        return [(seat, p) for p in range(self.size[seat])]

    def _move(self, seq: int, seat: int, m: cg.CardGolfMove, before: cg.Table, after: cg.Table) -> None:
        kind = m.WhichOneof("kind")
        self.kinds[kind or ""] += 1
        me = self.seat
        mine_held = before.hole.held.code if me == seat and before.hole.HasField("held") else None
        if kind == "reveal":
            for p in m.reveal.positions:
                if self.rules.start_mode == cg.START_MODE_TURN_UP:
                    self.up[(seat, p)] = True
                elif me == seat:
                    self._learn((seat, p), START_PEEK)
        elif kind == "draw_stock":
            self.held_from = STOCK
        elif kind == "draw_discard":
            self.held_from = DISCARD
        elif kind == "swap":
            slot = (seat, m.swap.position)
            self._forget(slot)
            if self.held_from == DISCARD:
                self._learn(slot, PILE_SWAP, before.hole.held.code)
            elif me == seat:
                self._learn(slot, OWN_SWAP, mine_held)
            self.up[slot] = self.rules.swap_face_up
            self.held_from = 0
        elif kind == "discard":
            self.held_from = 0
        elif kind == "flip":  # after a discard, or (house rule flip_as_turn) as the whole turn
            self.up[(seat, m.flip.position)] = True
            if before.hole.phase == cg.HOLE_PHASE_DRAW:
                self.cases["a flip as the whole turn"] += 1
        elif kind == "pass" and before.hole.phase == cg.HOLE_PHASE_POWER:
            self.cases["no second power of a 2"] += 1
        elif kind == "flip_all":  # house rule early_out: every face-down card of the mover turned up
            for slot in self._places(seat):
                self.up[slot] = True
        elif kind == "peek_stroke" and me == seat:
            self._learn((seat, m.peek_stroke.position), PEEK_STROKE)
        elif kind == "use_power":
            self._power(seq, seat, m.use_power, before, after, mine_held)
            self.held_from = 0
        elif kind == "keep":
            # One of the offered cards into the mover's place, face as a swap puts it: the mover saw the offered
            # cards (its own table before shows them), the others only where it went. The rest go to the pile.
            slot = (seat, m.keep.position)
            self._forget(slot)
            if me == seat:
                offered = before.hole.offered
                assert m.keep.choice < len(offered), f"event {seq}: kept {m.keep.choice} of {list(offered)}"
                self._learn(slot, KEPT, offered[m.keep.choice].code)
            self.up[slot] = self.rules.swap_face_up
            self.cases[f"a card kept of {self.offered} offered"] += 1
            self.offered = 0
        self._looks_if_out(seat)

    def _looks_if_out(self, seat: int) -> None:
        """With ``look_before_last_turn``, once a player has every card face up (and so ends the hole) each other
        player knows their own face-down cards."""
        rules = self.rules
        me = self.seat
        if not (rules.look_before_last_turn and rules.end_on_all_face_up) or me is None or me == seat:
            return
        if all(self.up[slot] for slot in self._places(seat)):
            for slot in self._places(me):
                if not self.up[slot] and slot not in self.known:
                    self._learn(slot, LOOKED_BEFORE_LAST_TURN)

    def _which_power(
        self,
        seq: int,
        seat: int,
        use: cg.CardGolfMove.UsePower,
        before: cg.Table,
        after: cg.Table,
        mine_held: str | None,
    ) -> int:
        """The power used: named by the move when a 2 lends it; from the card itself when the viewer held it or a
        person of the test did; else from the move's shape, the places face up, empty or shielded before and after,
        and the card that landed on the discard pile."""
        if use.power != P.POWER_UNSPECIFIED:
            return int(use.power)
        card = mine_held or self.hints.get(seq)
        if card:
            return power_of(self.rules, card)
        if not (use.HasField("seat") or use.HasField("position") or use.HasField("own")):
            return P.POWER_DRAW_TWO
        if not use.HasField("seat"):
            # On the mover's own grid: remove its card (the place is empty after), shield it (shielded after), peek
            # at a face-down card, or turn a face-up one down.
            slot = (seat, use.position)
            shown = after.hole.grids[seat].cards[use.position]
            if shown.empty:
                return P.POWER_ADD_OR_REMOVE
            if shown.shielded and slot not in self.shielded:
                return P.POWER_SHIELD
            return P.POWER_TURN_UP_OR_DOWN if self.up[slot] else P.POWER_PEEK_OWN
        if not use.HasField("position"):  # the ace adds a card to the grid (an empty place, or a new one); a shuffle
            grid = after.hole.grids[use.seat].cards
            added = len(grid) > self.size[use.seat] or any(
                not grid[p].empty for s, p in self.empty if s == use.seat and p < len(grid)
            )
            return P.POWER_ADD_OR_REMOVE if added else P.POWER_SHUFFLE_OPPONENT
        powers = set(dict(self.rules.powers).values())
        top = power_of(self.rules, after.hole.discard[-1].code) if after.hole.discard else 0
        if use.HasField("own"):
            if P.POWER_TRADE_FOR_UP_CARD in powers and not powers & {P.POWER_BLIND_SWAP, P.POWER_SWAP_LINES}:
                return P.POWER_TRADE_FOR_UP_CARD  # its king takes the place of their face-up card: mine is discarded
            assert top in (P.POWER_BLIND_SWAP, P.POWER_SWAP_LINES), f"event {seq}: no power of {use} on the pile"
            return top
        target = (use.seat, use.position)
        gives = P.POWER_GIVE_TO_OPPONENT in powers
        if self.up[target] or top not in (P.POWER_PEEK_OPPONENT, P.POWER_TURN_UP_OR_DOWN):
            # Peeks and turns take a face-down card, and put the power card on the pile: a give, then.
            assert gives, f"event {seq}: no power of {use} is possible"
            return P.POWER_GIVE_TO_OPPONENT
        if not gives:
            return top
        # A give whose target was a peek or turn card looks the same on the pile, and a bot's card in hand is seen by
        # nobody: the grid tells them apart. A turn leaves the target face up, a give face down; a give shows its
        # power card to every seat, a peek shows the target to the peeker only. (A peeked card shown to a
        # non-peeker is missed here only if it is itself a give card.)
        shown = after.hole.grids[use.seat].cards[use.position]
        if top == P.POWER_TURN_UP_OR_DOWN:
            return top if shown.face_up else P.POWER_GIVE_TO_OPPONENT
        if shown.HasField("card") and power_of(self.rules, shown.card.code) == P.POWER_GIVE_TO_OPPONENT:
            return P.POWER_GIVE_TO_OPPONENT
        return top

    def _power(
        self,
        seq: int,
        seat: int,
        use: cg.CardGolfMove.UsePower,
        before: cg.Table,
        after: cg.Table,
        mine_held: str | None,
    ) -> None:
        lent = use.power != P.POWER_UNSPECIFIED
        if lent and before.hole.phase == cg.HOLE_PHASE_PLACE:  # the 2 in hand: to the pile, lending two powers
            self.powers[P.Name(P.POWER_TWO_POWERS)] += 1
        if lent:
            self.cases[
                "a power lent by a 2" + (", the second" if before.hole.phase == cg.HOLE_PHASE_POWER else "")
            ] += 1
        power = self._which_power(seq, seat, use, before, after, mine_held)
        self.powers[P.Name(power)] += 1  # type: ignore[arg-type]
        me = self.seat
        if power == P.POWER_PEEK_OWN:
            if me == seat:
                self._learn((seat, use.position), OWN_POWER_PEEK)
        elif power == P.POWER_PEEK_OPPONENT:
            if me == seat:
                self._learn((use.seat, use.position), POWER_PEEK)
        elif power == P.POWER_BLIND_SWAP:
            a, b = (seat, use.own), (use.seat, use.position)
            self._permute({a: b, b: a})
            for slot in (a, b):
                if slot in self.known:
                    self.known[slot] = BLIND_SWAPPED
        elif power == P.POWER_SHUFFLE_OPPONENT:
            # The opponent's cards but its shielded ones change places: nobody knows where the face-down ones went.
            moved = [s for s in self._places(use.seat) if s not in self.empty and s not in self.shielded]
            if len(moved) < self.size[use.seat]:
                self.cases["a shuffle past shielded or empty places"] += 1
            for slot in moved:
                self._forget(slot)
            # Where the face-up cards went is the shuffle's: the table after says, but the same cards must be face
            # up, as many as before.
            was = Counter(c.card.code for c in before.hole.grids[use.seat].cards if c.face_up)
            now = after.hole.grids[use.seat].cards
            assert Counter(c.card.code for c in now if c.face_up) == was, f"event {seq}: a shuffle turned cards"
            for slot in moved:
                self.up[slot] = now[slot[1]].face_up
        elif power == P.POWER_GIVE_TO_OPPONENT:
            slot = (use.seat, use.position)
            self._forget(slot)
            self.up[slot] = False
            self._learn(slot, GIVEN, mine_held)
        elif power == P.POWER_SWAP_LINES:
            lines = lines_of(self.rules.rows, self.rules.cols)
            mapping: dict[Slot, Slot] = {}
            for x, y in zip(lines[use.position], lines[use.own], strict=True):
                mapping[(use.seat, x)], mapping[(use.seat, y)] = (use.seat, y), (use.seat, x)
            self._permute(mapping)
            for slot in mapping.values():
                if slot in self.known:
                    self.known[slot] = LINES_SWAPPED
        elif power == P.POWER_TURN_UP_OR_DOWN:
            if not use.HasField("seat"):
                slot = (seat, use.position)
                self.up[slot] = False
                self._learn(slot, TURNED_DOWN)
            else:
                self.up[(use.seat, use.position)] = True
        elif power == P.POWER_DRAW_TWO:
            # The 8 (unless a 2 lent the power) and the next two cards of the stock (or its last one), to the mover.
            drawn = before.hole.stock_count - after.hole.stock_count
            assert drawn in (1, 2), f"event {seq}: the draw-two power drew {drawn} cards"
            self.offered = drawn + (0 if lent else 1)
        elif power == P.POWER_SHIELD:
            self.shielded.add((seat, use.position))
            if not lent:
                self.aside[seat] += 1  # the 5 lies aside, face up
        elif power == P.POWER_ADD_OR_REMOVE:
            if use.HasField("seat") and use.seat != seat:
                # The top card of the stock, face down and unseen by all, in the first empty place or a new one.
                free = sorted(p for s, p in self.empty if s == use.seat)
                slot = (use.seat, free[0] if free else self.size[use.seat])
                self.cases["a card added in an empty place" if free else "a card added in a new place"] += 1
                if not free:
                    self.size[use.seat] += 1
                self.empty.discard(slot)
                self._forget(slot)
                self.up[slot] = False
            else:
                slot = (seat, use.position)
                self.cases["a shielded card removed" if slot in self.shielded else "a card removed"] += 1
                self._forget(slot)
                self.empty.add(slot)
                self.shielded.discard(slot)
                self.up[slot] = True
        elif power == P.POWER_TRADE_FOR_UP_CARD:
            # The king goes face up to their place; their face-up card face up into mine; mine to the pile.
            theirs, mine = (use.seat, use.position), (seat, use.own)
            assert self.up[theirs], f"event {seq}: traded for a face-down card"
            self._forget(theirs)
            self._forget(mine)
            self.up[mine] = True
        else:
            raise AssertionError(f"event {seq}: {use} with no power")

    # -- checking one payload --------------------------------------------------------------------------------
    def check(self, payload: Payload, deck: Counter[str]) -> None:
        where = Where(payload, self.name)
        message = payload.message
        # Cards travel only in a table's holes (test_cards_travel_only_in_the_holes_of_tables): scanning every
        # card of every hole is scanning every card of the payload.
        if isinstance(message, errors_pb2.Error):
            assert not message.HasField("game"), where
        if isinstance(message, cg.TableEvent) and message.kind in (
            cg.TABLE_EVENT_KIND_MOVED,
            cg.TABLE_EVENT_KIND_TIMED_OUT,
        ):
            assert message.HasField("move") and message.HasField("seat"), where
        if isinstance(message, tpb.ListTablesResponse):
            for table in message.tables:
                assert table.status == cg.TABLE_STATUS_SEATING and not table.HasField("hole"), where
                assert not table.HasField("your_seat") and not table.join_code, where
                assert not table.HasField("last_hole"), where
            return
        for table in tables_in(message):
            self._check_table(table, deck, where)

    @property
    def name(self) -> str:
        return "the spectator" if self.seat is None else f"seat {self.seat}"

    def _check_table(self, table: cg.Table, deck: Counter[str], where: Where) -> None:
        seated = any(s.player_id == self.player_id for s in table.seats) and self.seat is not None
        assert (table.your_seat if table.HasField("your_seat") else None) == (self.seat if seated else None), where
        assert table.join_code == "" or self.owner, f"the join code shown to another than its host: {where}"
        if table.legal_moves:
            assert seated and self.seat in table.awaiting, f"legal moves shown to a viewer not awaited: {where}"
        if table.HasField("hole"):
            self._check_hole(table, deck, where)
        else:
            assert table.hole_number == 0, where
        if table.HasField("last_hole"):
            last = table.last_hole
            assert last.phase == cg.HOLE_PHASE_OVER and last.HasField("result"), where
            for c in (c for g in last.grids for c in g.cards):  # every card shown; an empty place has none
                assert (c.empty and not c.face_up and not c.HasField("card")) or (
                    c.face_up and c.HasField("card") and not c.empty
                ), where
            assert not last.HasField("held") and not last.offered, where
            shown = Counter(c.card.code for g in last.grids for c in g.cards if c.HasField("card"))
            shown.update(c.code for c in last.discard)
            shown.update(c.code for g in last.grids for c in g.aside)
            assert not shown - deck, f"a finished hole shows more than the deck: {dict(shown - deck)} in {where}"

    def _check_hole(self, table: cg.Table, deck: Counter[str], where: Where) -> None:
        hole = table.hole
        assert table.hole_number == self.hole_number, f"hole {table.hole_number}, followed {self.hole_number}"
        assert not hole.HasField("result") and hole.phase != cg.HOLE_PHASE_OVER, where
        assert len(hole.grids) == self.players, where
        mover = self.seat is not None and hole.HasField("to_move") and hole.to_move == self.seat
        # The cards offered to the mover (the draw-two power) are the mover's only.
        if hole.offered:
            assert mover, f"LEAK: the cards offered to seat {hole.to_move} shown to {self.name} in {where}"
        shown: Counter[str] = Counter()
        for grid in hole.grids:
            assert len(grid.cards) == self.size[grid.seat], f"seat {grid.seat} has {len(grid.cards)} places: {where}"
            for p, card in enumerate(grid.cards):
                slot = (grid.seat, p)
                assert card.shielded == (slot in self.shielded), f"shield of seat {grid.seat} place {p}: {where}"
                if slot in self.empty:
                    assert card.empty and not card.face_up, f"seat {grid.seat}'s place {p} not empty in {where}"
                    assert not card.HasField("card"), f"LEAK: a card at seat {grid.seat}'s empty place {p}: {where}"
                    continue
                assert not card.empty, f"seat {grid.seat}'s place {p} empty in {where}"
                up = self.up[slot]
                if card.face_up != up:
                    leak = card.face_up and card.HasField("card")
                    raise AssertionError(
                        ("LEAK (shown face up though face down): " if leak else "face-up flag differs from the moves: ")
                        + f"seat {grid.seat} position {p} in {where}"
                    )
                if not card.HasField("card"):
                    assert not up, f"face-up card of seat {grid.seat} position {p} not shown in {where}"
                    continue
                code = card.card.code
                if not up:
                    reason = self.known.get(slot)
                    assert reason is not None, (
                        f"LEAK: seat {grid.seat}'s face-down card {code} at position {p} shown to {self.name}, which "
                        f"may not know it (hole {self.hole_number}, version {table.version}) in {where}"
                    )
                    assert grid.seat == self.seat or reason not in OWN_GRID_ONLY, where
                    self.reasons[reason] += 1
                before = self.seen.setdefault(slot, code)
                assert before == code, f"seat {grid.seat} position {p} was {before}, now {code}: {where}"
                shown[code] += 1
            # Shield cards lie aside face up: everyone's.
            assert len(grid.aside) == self.aside[grid.seat], f"seat {grid.seat}'s cards aside in {where}"
            for kept in grid.aside:
                assert power_of(self.rules, kept.code) == P.POWER_SHIELD, f"{kept.code} aside in {where}"
                shown[kept.code] += 1
        shown.update(c.code for c in hole.discard)
        if hole.HasField("held"):
            assert hole.held_from == DISCARD or (hole.held_from == STOCK and mover), (
                f"LEAK: seat {hole.to_move}'s card drawn from the stock ({hole.held.code}) shown to {self.name} in "
                f"{where}"
            )
            shown[hole.held.code] += 1
        assert (hole.phase == cg.HOLE_PHASE_CHOOSE) == (self.offered > 0), f"{self.offered} offered: {where}"
        if mover:
            assert len(hole.offered) == self.offered, (
                f"{self.offered} cards offered, shown {len(hole.offered)}: {where}"
            )
            shown.update(c.code for c in hole.offered)
        assert hole.held_from == self.held_from, f"held from {hole.held_from}, followed {self.held_from}: {where}"
        assert not shown - deck, f"more cards than the deck: {dict(shown - deck)} in {where}"
        # The stock is a count only: with the grids (and their added places, less the empty ones), the cards
        # aside, the offered cards, the pile and the hand it makes the deck.
        holding = 1 if hole.held_from else 0
        places = sum(self.size.values()) - len(self.empty)
        total = places + sum(self.aside.values()) + self.offered + len(hole.discard) + holding + hole.stock_count
        assert total == sum(deck.values()), f"{total} cards in the hole, the deck has {sum(deck.values())}: {where}"


def _move_keys(table: dict[Slot, T], mapping: dict[Slot, Slot]) -> None:
    moved = {mapping[s]: table.pop(s) for s in list(table) if s in mapping}
    table.update(moved)


def public_part(table: cg.Table) -> tuple[Any, ...]:
    """What every viewer of a table at one version sees alike."""
    hole: tuple[Any, ...] = ()
    if table.HasField("hole"):
        h = table.hole
        grids = tuple(
            (
                tuple((c.card.code if c.face_up else "", c.empty, c.shielded) for c in g.cards),
                tuple(c.code for c in g.aside),
            )
            for g in h.grids
        )
        held = h.held.code if h.held_from == DISCARD else ""
        to_move = h.to_move if h.HasField("to_move") else None
        ender = h.ender if h.HasField("ender") else None
        hole = (h.phase, to_move, tuple(h.ready), grids, tuple(c.code for c in h.discard), h.stock_count, held)
        hole += (h.held_from, h.turns, tuple(h.strokes), ender, h.charges)
    last = table.last_hole.SerializeToString(deterministic=True) if table.HasField("last_hole") else b""
    seats = tuple((s.seat, s.player_id, s.bot, s.resigned) for s in table.seats)
    return (table.status, table.hole_number, tuple(table.awaiting), seats, hole, last, table.match_end)


# -- streams -----------------------------------------------------------------------------------------------------
# Opened as tests/e2e/test_table_events.py opens them (that module is not imported: it brings in the whole server).
class GrpcWatch:
    """``WatchTable`` over gRPC: ``call`` yields ``WatchTableResponse`` messages."""

    def __init__(self, client: Grpc, table_id: str, after_seq: int | None, join_code: str) -> None:
        req = tpb.WatchTableRequest(table_id=table_id, join_code=join_code)
        if after_seq is not None:
            req.after_seq = after_seq
        stub = table_service_pb2_grpc.TableServiceStub(client.channel)
        self.call = stub.WatchTable(req, metadata=client.metadata, timeout=120)

    def close(self) -> None:
        self.call.cancel()  # type: ignore[no-untyped-call]


class SseWatch:
    """``GET /v1/tables/{tableId}/events``: ``lines`` of Server-Sent Events (none when refused: ``status``)."""

    def __init__(self, client: Rest, table_id: str, after_seq: int | None, join_code: str) -> None:
        params = {"afterSeq": str(after_seq)} if after_seq is not None else {}
        if join_code:
            params["joinCode"] = join_code
        headers = {"accept": "text/event-stream"}
        request = client.http.build_request("GET", f"/v1/tables/{table_id}/events", params=params, headers=headers)
        self.response = client.http.send(request, stream=True)
        self.status = self.response.status_code
        self.lines = self.response.iter_lines() if self.status == 200 else iter(())
        if self.status == 200:
            assert self.response.headers["content-type"].startswith("text/event-stream")

    def refusal(self, client: Rest) -> Reply:
        self.response.read()
        return client.reply(self.response, tpb.WatchTableResponse)

    def close(self) -> None:
        self.response.close()


Watch = GrpcWatch | SseWatch


def watch(client: Client, table_id: str, after_seq: int | None, join_code: str) -> Watch:
    if isinstance(client, Grpc):
        return GrpcWatch(client, table_id, after_seq, join_code)
    return SseWatch(client, table_id, after_seq, join_code)


class Reader:
    """One watcher's stream of a table, read to its end in a thread of its own; cut off by the server (UNAVAILABLE),
    it connects again with ``afterSeq`` (its last event's seq). A player who has just joined a private table by its
    code watches without it: any refusal fails the tour."""

    def __init__(self, client: Client, table_id: str, after_seq: int | None, join_code: str = "") -> None:
        self.client, self.table_id, self.join_code = client, table_id, join_code
        self.payloads: list[Payload] = []
        self.reconnects = 0
        self.failure: BaseException | None = None
        self.stream: Watch | None = None
        self.started = threading.Event()
        """Set at the stream's first message (a snapshot, an event, or a heartbeat)."""
        self.done = threading.Event()
        self.arrived = threading.Condition()
        self.after_seq = self._after = after_seq
        threading.Thread(target=self._run, name=f"watch-{table_id}", daemon=True).start()

    def _run(self) -> None:
        try:
            while True:
                self.stream = watch(self.client, self.table_id, self._after, self.join_code)
                try:
                    outcome = self._drain(self.stream)
                finally:
                    self.stream.close()
                if outcome == "end":
                    return
                self.reconnects += 1
                self._after = self.payloads[-1].version if self.payloads else self._after
        except BaseException as err:
            self.failure = err
        finally:
            self.started.set()
            with self.arrived:
                self.done.set()
                self.arrived.notify_all()

    def _drain(self, stream: Watch) -> str:
        """Read to the end: "end", or "cut" (the server cut the stream off: connect again)."""
        if isinstance(stream, GrpcWatch):
            try:
                for msg in stream.call:
                    self.started.set()
                    no_unknown_fields(msg, "a WatchTable message")
                    if msg.HasField("event"):
                        raw = msg.SerializeToString()
                        self._add(Payload(f"event {msg.event.seq}", "grpc-stream", msg.event, raw, msg.event.seq))
            except grpc.RpcError as err:
                if err.code() == grpc.StatusCode.UNAVAILABLE:
                    return "cut"
                raise
            return "end"
        assert isinstance(stream, SseWatch)
        if stream.status not in (200, 204):
            assert isinstance(self.client, Rest)
            refusal = stream.refusal(self.client)
            raise AssertionError(f"the event stream refused: {stream.status} {refusal.raw}")
        # Read as SseWatch.next does, keeping each event's data as it came.
        fields: dict[str, str] = {}
        for line in stream.lines:
            if line:
                name, _, value = line.partition(": ")
                assert name in ("id", "event", "data", "retry"), line
                fields[name] = value
                continue
            fields.pop("retry", None)
            if not fields:
                continue
            self.started.set()
            kind, data = fields["event"], fields["data"]
            if kind == "error":
                assert json.loads(data)["reason"] == "ERROR_REASON_UNAVAILABLE", data
                return "cut"
            if kind == "table":
                event = cg.TableEvent()
                parse_json(data, event)
                assert fields["id"] == str(event.seq), fields
                self._add(Payload(f"event {event.seq}", "sse", event, data, event.seq))
            else:
                assert kind == "heartbeat" and "id" not in fields, fields
            fields = {}
        return "end"

    def _add(self, payload: Payload) -> None:
        with self.arrived:
            self.payloads.append(payload)
            self.arrived.notify_all()

    def table_at(self, version: int) -> cg.Table | None:
        """The table of the event ``version`` once it has come (None if it does not come soon: the caller reads
        the table instead)."""
        with self.arrived:
            self.arrived.wait_for(
                lambda: self.done.is_set() or (self.payloads and self.payloads[-1].version >= version), 5
            )
            for payload in reversed(self.payloads):
                if payload.version == version:
                    assert isinstance(payload.message, cg.TableEvent)
                    return payload.message.table
        return None

    def wait_started(self) -> None:
        assert self.started.wait(STREAM_SECONDS), f"the stream of {self.table_id} did not start"

    def wait(self) -> None:
        if not self.done.wait(STREAM_SECONDS):
            if self.stream is not None:
                self.stream.close()
            raise AssertionError(f"the stream of {self.table_id} did not end (last: {self.payloads[-1:]})")
        if self.failure is not None:
            raise self.failure


# -- players -----------------------------------------------------------------------------------------------------
@dataclass
class Player:
    """One player of this test, with a client on each transport."""

    rest: Rest
    grpc: Grpc

    @property
    def player_id(self) -> str:
        return self.rest.player_id

    def on(self, transport: str) -> Client:
        return self.rest if transport == "rest" else self.grpc

    def close(self) -> None:
        self.rest.close()
        self.grpc.close()


class LeanGrpc(Grpc):
    """``Grpc`` whose replies keep their message only (no JSON text made of each: the tour scans a reply's bytes,
    and turns it into JSON only to show a failure). Refusals are read as ``Grpc`` reads them."""

    def call(self, method: str, req: Message, stub: Any = None) -> Reply:
        try:
            message = getattr(stub or self.stub, method)(req, timeout=30, metadata=self.metadata)
        except grpc.RpcError as err:
            return self.error_reply(err)
        return Reply("grpc", message=message)


class LeanRest(Rest):
    """``Rest`` whose replies are parsed by :func:`parse_json` (refusals as ``Rest`` reads them)."""

    def reply(self, resp: httpx.Response, response: type[Message]) -> Reply:
        if resp.status_code != 200:
            return super().reply(resp, response)
        assert resp.headers.get("content-type", "").startswith("application/json"), resp.text[:300]
        message = response()
        parse_json(resp.text, message)
        return Reply("rest", message=message, raw=resp.text)


def new_player(server: Server) -> Player:
    rest = LeanRest(server.http_url)
    return Player(rest, LeanGrpc(server.grpc_target, as_=rest))


@dataclass
class Crew:
    """The two people and the spectator one match at a time uses."""

    people: list[Player]
    spectator: Player


@dataclass
class Plan:
    """One match of the tour, drawn from the tour's seeded random numbers."""

    index: int
    preset: str
    seats: int
    people: dict[int, int]
    """Seat -> index of the person of the crew sitting there."""
    transports: dict[int, str]
    """Seat -> the transport its person's unary calls use."""
    bots: dict[int, int]
    private: bool
    stream: str
    """The transport every watcher of the match uses (they alternate between matches)."""
    spectator_after: int | None
    spectator_transport: str
    seed: int
    house_rules: tuple[str, ...] = ()
    """House rules of the turn the table is created with (``HOUSE_RULES``, but ``early_out`` where it cannot be)."""


def plans(kind: str, part: int, count: int) -> list[Plan]:
    rng = random.Random(f"table-leaks:{kind}:{part}")
    # Every preset in each twelve matches, Cambio twice and Powers three times (it has the most powers to cover).
    cycle = [*PRESETS, "cambio", "powers", "powers"]
    rng.shuffle(cycle)
    out = []
    for index in range(count):
        seats = rng.choice((2, 2, 2, 3, 3, 4))
        people_count = rng.choice((0, 1, 1, 2, 2, 2))
        taken = rng.sample(range(seats), people_count)
        people = {seat: n for n, seat in enumerate(taken)}
        levels = (cg.BOT_LEVEL_RANDOM, cg.BOT_LEVEL_RANDOM, cg.BOT_LEVEL_GREEDY)
        out.append(
            Plan(
                index=index,
                preset=cycle[index % len(cycle)],
                seats=seats,
                people=people,
                transports={seat: rng.choice(("rest", "grpc")) for seat in people},
                bots={seat: rng.choice(levels) for seat in range(seats) if seat not in people},
                private=rng.random() < 0.25,
                stream=("grpc", "rest")[index % 2],
                spectator_after=rng.choice((None, 0)),
                spectator_transport=rng.choice(("rest", "grpc")),
                seed=rng.randrange(2**32),
                house_rules=house_rules_for(rng, cycle[index % len(cycle)]),
            )
        )
        if out[-1].preset == "six-card-jokers" and out[-1].seats < 4:  # seed 001: four or more players
            # Random bots take the seats added, drawing nothing: every other plan stays as it was drawn.
            extra = {seat: cg.BOT_LEVEL_RANDOM for seat in range(out[-1].seats, 4)}
            out[-1].bots = {**out[-1].bots, **extra}
            out[-1].seats = 4
    return out


def house_rules_for(rng: random.Random, preset: str) -> tuple[str, ...]:
    """For a share of the matches: the turn's house rules the preset can take (all of them mostly)."""
    if rng.random() >= HOUSE_RULES_SHARE:
        return ()
    names = [name for name in HOUSE_RULES if not (name == "early_out" and preset in NO_EARLY_OUT)]
    if rng.random() < 0.3:
        names = rng.sample(names, rng.randint(1, len(names)))
    return tuple(names)


# -- one match ---------------------------------------------------------------------------------------------------
def pick(rng: random.Random, table: cg.Table) -> cg.CardGolfMove:
    """A random move of the viewer's legal moves: a kind by ``KIND_WEIGHTS``, then a move of that kind (a power
    the 2 lends: the power first, each alike, then one of its moves)."""
    moves = list(table.legal_moves)
    kinds = sorted({m.WhichOneof("kind") or "" for m in moves})
    weights = POWER_WEIGHTS if table.rules.powers else KIND_WEIGHTS
    (kind,) = rng.choices(kinds, [weights.get(k, 1.0) for k in kinds])
    of_kind = [m for m in moves if m.WhichOneof("kind") == kind]
    if kind == "use_power":
        power = rng.choice(sorted({m.use_power.power for m in of_kind}))
        return rng.choice([m for m in of_kind if m.use_power.power == power])
    if kind != "swap":
        return rng.choice(of_kind)
    grid = table.hole.grids[table.your_seat].cards
    (chosen,) = rng.choices(of_kind, [1.0 if grid[m.swap.position].face_up else 3.0 for m in of_kind])
    return chosen


@dataclass
class Tally:
    matches: int = 0
    presets: Counter[str] = field(default_factory=Counter)
    payloads: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    powers: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    """Moves of every seat by kind (bots' too, as the spectator's stream names them)."""
    cases: Counter[str] = field(default_factory=Counter)
    house_rules: int = 0
    """Matches of tables created with house rules."""
    moves: int = 0
    versions: int = 0
    canaries: int = 0
    reconnects: int = 0

    def add(self, other: Tally) -> None:
        self.matches += other.matches
        self.moves += other.moves
        self.versions += other.versions
        self.canaries += other.canaries
        self.reconnects += other.reconnects
        self.house_rules += other.house_rules
        for mine, theirs in (
            (self.presets, other.presets),
            (self.payloads, other.payloads),
            (self.refusals, other.refusals),
            (self.reasons, other.reasons),
            (self.powers, other.powers),
            (self.kinds, other.kinds),
            (self.cases, other.cases),
        ):
            mine.update(theirs)


@dataclass
class Viewer:
    name: str
    player: Player
    seat: int | None
    owner: bool
    payloads: list[Payload] = field(default_factory=list)
    reader: Reader | None = None


class Match:
    """One match of a plan, played by a crew; every payload kept for the scan."""

    def __init__(self, plan: Plan, crew: Crew, read_seed: Callable[[str], str]) -> None:
        self.plan, self.crew, self.read_seed = plan, crew, read_seed
        self.rng = random.Random(plan.seed)
        self.hints: dict[int, str] = {}
        self.tally = Tally(matches=1, presets=Counter([plan.preset]), house_rules=1 if plan.house_rules else 0)
        host = crew.people[min(plan.people.values())] if plan.people else crew.spectator
        self.spectator = Viewer("the spectator", crew.spectator, None, host is crew.spectator)
        self.people = {
            seat: Viewer(f"person {n} at seat {seat}", crew.people[n], seat, crew.people[n] is host)
            for seat, n in plan.people.items()
        }
        self.host = next((v for v in self.people.values() if v.owner), self.spectator)
        self.table_id = ""
        self.code = ""
        self.views: dict[int, cg.Table] = {}
        """Per person's seat: the latest table it was given."""
        self.current: cg.Table | None = None
        """The latest version of the table any viewer was given."""

    def call(self, viewer: Viewer, what: str, method: str, *args: Any, **kwargs: Any) -> Reply:
        """``Tables.method`` called by ``viewer`` over its transport in this match; the payload kept for the scan."""
        if viewer is self.spectator:
            transport = self.plan.spectator_transport
        else:
            assert viewer.seat is not None
            transport = self.plan.transports[viewer.seat]
        reply: Reply = getattr(Tables(viewer.player.on(transport)), method)(*args, **kwargs)
        message = reply.message if reply.ok else reply.error
        assert message is not None
        if reply.transport == "grpc":
            no_unknown_fields(message, what)
        if not self.table_id:  # the create
            (made,) = tables_in(message)
            self.table_id = made.id
        raw = reply.raw or message.SerializeToString()
        viewer.payloads.append(Payload(what, reply.transport, message, raw, version_in(message, self.table_id)))
        for table in tables_in(message):
            if table.id != self.table_id:
                continue
            if self.current is None or table.version > self.current.version:
                self.current = table
            if viewer.seat is not None and table.HasField("your_seat"):
                self.views[viewer.seat] = table
        if not reply.ok:
            assert reply.error is not None
            self.tally.refusals[R.Name(reply.error.reason)] += 1
        return reply

    def play(self) -> Tally:
        plan = self.plan
        options = {"preset": plan.preset, "seats": plan.seats, "holes": 1, "private": plan.private}
        rules = cg.CardGolfRules(max_rounds=MAX_ROUNDS)  # the preset's rules but this one (and the house rules)
        made = self.call(
            self.host, "CreateTable", "create", **options, rules=rules, house_rules=plan.house_rules, take_seat=False
        )
        table = made.expect_ok().table
        if "flip_as_turn" in plan.house_rules:
            assert table.rules.flip_as_turn, table.rules
        if "early_out" in plan.house_rules:
            assert table.rules.early_out, table.rules
        if "flip_endgame" in plan.house_rules:
            assert table.rules.flip_after_discard == cg.FLIP_RULE_ENDGAME, table.rules
        assert self.current is not None
        table_id = self.table_id
        code = self.code = self.current.join_code
        assert bool(code) == plan.private
        spectator = Reader(self.crew.spectator.on(plan.stream), table_id, plan.spectator_after, code)
        self.spectator.reader = spectator
        spectator.wait_started()  # a snapshot is taken before anything else happens: no hole to follow from midway
        for seat, viewer in sorted(self.people.items()):
            if plan.private and not viewer.owner:
                joined = self.call(viewer, "JoinTableByCode", "join_by_code", code, seat=seat)
            else:
                joined = self.call(viewer, "JoinTable", "join", table_id, seat=seat, join_code=code)
            # The whole log now and then, else from its join on (what came before has no cards).
            after = 0 if self.rng.random() < 0.3 else int(joined.expect_ok().table.version)
            viewer.reader = Reader(viewer.player.on(plan.stream), table_id, after)
        for seat, level in sorted(plan.bots.items()):
            self.call(self.host, "AddBot", "add_bot", table_id, level, seat=seat).expect_ok()
        if self.rng.random() < 0.15:
            self.call(self.spectator, "ListTables", "list", preset=plan.preset, page_size=5).expect_ok()
        self.call(self.host, "StartTable", "start", table_id).expect_ok()
        self._play_out()
        for viewer in self._viewers():
            assert viewer.reader is not None
            viewer.reader.wait()
            self.tally.reconnects += viewer.reader.reconnects
        self._scan()
        return self.tally

    def _viewers(self) -> list[Viewer]:
        return [self.spectator, *self.people.values()]

    def _get(self, viewer: Viewer) -> cg.Table:
        join = self.code if viewer is self.spectator else ""
        reply = self.call(viewer, "GetTable", "get", self.table_id, join_code=join)
        table: cg.Table = reply.expect_ok().table
        return table

    def _act(self, viewer: Viewer, what: str, chosen: cg.CardGolfMove, expected: int | None = None) -> Reply:
        return self.call(viewer, what, "act", self.table_id, chosen, expected_version=expected)

    def _play_out(self) -> None:
        """Each person awaited echoes a random move of its own legal moves, until the match is over."""
        rng = self.rng
        moves = 0
        while True:
            assert self.current is not None
            if self.current.status != PLAYING:
                break
            awaited = [s for s in self.current.awaiting if s in self.people]
            if not awaited:  # bots past a request's budget: the table clock plays them
                time.sleep(0.05)
                self._get(self.spectator)
                continue
            if moves >= MAX_PERSON_MOVES:
                for viewer in self.people.values():
                    self.call(viewer, "ResignTable", "resign", self.table_id)
                continue
            seat = rng.choice(awaited)
            me = self.people[seat]
            mine = self.views.get(seat)
            if (mine is None or mine.version != self.current.version) and rng.random() < 0.8:
                assert me.reader is not None  # a thin client: the table its own stream brought
                mine = me.reader.table_at(self.current.version)
            if mine is None or mine.version != self.current.version:
                mine = self._get(me)
            if mine.version != self.current.version or not mine.legal_moves:
                continue
            self._now_and_then(seat, mine)
            chosen = pick(rng, mine)
            if chosen.WhichOneof("kind") == "use_power" and mine.hole.HasField("held"):
                self.hints[mine.version + 1] = mine.hole.held.code  # a power of a 2's: named by the move
            self._act(me, "Act", chosen, mine.version).expect_ok()
            moves += 1
            if rng.random() < 0.05:
                self._get(self.spectator)
        self.tally.moves += moves
        self.tally.versions += self.current.version
        # After the end: refusals with the final table, and the final table to everyone.
        for viewer in self.people.values():
            if rng.random() < 0.5:
                self._act(viewer, "Act (match over)", move("drawStock")).expect_error(R.ERROR_REASON_MATCH_OVER)
            self._get(viewer)
        self._get(self.spectator)

    def _now_and_then(self, seat: int, mine: cg.Table) -> None:
        """Now and then: another person acting out of turn, a stale version, a move of the wrong phase, a
        spectator acting, a read by another person."""
        rng = self.rng
        roll = rng.random()
        me = self.people[seat]
        others = [s for s in self.people if s != seat]
        if roll < 0.08 and others and mine.hole.phase != cg.HOLE_PHASE_SETUP:
            other = self.people[rng.choice(others)]
            self._act(other, "Act (not its turn)", move("drawStock")).expect_error(R.ERROR_REASON_NOT_YOUR_TURN)
        elif roll < 0.12 and mine.version > 1:
            stale = self._act(me, "Act (stale)", mine.legal_moves[0], mine.version - 1)
            stale.expect_error(R.ERROR_REASON_STALE_VERSION)
        elif roll < 0.16:
            # (A flip is a turn of its own in the draw phase under the house rule flip_as_turn; a discard is not.)
            phase = mine.hole.phase
            wrong = move("knock") if phase == cg.HOLE_PHASE_FLIP else move("discard")
            if phase != cg.HOLE_PHASE_DRAW and phase != cg.HOLE_PHASE_FLIP:
                wrong = move("flip", position=0)
            self._act(me, "Act (wrong phase)", wrong).expect_error(R.ERROR_REASON_WRONG_PHASE)
        elif roll < 0.18:
            # A private table does not exist for a stranger, whatever it asks without the code.
            denied = R.ERROR_REASON_NOT_FOUND if self.plan.private else R.ERROR_REASON_PERMISSION_DENIED
            self._act(self.spectator, "Act (spectator)", move("drawStock")).expect_error(denied)
        elif roll < 0.24 and others:
            self._get(self.people[rng.choice(others)])

    # -- the scan ------------------------------------------------------------------------------------------------
    def _scan(self) -> None:
        """Every payload of every viewer, in version order, against what that viewer may know at that version."""
        final = self.current
        assert final is not None and final.status == OVER
        deck = deck_of(final.rules, self.plan.seats)
        seed = self.read_seed(self.table_id)
        assert len(seed) >= 16
        publics: dict[int, tuple[tuple[Any, ...], str]] = {}
        commitments: dict[str, str] = {}  # every table of the match shows one commitment, from creation to end
        for viewer in self._viewers():
            assert viewer.reader is not None
            events = viewer.reader.payloads
            seqs = [p.version for p in events]
            first = seqs[0] if seqs else final.version
            assert seqs == list(range(first, final.version + 1)), f"{viewer.name}'s stream: {seqs}"
            if viewer.reader.after_seq is not None:
                assert first == viewer.reader.after_seq + 1, f"{viewer.name}'s stream: {seqs}"
            sight = Sight(viewer.seat, viewer.player.player_id, viewer.owner, self.hints)
            pending = sorted(viewer.payloads, key=lambda p: p.version)
            self.tally.payloads["unary"] += len(pending)
            self.tally.payloads["events"] += len(events)
            at = 0
            for event in events:
                while at < len(pending) and pending[at].version < event.version:
                    sight.check(pending[at], deck)
                    at += 1
                assert isinstance(event.message, cg.TableEvent)
                sight.apply(event.message)
                sight.check(event, deck)
                self.tally.canaries += canaries(sight, event, deck)
                while at < len(pending) and pending[at].version == event.version:
                    sight.check(pending[at], deck)
                    at += 1
            assert at == len(pending), f"{pending[at].what} to {viewer.name} after its stream's last event"
            self.tally.reasons.update(sight.reasons)
            if viewer is self.spectator:
                self.tally.powers.update(sight.powers)
                self.tally.kinds.update(sight.kinds)
                self.tally.cases.update(sight.cases)
            for payload in [*viewer.payloads, *events]:
                mine = [table for table in tables_in(payload.message) if table.id == self.table_id]
                # The seed only in a table of the match that is over (in its ``seed``); the commitment from the start.
                if payload.holds(seed):
                    assert mine and all(t.status == OVER for t in mine), (
                        f"LEAK: the match seed in {Where(payload, viewer.name)}"
                    )
                for table in mine:
                    assert table.seed == (seed if table.status == OVER else ""), (
                        f"seed in {Where(payload, viewer.name)}"
                    )
                    assert table.shuffle_algorithm == "golf-shuffle-v1" and len(table.commitment) == 64
                    assert commitments.setdefault(self.table_id, table.commitment) == table.commitment
                    part, said = public_part(table), f"{payload.what} to {viewer.name}"
                    seen = publics.setdefault(int(table.version), (part, said))
                    assert seen[0] == part, f"version {table.version}: {said} differs from {seen[1]}"


def canaries(sight: Sight, event: Payload, deck: Counter[str]) -> int:
    """The scan is not blind: copies of ``event`` (just scanned) made to leak, one way at a time, must fail it
    naming a LEAK: a card put on a face-down position the viewer does not know, a face-down card turned face up,
    another seat's card drawn from the stock put in its hand, a card offered to another seat (or to none) shown
    (each way once a viewer and match). The number of copies tried."""
    assert isinstance(event.message, cg.TableEvent)
    if not event.message.table.HasField("hole") or len(sight.canaries) == len(CANARIES):
        return 0
    tried = 0
    hole = event.message.table.hole
    unknown = [
        (g, p)
        for g, grid in enumerate(hole.grids)
        for p, card in enumerate(grid.cards)
        if not card.face_up and not card.empty and (grid.seat, p) not in sight.known
    ]
    stock_held = hole.held_from == STOCK and not hole.HasField("held")
    not_mover = sight.seat is None or not hole.HasField("to_move") or hole.to_move != sight.seat
    for how in CANARIES:
        if how in sight.canaries:
            continue
        leaky = cg.TableEvent()
        leaky.CopyFrom(event.message)
        h = leaky.table.hole
        if how == "stock card in hand":
            if not stock_held:
                continue
            h.held.code = "AS"
        elif how == "offered to another seat":
            if not not_mover:
                continue
            h.offered.add(code="AS")
        else:
            if not unknown:
                continue
            g, p = unknown[0]
            h.grids[g].cards[p].card.code = "AS"
            h.grids[g].cards[p].face_up = how == "shown face up"
        counted = Counter(sight.reasons)
        with pytest.raises(AssertionError, match="LEAK"):
            sight.check(Payload(f"{event.what} made to leak ({how})", event.transport, leaky, b"", event.version), deck)
        sight.reasons = counted
        sight.canaries.add(how)
        tried += 1
    return tried


# -- the tour ----------------------------------------------------------------------------------------------------
def seed_reader(database_url: str) -> Callable[[str], str]:
    """The stored match seed of a table (read once its match is over, to scan the payloads for it)."""
    query = "SELECT seed FROM card_golf_tables WHERE id = "

    def read(table_id: str) -> str:
        if database_url.startswith("sqlite:///"):
            with closing(sqlite3.connect(database_url.removeprefix("sqlite:///"), timeout=30)) as conn:
                row = conn.execute(query + "?", (table_id,)).fetchone()
        else:
            with psycopg.connect(database_url) as pg:
                row = pg.execute(query + "%s", (table_id,)).fetchone()
        assert row is not None, table_id
        return str(row[0])

    return read


@pytest.fixture(scope="module")
def crews(server: Server) -> Iterator[queue.Queue[Crew]]:
    """AT_ONCE crews of three players (two people, a spectator), shared by the module's tests."""
    made = [Crew([new_player(server), new_player(server)], new_player(server)) for _ in range(AT_ONCE)]
    pool: queue.Queue[Crew] = queue.Queue()
    for crew in made:
        pool.put(crew)
    yield pool
    for crew in made:
        for player in [*crew.people, crew.spectator]:
            player.close()


def tour(server: Server, crews: queue.Queue[Crew], part: int) -> Tally:
    kind = "sqlite" if server.database_url.startswith("sqlite") else "postgres"
    counts = MATCHES[kind]
    read_seed = seed_reader(server.database_url)

    def one(plan: Plan) -> Tally:
        crew = crews.get()
        try:
            return Match(plan, crew, read_seed).play()
        finally:
            crews.put(crew)

    total = Tally()
    with ThreadPoolExecutor(AT_ONCE) as pool:
        for tally in pool.map(one, plans(kind, part, counts[part])):
            total.add(tally)
    print(
        f"\n{kind} part {part}: {total.matches} matches, {total.versions} versions, {total.moves} moves of people,"
        f" {total.canaries} leaky copies caught,"
        f" payloads {dict(total.payloads)}, refusals {dict(total.refusals)}, moves by kind {dict(total.kinds)},"
        f" powers {dict(total.powers)}, rarer turns {dict(total.cases)}, {total.house_rules} matches with house rules,"
        f" face-down cards shown by reason {dict(total.reasons)}, reconnects {total.reconnects},"
        f" presets {dict(total.presets)}"
    )
    return total


@pytest.mark.parametrize("part", [0, 1, 2])
def test_random_matches_show_no_viewer_a_card_it_may_not_know(
    server: Server, crews: queue.Queue[Crew], part: int
) -> None:
    total = tour(server, crews, part)
    assert total.matches == MATCHES["sqlite" if server.database_url.startswith("sqlite") else "postgres"][part]
    assert set(total.presets) == set(PRESETS)
    assert total.house_rules > 0  # the plans are seeded: some tables of each part have the house rules
    assert total.payloads["events"] > total.matches * 10 and total.payloads["unary"] > total.matches * 5
    assert total.canaries > total.matches, "the scan was not shown to catch leaks"


def test_cards_travel_only_in_the_holes_of_tables() -> None:
    """What makes the tour's scan complete: in every payload of TableService a card can only lie in a table's hole
    in play or last hole (its grids and the cards aside beside them, discard pile, hand, offered cards), or in a
    solitaire game of an ``Error`` (never set by a table's refusals: the tour checks it)."""
    tables = {("golf.v1.Table.hole", *path) for path in HOLE_CARDS} | {
        ("golf.v1.Table.last_hole", *path) for path in HOLE_CARDS
    }
    places = {path[path.index(t) :] for path in card_paths() for t in path if t.startswith("golf.v1.Table.")}
    assert places == tables
    for path in card_paths():
        table_path = any(t.startswith("golf.v1.Table.") for t in path)
        assert table_path or path[0] == "golf.v1.Error.game", path
