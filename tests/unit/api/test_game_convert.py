"""``game_to_proto`` and ``fill_game`` (columns, legal moves and rules merged from cached wire bytes, the game filled
in place in a reply) give exactly the message the plain construction gives, on whole games of every preset, over or
not; and the JSON of a reply with its columns and moves memoised is protobuf's ``json_format`` output."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from google.protobuf import json_format
from google.protobuf.duration_pb2 import Duration
from hypothesis import given, settings
from hypothesis import strategies as st

from golf.adapters.proto_json import memoise, to_json
from golf.api import convert
from golf.api.convert import _CARD_PROTOS, _STATUS, fill_game, game_to_proto, move_to_proto, rules_to_proto, timestamp
from golf.app.records import DealRecord, GameRecord, GameSnapshot, Verdict
from golf.engine.solitaire.moves import Draw, PlayColumn
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.state import Layout, State, Status
from golf.engine.solitaire.view import view
from golf.v1 import cards_pb2, solitaire_pb2
from golf.v1 import solitaire_service_pb2 as pb

T0 = datetime(2026, 11, 29, 12, 0, 0, 123456, tzinfo=UTC)


def plain_game(snap: GameSnapshot) -> solitaire_pb2.Game:
    """The game built field by field, every card a message of its own: what ``game_to_proto`` must equal."""
    seen = view(snap.state, snap.seed)
    game = snap.game
    elapsed = Duration()
    end = game.finished_at or snap.as_of
    elapsed.FromTimedelta(max(end - game.created_at, end - end))
    msg = solitaire_pb2.Game(
        id=game.id,
        deal_id=game.deal_id,
        status=_STATUS[seen.status],
        score=seen.score,
        version=game.version,
        columns=[cards_pb2.Column(cards=[_CARD_PROTOS[c] for c in col]) for col in seen.columns],
        pile_top=_CARD_PROTOS[seen.pile_top],
        pile_count=seen.pile_count,
        stock_count=seen.stock_count,
        legal_moves=[move_to_proto(m, hide_draw=True) for m in seen.legal_moves],
        elapsed=elapsed,
        create_time=timestamp(game.created_at),
        update_time=timestamp(game.updated_at),
        rules=rules_to_proto(snap.deal.rules),
        moves_played=seen.pile_count - 1,
        hints_used=game.hints_used,
        undos_used=game.undos_used,
        round_id=game.round_id or "",
        hole=game.hole or 0,
        player_id=game.owner_id,
        practice=game.practice,
        autoplay_assists=game.autoplay_assists,
        ranked=not (game.practice or game.stock_seen),
        unranked_reason=solitaire_pb2.UNRANKED_REASON_PRACTICE
        if game.practice
        else solitaire_pb2.UNRANKED_REASON_STOCK_DRAW_UNDONE
        if game.stock_seen
        else solitaire_pb2.UNRANKED_REASON_UNSPECIFIED,
    )
    left = snap.deal.rules.undos_left(game.undos_used)
    if left is not None:
        msg.undos_left = left
    if seen.revealed_seed is not None and seen.revealed_stock is not None:
        msg.reveal.seed = seen.revealed_seed
        msg.reveal.stock.extend(_CARD_PROTOS[c] for c in seen.revealed_stock)
        if snap.deal.verdict is not None:
            msg.post_mortem.SetInParent()
            if snap.deal.verdict.winnable is not None:
                msg.post_mortem.winnable = snap.deal.verdict.winnable
            if snap.deal.verdict.fewest_left is not None:
                msg.post_mortem.fewest_cards_left = snap.deal.verdict.fewest_left
    return msg


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(sorted(PRESETS)),
    st.text(min_size=1, max_size=8),
    st.integers(0, 2**32),
    st.sampled_from([None, Verdict(False, (), 3), Verdict(None)]),
    st.booleans(),
)
def test_whole_games(preset: str, seed: str, choices: int, verdict: Verdict | None, small_cache: bool) -> None:
    chooser = random.Random(choices)
    rules = PRESETS[preset]
    deal = DealRecord("d", preset, 1, rules, seed, "golf-shuffle-v1", "c" * 64, Layout.from_seed(rules, seed), T0)
    deal = replace(deal, verdict=verdict)
    if small_cache:
        for cache in (convert._column_wire, convert._legal_move_wire, convert._rules_wire):
            cache.clear()
    memoise("golf.v1.Column")
    memoise("golf.v1.Move")
    state = State.initial(deal.rules, deal.layout)
    version = 0
    while True:
        over = state.status is not Status.IN_PROGRESS
        at = T0 + timedelta(seconds=version)
        game = GameRecord(
            "g", "d", version, state.status.value, state.score, [], T0, at, at if over else None,
            hints_used=version % 3, undos_used=version % 2, round_id="r" if version % 2 else None,
            hole=version % 4 or None, owner_id="p", practice=bool(version % 2), autoplay_assists=version % 5,
            stock_seen=version % 3 == 1,
        )  # fmt: skip
        snap = GameSnapshot(game, deal, state, T0 + timedelta(seconds=version + 0.5))
        expected = plain_game(snap)
        assert game_to_proto(snap) == expected
        assert game_to_proto(snap).SerializeToString(deterministic=True) == expected.SerializeToString(
            deterministic=True
        )
        reply = pb.PlayMoveResponse(replayed=False)
        fill_game(reply.game, snap)
        assert reply == pb.PlayMoveResponse(game=expected)
        for _ in range(2):  # the second time, memoised parts are copied in as JSON text
            reference = json_format.MessageToDict(reply, always_print_fields_with_no_presence=True)
            assert orjson.loads(to_json(reply)) == reference
        moves = state.legal_moves()
        if not moves:
            break
        state = state.apply(chooser.choice(moves))
        version += 1
        if small_cache and len(convert._column_wire) > 4:
            convert._column_wire.clear()  # a cache emptied mid-game (as when full) changes nothing
            convert._legal_move_wire.clear()


def test_column_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A full cache is emptied, never grows past its limit; an empty column is kept as one."""
    monkeypatch.setattr(convert, "_WIRE_LIMIT", 3)
    convert._column_wire.clear()
    cards = sorted(_CARD_PROTOS)
    for i in range(10):
        wire = convert._columns_wire(((cards[i],),))
        assert solitaire_pb2.Game.FromString(wire) == solitaire_pb2.Game(
            columns=[cards_pb2.Column(cards=[_CARD_PROTOS[cards[i]]])]
        )
        assert len(convert._column_wire) <= 3
    empty = solitaire_pb2.Game.FromString(convert._columns_wire(((), (cards[0],))))
    assert len(empty.columns) == 2 and not empty.columns[0].cards


def test_legal_move_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(convert, "_WIRE_LIMIT", 3)
    convert._legal_move_wire.clear()
    for column in range(10):
        move = PlayColumn(column, sorted(_CARD_PROTOS)[column])
        wire = convert._legal_moves_wire((move, Draw()))
        assert list(solitaire_pb2.Game.FromString(wire).legal_moves) == [
            move_to_proto(move, hide_draw=True),
            move_to_proto(Draw(), hide_draw=True),
        ]
        assert len(convert._legal_move_wire) <= 3


def test_a_game_record_copy_is_replace_without_changes() -> None:
    game = GameRecord(
        "g", "d", 3, "won", 0, ["T"], T0, T0, T0, 1, 2, "r", 4, "p", practice=True, holds_deal=True, autoplay_assists=5
    )
    copied = game.copy()
    assert copied == replace(game) and copied is not game
    copied.version = 4
    assert game.version == 3
