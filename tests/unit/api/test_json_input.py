"""Malformed REST input is refused as INVALID_ARGUMENT naming the exact field, never a crash."""

from __future__ import annotations

import pytest

from golf.adapters.json_input import parse_body, parse_object
from golf.api.errors import ApiError
from golf.v1 import solitaire_service_pb2 as pb


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b"{", "body"),
        (b"[]", "body"),
        (b'"x"', "body"),
        (b"\xff\xfe", "body"),
        (b'{"move": "x"}', "move"),
        (b'{"move": {"playColumn": {"column": "x"}}}', "move.playColumn.column"),
        (b'{"move": {"playColumn": {"column": 1.5}}}', "move.playColumn.column"),
        (b'{"move": {"playColumn": {"column": 2147483648}}}', "move.playColumn.column"),
        (b'{"move": {"playColumn": {"card": {"rank": "RANK_X"}}}}', "move.playColumn.card.rank"),
        (b'{"move": {"playColumn": {"card": {"code": 7}}}}', "move.playColumn.card.code"),
        (b'{"move": {"bogus": {}}}', "move.bogus"),
        (b'{"move": {"playColumn": {"column": 0}, "drawStock": {}}}', "move"),
        (b'{"expectedVersion": true}', "expectedVersion"),
        (b'{"idempotencyKey": ["a"]}', "idempotencyKey"),
    ],
)
def test_refusals_name_the_field(body: bytes, field: str) -> None:
    with pytest.raises(ApiError) as err:
        parse_body(body, pb.PlayMoveRequest())
    assert err.value.http_status == 400
    assert err.value.body.field == field


def test_rules_enum_and_query_strings() -> None:
    with pytest.raises(ApiError) as err:
        parse_body(b'{"rules": {"undoPolicy": "NOPE"}}', pb.CreateDealRequest())
    assert err.value.body.field == "rules.undoPolicy"
    with pytest.raises(ApiError) as err:
        parse_object({"pageSize": "ten"}, pb.ListGamesRequest())
    assert err.value.body.field == "pageSize"


def test_good_input_parses() -> None:
    msg = pb.PlayMoveRequest()
    parse_body(b'{"move": {"playColumn": {"column": 3}}, "idempotencyKey": "k", "expectedVersion": "4"}', msg)
    assert msg.move.play_column.column == 3 and msg.expected_version == 4 and msg.idempotency_key == "k"
    empty = pb.CreateGameRequest()
    parse_body(b"  ", empty)
    assert empty == pb.CreateGameRequest()
    listing = pb.ListGamesRequest()
    parse_object({"pageSize": "5", "page_token": "t"}, listing)
    assert listing.page_size == 5 and listing.page_token == "t"
