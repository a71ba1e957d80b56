"""The fast JSON writer gives exactly what protobuf's json_format gives, on whole games and every message."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import orjson
from google.protobuf import json_format
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from golf.adapters.proto_json import to_json
from golf.api.convert import deal_to_proto, game_to_proto, move_to_proto
from golf.app.records import DealRecord, GameRecord, GameSnapshot
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.state import Layout, State
from golf.v1 import errors_pb2, solitaire_pb2
from golf.v1 import solitaire_service_pb2 as pb

T0 = datetime(2026, 11, 29, 12, 0, 0, 123456, tzinfo=UTC)


def to_dict(message: Message) -> object:
    """What ``to_json`` wrote, read back (memoised parts are copied in as JSON text: this checks them too)."""
    return orjson.loads(to_json(message))


def reference(message: Message) -> dict[str, object]:
    return json_format.MessageToDict(message, always_print_fields_with_no_presence=True)


def deal_record(preset: str, seed: str, pysol: int | None = None) -> DealRecord:
    rules = PRESETS[preset]
    layout = Layout.from_pysol(pysol) if pysol else Layout.from_seed(rules, seed)
    return DealRecord("d", preset, 1, rules, seed, "golf-shuffle-v1", "c" * 64, layout, T0, pysol)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(sorted(PRESETS)), st.text(min_size=1, max_size=8), st.integers(0, 2**32))
def test_whole_games(preset: str, seed: str, choices: int) -> None:
    chooser = random.Random(choices)
    deal = deal_record(preset, seed)
    assert to_dict(deal_to_proto(deal)) == reference(deal_to_proto(deal))
    state = State.initial(deal.rules, deal.layout)
    version = 0
    while True:
        game = GameRecord("g", "d", version, state.status.value, state.score, [], T0, T0 + timedelta(seconds=version))
        msg = pb.PlayMoveResponse(game=game_to_proto(GameSnapshot(game, deal, state, T0 + timedelta(seconds=3.5))))
        assert to_dict(msg) == reference(msg)
        moves = state.legal_moves()
        if not moves:
            break
        move = chooser.choice(moves)
        msg.move.CopyFrom(move_to_proto(move))
        assert to_dict(msg) == reference(msg)
        state = state.apply(move)
        version += 1


def test_other_messages() -> None:
    deal = deal_record("standard", "", pysol=5)
    messages: list[Message] = [
        pb.CreateDealResponse(deal=deal_to_proto(deal)),
        pb.ListGamesResponse(next_page_token="abc"),
        pb.ListGamesResponse(),
        errors_pb2.Error(reason=errors_pb2.ERROR_REASON_STALE_VERSION, message="m", field="f"),
        solitaire_pb2.SolitaireRules(),
        solitaire_pb2.SolitaireRules(decks=1, wrap=False),
        pb.PlayMoveRequest(game_id="g", expected_version=0),
        solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=0)),
    ]
    for message in messages:
        assert to_dict(message) == reference(message), message


def test_bytes_are_compact_json() -> None:
    body = to_json(solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock()))
    assert body == b'{"drawStock":{}}'


def test_card_golf_events_with_memoised_parts() -> None:
    """A match's events, whose finished holes are memoised (by wire bytes here, by identity in the converter):
    every event equals json_format's output, the first time and again."""
    from golf.adapters.proto_json import memoise
    from golf.api.table_watch import event_item
    from golf.app.identity import Caller
    from golf.app.tables.bots import play_bots
    from golf.app.tables.entries import BotAdded, TableStarted
    from golf.app.tables.events import SharedEvent
    from golf.app.tables.options import TableOptions
    from golf.app.tables.records import LoggedEntry, TableRecord
    from golf.app.tables.state import apply_entry, new_table
    from golf.app.tables.status import TableStatus

    memoise("golf.v1.HoleResult")
    memoise("golf.v1.HoleView")
    options = TableOptions.build(preset="four-card", seats=3, holes=3)
    table = new_table(options, "memo-seed")
    for seat in range(3):
        table = apply_entry(table, BotAdded(seat, "greedy"))
    table = apply_entry(table, TableStarted())
    record = TableRecord("t", options, "memo-seed", "owner", T0)
    viewers = [Caller("watcher"), Caller("other")]
    finished_holes_seen = 0
    while table.status is not TableStatus.OVER:
        applied = play_bots(table, max_moves=1)
        table = applied.table
        shared = SharedEvent(record, LoggedEntry(table.version, applied.entries[0], T0), table, T0)
        for caller in viewers:
            message = event_item(shared.for_viewer(caller)).data
            assert to_dict(message) == reference(message)
            assert to_dict(message) == reference(message)
        finished_holes_seen = max(finished_holes_seen, len(table.results))
    assert finished_holes_seen == 3


def test_timestamps_are_written_as_protobuf_writes_them() -> None:
    """Whole seconds, milli-, micro- and nanoseconds, before the epoch and up to the last second protobuf allows."""
    from google.protobuf.timestamp_pb2 import Timestamp

    from golf.v1 import card_golf_pb2

    cases = [(0, 0), (1_764_547_200, 0), (1_764_547_200, 5_000_000), (1_764_547_200, 123_456_000)]
    cases += [(-1_764_547_201, 5), (-1, 999_999_999), (253_402_300_799, 999_999_999), (1_764_547_200, 7)]
    for seconds, nanos in cases:
        event = card_golf_pb2.TableEvent(time=Timestamp(seconds=seconds, nanos=nanos))
        assert to_dict(event) == reference(event), (seconds, nanos)
