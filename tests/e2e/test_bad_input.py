"""Bad input over both transports and both databases: a clear INVALID_ARGUMENT naming the field, never a 500, never
another card than the one sent, and never more than a short prefix of the client's text echoed back."""

from __future__ import annotations

import base64
import json

import pytest

from golf.v1 import cards_pb2, solitaire_pb2
from golf.v1 import record_service_pb2 as rpb
from tests.e2e.identity import quick_game
from tests.e2e.records import Records
from tests.e2e.support import Client, R, move_request, pb


def _play_card(rank: int, suit: int, code: str = "") -> solitaire_pb2.Move:
    card = cards_pb2.Card(rank=rank, suit=suit, code=code)  # type: ignore[arg-type]
    return solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=0, card=card))


@pytest.mark.parametrize(
    ("rank", "suit", "code", "field"),
    [
        (77, 1, "", "move.playColumn.card.rank"),
        (14, 1, "", "move.playColumn.card.rank"),
        (-1, 1, "", "move.playColumn.card.rank"),
        (12, 9, "", "move.playColumn.card.suit"),
        (77, 1, "QC", "move.playColumn.card.rank"),
        (1, 1, "ZZ", "move.playColumn.card.code"),
    ],
)
def test_cards_outside_their_enums_are_refused(client: Client, rank: int, suit: int, code: str, field: str) -> None:
    game = quick_game(client)
    reply = client.play_move(move_request(game, _play_card(rank, suit, code)))
    assert reply.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == field
    assert client.get_game(game.id).expect_ok().game.version == 0


def test_a_negative_expected_version_is_invalid(client: Client) -> None:
    game = quick_game(client)
    reply = client.play_move(move_request(game, game.legal_moves[0], expected=-1))
    assert reply.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "expectedVersion"
    undo = client.undo(pb.UndoRequest(game_id=game.id, idempotency_key="u1", expected_version=-5))
    assert undo.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "expectedVersion"


@pytest.mark.parametrize(
    "when",
    ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "10000-01-01T00:00:00+00:00", "2026-01-01T00:00:00"],
)
def test_forged_page_tokens_are_invalid(client: Client, when: str) -> None:
    token = base64.urlsafe_b64encode(json.dumps([when, "x"]).encode()).decode().rstrip("=")
    assert client.list_games(page_token=token).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageToken"
    listing = pb.ListRoundsRequest(page_token=token)
    assert client.list_rounds(listing).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageToken"


def _token(*items: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(items).encode()).decode().rstrip("=")


@pytest.mark.parametrize("text", ["\x00", "p\x00q", "\ud800", "x\udfffy"], ids=["nul", "inner-nul", "high", "low"])
def test_page_tokens_holding_text_no_database_takes_are_invalid(client: Client, text: str) -> None:
    """A NUL (PostgreSQL text has none) or a lone surrogate (no UTF-8 at all) in a forged token's id was a 500
    (gRPC INTERNAL) once it reached the query: every list refuses the token, naming pageToken."""
    when = "2026-01-01T00:00:00+00:00"
    records = Records(client)
    replies = [
        client.list_games(page_token=_token(when, text)),
        client.list_rounds(pb.ListRoundsRequest(page_token=_token(when, text))),
        records.board(
            kind=rpb.LEADERBOARD_KIND_DEAL, deal_id="d", page_token=_token("b:deal:d:0:0", 1, 2, 3, when, text)
        ),
        records.call("ListDealStats", rpb.ListDealStatsRequest(page_token=_token("d:standard:1:10", 1, 2, text))),
        records.history(page_token=_token(f"h:{text}", 1)),
    ]
    for reply in replies:
        assert reply.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageToken"


def test_long_ids_are_not_echoed_back(client: Client) -> None:
    long_id = "g" * 1500
    reply = client.get_game(long_id)
    # Ids are at most 64 characters (the contract's rule): refused before any lookup, naming the field.
    error = reply.expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert error.field == "gameId" and "64" in error.message
    assert len(error.message) < 200 and long_id not in reply.raw
    unknown = "g" * 64
    error = client.get_game(unknown).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert len(error.message) < 200
    game = quick_game(client)
    key = "k" * 128
    client.play_move(move_request(game, game.legal_moves[0], key=key)).expect_ok()
    reused = client.undo(pb.UndoRequest(game_id=game.id, idempotency_key=key))
    assert key not in reused.expect_error(R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED).message
