"""Helpers of the e2e tier for live tables: ``golf.v1.TableService`` over either transport with one interface, and
the client-side check that a payload shows no card its viewer may not know."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from golf.v1 import card_golf_pb2 as cg
from golf.v1 import table_service_pb2 as tpb
from golf.v1 import table_service_pb2_grpc
from tests.e2e.support import Client, Reply, ServiceCalls, new_key

SERVICE = tpb.DESCRIPTOR.services_by_name["TableService"]


class Tables(ServiceCalls):
    """The unary RPCs of TableService for ``client``'s player, over ``client``'s transport."""

    def __init__(self, client: Client) -> None:
        super().__init__(client, SERVICE, tpb, table_service_pb2_grpc.TableServiceStub)
        self.transport = client.name

    # one method per RPC, taking the request message
    def create(self, **fields: Any) -> Reply:
        return self.call("CreateTable", tpb.CreateTableRequest(**fields))

    def get(self, table_id: str, join_code: str = "") -> Reply:
        return self.call("GetTable", tpb.GetTableRequest(table_id=table_id, join_code=join_code))

    def list(self, preset: str = "", page_size: int = 0) -> Reply:
        return self.call("ListTables", tpb.ListTablesRequest(preset=preset, page_size=page_size))

    def join(self, table_id: str, key: str | None = None, **fields: Any) -> Reply:
        req = tpb.JoinTableRequest(table_id=table_id, idempotency_key=key or new_key(), **fields)
        return self.call("JoinTable", req)

    def join_by_code(self, join_code: str, key: str | None = None, **fields: Any) -> Reply:
        req = tpb.JoinTableByCodeRequest(join_code=join_code, idempotency_key=key or new_key(), **fields)
        return self.call("JoinTableByCode", req)

    def add_bot(
        self, table_id: str, level: cg.BotLevel.ValueType = cg.BOT_LEVEL_GREEDY, key: str | None = None, **fields: Any
    ) -> Reply:
        req = tpb.AddBotRequest(table_id=table_id, level=level, idempotency_key=key or new_key(), **fields)
        return self.call("AddBot", req)

    def start(self, table_id: str, key: str | None = None) -> Reply:
        return self.call("StartTable", tpb.StartTableRequest(table_id=table_id, idempotency_key=key or new_key()))

    def act(
        self, table_id: str, move: cg.CardGolfMove, key: str | None = None, expected_version: int | None = None
    ) -> Reply:
        req = tpb.ActRequest(table_id=table_id, move=move, idempotency_key=key or new_key())
        if expected_version is not None:
            req.expected_version = expected_version
        return self.call("Act", req)

    def leave(self, table_id: str, key: str | None = None, **fields: Any) -> Reply:
        req = tpb.LeaveTableRequest(table_id=table_id, idempotency_key=key or new_key(), **fields)
        return self.call("LeaveTable", req)

    def resign(self, table_id: str, key: str | None = None) -> Reply:
        return self.call("ResignTable", tpb.ResignTableRequest(table_id=table_id, idempotency_key=key or new_key()))

    def quick_play(self, key: str | None = None, **fields: Any) -> Reply:
        return self.call("QuickPlay", tpb.QuickPlayRequest(idempotency_key=key or new_key(), **fields))


def move(kind: str, **fields: Any) -> cg.CardGolfMove:
    """A move of ``kind`` (its proto3 JSON name: ``drawStock``, ``reveal`` ...) with ``fields``."""
    return json_format.ParseDict({kind: fields}, cg.CardGolfMove())


# -- what a viewer may know --------------------------------------------------------------------------------------
def tables_in(message: Message) -> list[cg.Table]:
    """Every ``Table`` anywhere in ``message`` (a response's, a listing's, an ``Error``'s)."""
    if isinstance(message, cg.Table):
        return [message]
    found: list[cg.Table] = []
    for fd, value in message.ListFields():
        if fd.message_type is None:
            continue
        for item in value if fd.is_repeated else [value]:
            found += tables_in(item)
    return found


def cards_in(message: Message) -> Counter[str]:
    """The codes of every card anywhere in ``message``."""
    if message.DESCRIPTOR.full_name == "golf.v1.Card":
        return Counter([message.code])  # type: ignore[attr-defined]
    found: Counter[str] = Counter()
    for fd, value in message.ListFields():
        if fd.message_type is None:
            continue
        if fd.message_type.GetOptions().map_entry:  # a map: its values may be messages, its keys never are
            items = list(value.values()) if fd.message_type.fields_by_name["value"].message_type else []
        else:
            items = list(value) if fd.is_repeated else [value]
        for item in items:
            found += cards_in(item)
    return found


@dataclass
class Knowledge:
    """What one seat may know of its own face-down cards in the hole in play, as its own moves tell it: the
    positions it looked at (start cards it peeked at, peek strokes). Face-up cards and the discard pile are
    everyone's."""

    seat: int | None
    hole_number: int = 0
    peeked: set[int] = field(default_factory=set)

    def moved(self, table: cg.Table, move: cg.CardGolfMove) -> None:
        """The viewer made ``move`` on ``table`` (as it stood before)."""
        self.follow(table)
        kind = move.WhichOneof("kind")
        if kind == "reveal":
            self.peeked.update(move.reveal.positions)
        elif kind == "peek_stroke":
            self.peeked.add(move.peek_stroke.position)
        elif kind == "swap" and not table.rules.swap_face_up:
            self.peeked.add(move.swap.position)

    def follow(self, table: cg.Table) -> None:
        if table.hole_number != self.hole_number:  # a new hole: nothing known of its face-down cards yet
            self.hole_number, self.peeked = table.hole_number, set()


def check_hidden(reply: Reply, knowledge: Knowledge) -> None:
    """Every card in the payload is one its viewer may know: face up, its own peeked ones, the discard pile, the
    card in its own hand (or one taken from the discard pile), or a card of a finished hole. Nothing else in the
    payload carries a card."""
    message = reply.message if reply.ok else reply.error
    assert message is not None
    found = tables_in(message)
    where = f"{reply.transport} payload for seat {knowledge.seat}: {reply.raw[:600]}"
    accounted: Counter[str] = Counter()
    for table in found:
        assert (table.your_seat if table.HasField("your_seat") else None) == knowledge.seat, where
        hole = table.hole
        if table.HasField("hole"):
            knowledge.follow(table)
            for grid in hole.grids:
                for position, shown in enumerate(grid.cards):
                    if not shown.HasField("card"):
                        continue
                    own_peek = grid.seat == knowledge.seat and position in knowledge.peeked
                    assert shown.face_up or own_peek, f"seat {grid.seat}'s face-down card {position} shown in {where}"
                    accounted[shown.card.code] += 1
            accounted.update(c.code for c in hole.discard)
            if hole.HasField("held"):
                mine = knowledge.seat is not None and hole.HasField("to_move") and hole.to_move == knowledge.seat
                assert hole.held_from == cg.CARD_SOURCE_DISCARD or mine, f"another's stock card shown in {where}"
                accounted[hole.held.code] += 1
            for grid in hole.grids:  # shield cards kept aside lie face up: everyone's
                accounted.update(c.code for c in grid.aside)
            if hole.offered:  # the cards to keep one of after the draw-two power: the mover's only
                mine = knowledge.seat is not None and hole.HasField("to_move") and hole.to_move == knowledge.seat
                assert mine, f"the cards offered to the mover shown in {where}"
                accounted.update(c.code for c in hole.offered)
            assert not hole.HasField("result"), where
        if table.HasField("last_hole"):
            assert table.last_hole.phase == cg.HOLE_PHASE_OVER, where
            # A finished hole shows every card: nothing of it is hidden any more.
            accounted += cards_in(table.last_hole)
        assert not table.legal_moves or knowledge.seat is not None, where
        assert table.join_code == "" or table.owner_id, where
    assert not cards_in(message) - accounted, f"cards {cards_in(message) - accounted} outside the view in {where}"
