"""The contract's field rules (``buf.validate`` options in the .proto) hold over both transports and both databases,
the same way: INVALID_ARGUMENT / 400 naming the field, before anything is stored or searched. The OpenAPI side of
the same rules is in tests/unit/adapters/test_openapi_rules.py."""

from __future__ import annotations

import pytest
from google.rpc import error_details_pb2

from golf.v1 import player_service_pb2, solitaire_pb2
from tests.e2e.identity import quick_game
from tests.e2e.support import Client, R, move_request, pb


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (pb.CreateRoundRequest(holes=7), "holes"),
        (pb.CreateRoundRequest(holes=9, par=-1), "par"),
        (pb.CreateDealRequest(rules=solitaire_pb2.SolitaireRules(decks=5)), "rules.decks"),
        (pb.CreateDealRequest(rules=solitaire_pb2.SolitaireRules(columns=0)), "rules.columns"),
        (pb.CreateDealRequest(rules=solitaire_pb2.SolitaireRules(undo_limit=-1)), "rules.undoLimit"),
        (pb.CreateDealRequest(seed="s" * 129), "seed"),
        (pb.CreateDealRequest(seed=""), "seed"),
        (pb.CreateDealRequest(pysol_deal_number=0), "pysolDealNumber"),
        (pb.CreateDealRequest(preset="p" * 65), "preset"),
        (pb.CreateGameRequest(deal_id="d" * 65), "dealId"),
    ],
)
def test_creating_outside_the_rules_is_invalid(client: Client, request_: object, field: str) -> None:
    if isinstance(request_, pb.CreateRoundRequest):
        reply = client.create_round(request_)
    elif isinstance(request_, pb.CreateDealRequest):
        reply = client.create_deal(request_)
    else:
        assert isinstance(request_, pb.CreateGameRequest)
        reply = client.create_game(request_)
    assert reply.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == field


def test_every_broken_rule_is_listed_and_the_first_is_named(client: Client) -> None:
    rules = solitaire_pb2.SolitaireRules(decks=9, column_height=99)
    error = client.create_round(pb.CreateRoundRequest(holes=3, rules=rules)).expect_error(
        R.ERROR_REASON_INVALID_ARGUMENT
    )
    assert error.field == "rules.decks"
    for named in ("rules.decks", "rules.columnHeight", "holes"):
        assert named in error.message, error.message
    # The standard BadRequest detail has one violation per rule broken, with the rule's id (both transports).
    (bad_request,) = [d for d in error.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
    unpacked = error_details_pb2.BadRequest()
    assert bad_request.Unpack(unpacked)
    found = {(v.field, v.reason) for v in unpacked.field_violations}
    assert found == {("rules.decks", "int32.gte_lte"), ("rules.columnHeight", "int32.gte_lte"), ("holes", "int32.in")}


def test_mutations_need_a_key_and_a_move_of_one_kind(client: Client) -> None:
    game = quick_game(client)
    legal = game.legal_moves[0]
    keyless = client.play_move(pb.PlayMoveRequest(game_id=game.id, move=legal))
    assert keyless.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "idempotencyKey"
    too_long = client.play_move(move_request(game, legal, key="k" * 129))
    assert too_long.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "idempotencyKey"
    empty_move = client.play_move(pb.PlayMoveRequest(game_id=game.id, move=solitaire_pb2.Move(), idempotency_key="e"))
    error = empty_move.expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert error.field == "move" and "playColumn" in error.message and "drawStock" in error.message
    hint = client.hint(pb.HintRequest(game_id=game.id))
    assert hint.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "idempotencyKey"
    assert client.get_game(game.id).expect_ok().game.version == 0


def test_pages_and_filters_keep_to_their_ranges(client: Client) -> None:
    assert client.list_games(page_size=101).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageSize"
    assert client.list_games(page_size=100).expect_ok()
    listing = pb.ListRoundsRequest(page_token="t" * 513)
    assert client.list_rounds(listing).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageToken"


def test_daily_dates_and_names_follow_their_formats(client: Client) -> None:
    for date in ("20261101", "2026-W48-1", "2026-11-1"):
        assert client.get_daily_deal(date).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "date", date
    name = player_service_pb2.CreateGuestRequest(display_name="n" * 65)
    assert client.create_guest(name).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "displayName"
    assert client.refresh_access("r" * 257).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "refreshToken"
