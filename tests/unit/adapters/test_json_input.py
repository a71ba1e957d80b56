"""Malformed REST input is refused as INVALID_ARGUMENT naming the exact field, never a crash; keys the message does
not have are ignored and named (the ``x-golf-unknown-fields`` header)."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import pytest

from golf.adapters.json_input import (
    MAX_UNKNOWN_HEADER,
    MAX_UNKNOWN_SHOWN,
    parse_body,
    parse_object,
    unknown_fields_header,
)
from golf.api.errors import ApiError
from golf.v1 import errors_pb2
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


# Every JSON type given to every kind of field it does not fit: refused as INVALID_ARGUMENT naming the field (in
# its lowerCamelCase path), never a crash and never taken as some other value.
@pytest.mark.parametrize(
    ("request_type", "obj", "field"),
    [
        # enums: an object, a list, a bool, a number the enum does not have, a fraction, a name of another enum
        (pb.CreateDealRequest, {"difficulty": {}}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": []}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": [1]}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": True}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": 1.5}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": 99}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": -1}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": 1e300}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": "99"}, "difficulty"),  # a number as a string: the enum's only
        (pb.CreateDealRequest, {"difficulty": " 1"}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": "1.0"}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": "1" * 5000}, "difficulty"),
        (pb.CreateDealRequest, {"difficulty": "RANK_ACE"}, "difficulty"),
        (pb.CreateDealRequest, {"rules": {"undoPolicy": []}}, "rules.undoPolicy"),
        (pb.CreateDealRequest, {"rules": {"undoPolicy": {"a": 1}}}, "rules.undoPolicy"),
        (pb.CreateGameRequest, {"rules": {"undoPolicy": 7}}, "rules.undoPolicy"),
        (pb.PlayMoveRequest, {"move": {"playColumn": {"card": {"suit": {}}}}}, "move.playColumn.card.suit"),
        (pb.PlayMoveRequest, {"move": {"playColumn": {"card": {"suit": 5}}}}, "move.playColumn.card.suit"),
        (pb.PlayMoveRequest, {"move": {"playColumn": {"card": {"rank": 14}}}}, "move.playColumn.card.rank"),
        (pb.PlayMoveRequest, {"move": {"drawStock": {"card": {"rank": [13]}}}}, "move.drawStock.card.rank"),
        (pb.ListGamesRequest, {"status": {}}, "status"),
        (pb.ListRoundsRequest, {"status": "9"}, "status"),
        # bools
        (pb.CreateDealRequest, {"winnableOnly": {}}, "winnableOnly"),
        (pb.CreateDealRequest, {"winnableOnly": []}, "winnableOnly"),
        (pb.CreateDealRequest, {"winnableOnly": "true"}, "winnableOnly"),
        (pb.CreateDealRequest, {"winnableOnly": 1}, "winnableOnly"),
        (pb.CreateDealRequest, {"rules": {"wrap": {}}}, "rules.wrap"),
        # strings
        (pb.CreateDealRequest, {"seed": ["a"]}, "seed"),
        (pb.CreateDealRequest, {"seed": {}}, "seed"),
        (pb.CreateDealRequest, {"seed": 1}, "seed"),
        (pb.CreateDealRequest, {"preset": False}, "preset"),
        # integers: objects, lists, bools, fractions, numbers past the type, text that is no number
        (pb.PlayMoveRequest, {"expectedVersion": {}}, "expectedVersion"),
        (pb.PlayMoveRequest, {"expectedVersion": [1]}, "expectedVersion"),
        (pb.PlayMoveRequest, {"expectedVersion": 0.5}, "expectedVersion"),
        (pb.PlayMoveRequest, {"expectedVersion": " 1"}, "expectedVersion"),
        (pb.PlayMoveRequest, {"expectedVersion": "1_0"}, "expectedVersion"),
        (pb.PlayMoveRequest, {"expectedVersion": "\u0663"}, "expectedVersion"),
        (pb.PlayMoveRequest, {"expectedVersion": "NaN"}, "expectedVersion"),
        (pb.PlayMoveRequest, {"expectedVersion": 1e300}, "expectedVersion"),
        (pb.PlayMoveRequest, {"expectedVersion": "9" * 5000}, "expectedVersion"),
        (pb.CreateDealRequest, {"pysolDealNumber": {}}, "pysolDealNumber"),
        (pb.CreateDealRequest, {"pysolDealNumber": "9223372036854775808"}, "pysolDealNumber"),
        (pb.CreateDealRequest, {"pysolDealNumber": 2**64}, "pysolDealNumber"),
        # messages: anything but an object
        (pb.PlayMoveRequest, {"move": []}, "move"),
        (pb.PlayMoveRequest, {"move": 1}, "move"),
        (pb.PlayMoveRequest, {"move": {"playColumn": True}}, "move.playColumn"),
        (pb.CreateDealRequest, {"rules": "standard"}, "rules"),
        # times: not a string, or a string that is no time
        (pb.ListGamesRequest, {"createdAfter": {}}, "createdAfter"),
        (pb.ListGamesRequest, {"createdAfter": 1700000000}, "createdAfter"),
        (pb.ListGamesRequest, {"createdBefore": "yesterday"}, "createdBefore"),
        (pb.ListGamesRequest, {"createdBefore": "2026-13-01T00:00:00Z"}, "createdBefore"),
        # repeated fields and maps (none in today's requests: the checker is tried on a reply message)
        (pb.ListMovesResponse, {"moves": {}}, "moves"),
        (pb.ListMovesResponse, {"moves": "x"}, "moves"),
        (pb.ListMovesResponse, {"moves": [None]}, "moves[0]"),
        (pb.ListMovesResponse, {"moves": [[]]}, "moves[0]"),
        (
            pb.ListMovesResponse,
            {"moves": [{"move": {"drawStock": {"card": {"suit": {}}}}}]},
            "moves[0].move.drawStock.card.suit",
        ),
    ],
)
def test_type_mismatches_are_400_naming_the_field(request_type: Any, obj: dict[str, Any], field: str) -> None:
    with pytest.raises(ApiError) as err:
        parse_object(obj, request_type())
    assert err.value.http_status == 400
    assert err.value.body.reason == errors_pb2.ERROR_REASON_INVALID_ARGUMENT
    assert err.value.body.field == field
    assert len(err.value.body.message) < 400


@pytest.mark.parametrize(
    ("obj", "check"),
    [
        ({"pysolDealNumber": "9223372036854775807"}, lambda m: m.pysol_deal_number == 2**63 - 1),
        ({"pysolDealNumber": "-9223372036854775808"}, lambda m: m.pysol_deal_number == -(2**63)),
        ({"pysolDealNumber": "1e3"}, lambda m: m.pysol_deal_number == 1000),
        ({"difficulty": 3}, lambda m: m.difficulty == 3),
        ({"difficulty": "1"}, lambda m: m.difficulty == 1),  # the number in a string, as a query string has it
        ({"difficulty": 3.0, "rules": {"undoPolicy": "UNDO_POLICY_NONE"}}, lambda m: m.difficulty == 3),
        ({"difficulty": None, "seed": None, "rules": None}, lambda m: m == pb.CreateDealRequest()),
    ],
)
def test_edge_values_that_fit_are_taken(obj: dict[str, Any], check: Any) -> None:
    msg = pb.CreateDealRequest()
    parse_object(obj, msg)
    assert check(msg), msg


def test_a_map_field_takes_an_object_only() -> None:
    # No request has a map today; Struct's ``fields`` (string -> Value) stands in for one.
    from google.protobuf import struct_pb2

    with pytest.raises(ApiError) as err:
        parse_object({"fields": []}, struct_pb2.Struct())
    assert err.value.body.field == "fields"
    with pytest.raises(ApiError) as err:
        parse_object({"fields": {"k": None}}, struct_pb2.Struct())
    assert err.value.body.field == "fields.k"
    parse_object({"fields": {"k": {"stringValue": "v"}}}, struct_pb2.Struct())


MB = 2**20


@pytest.mark.parametrize(
    ("request_type", "body", "field"),
    [
        (pb.CreateDealRequest, b'{"' + b"k" * MB + b'": 1, "difficulty": {}}', "difficulty"),
        (pb.CreateDealRequest, b'{"difficulty": "' + b"D" * MB + b'"}', "difficulty"),
        (
            pb.PlayMoveRequest,
            b'{"move": {"drawStock": {"card": {"suit": "' + b"S" * MB + b'"}}}}',
            "move.drawStock.card.suit",
        ),
        (pb.ListGamesRequest, b'{"createdAfter": "' + b"2" * MB + b'"}', "createdAfter"),
        (pb.ListGamesRequest, b'{"pageSize": "' + b"9" * MB + b'"}', "pageSize"),
        (pb.CreateDealRequest, b'{"preset": "' + b"x" * MB + b'" ', "body"),
    ],
)
def test_errors_echo_at_most_a_short_prefix_of_what_was_sent(request_type: Any, body: bytes, field: str) -> None:
    with pytest.raises(ApiError) as err:
        parse_body(body, request_type())
    assert err.value.body.field == field
    assert len(err.value.body.SerializeToString()) < 1024, err.value.body.message[:300]


def test_query_strings_echo_little_too() -> None:
    assert parse_object({"x" * MB: "1"}, pb.ListGamesRequest()) == ["x" * 64 + "\u2026"]
    with pytest.raises(ApiError) as err:
        parse_object({"status": "S" * MB}, pb.ListGamesRequest())
    assert err.value.body.field == "status" and len(err.value.body.message) < 400


# -- keys the message does not have: ignored (as binary protobuf ignores unknown fields), and named -------------
def test_unknown_keys_at_any_depth_are_ignored_and_named() -> None:
    msg = pb.CreateDealRequest()
    body = b'{"preset": "standard", "foo": 1, "rules": {"undoPolcy": "X", "wrap": true}, "bar": {"a": [1, {"b": 2}]}}'
    assert parse_body(body, msg) == ["foo", "rules.undoPolcy", "bar"]  # an unknown key's value is not looked into
    assert msg == pb.CreateDealRequest(preset="standard", rules=msg.rules) and msg.rules.wrap
    moves = pb.ListMovesResponse()
    obj = {"moves": [{"seq": 1, "x": None}, {"move": {"drawStock": {"y": [2]}}, "undoneBy": 3}]}
    assert parse_object(obj, moves) == ["moves[0].x", "moves[1].move.drawStock.y"]
    assert [m.seq for m in moves.moves] == [1, 0] and moves.moves[1].move.HasField("draw_stock")
    empty = pb.PlayMoveRequest()
    assert parse_body(b'{"move": {"bogus": {}}}', empty) == ["move.bogus"]
    assert empty.HasField("move") and empty.move.WhichOneof("kind") is None  # the handler refuses it ("move")


def test_snake_case_names_are_known_and_paths_are_lower_camel_case() -> None:
    msg = pb.CreateDealRequest()
    unknown = parse_object({"winnable_only": True, "rules": {"undo_policy": "UNDO_POLICY_NONE", "undo_limt": 3}}, msg)
    assert unknown == ["rules.undo_limt"]  # a known field by its JSON name, the unknown key as sent
    assert msg.winnable_only and msg.rules.undo_policy != 0
    with pytest.raises(ApiError) as err:
        parse_object({"rules": {"undo_policy": []}}, pb.CreateDealRequest())
    assert err.value.body.field == "rules.undoPolicy"
    with pytest.raises(ApiError) as err:  # both names of one field: refused, not merged
        parse_object({"pageSize": 1, "page_size": 2}, pb.ListGamesRequest())
    assert err.value.http_status == 400 and err.value.body.field == "pageSize"


def test_unknown_keys_do_not_excuse_malformed_known_ones() -> None:
    with pytest.raises(ApiError) as err:
        parse_body(b'{"foo": 1, "difficulty": {}, "bar": 2}', pb.CreateDealRequest())
    assert err.value.body.field == "difficulty" and err.value.http_status == 400
    with pytest.raises(ApiError) as err:
        parse_object({"nope": "1", "pageSize": "ten"}, pb.ListGamesRequest())
    assert err.value.body.field == "pageSize"


def test_unknown_query_parameters_are_ignored_and_named() -> None:
    listing = pb.ListGamesRequest()
    assert parse_object({"pageSize": "5", "pageSze": "3", "x": ""}, listing) == ["pageSze", "x"]
    assert listing == pb.ListGamesRequest(page_size=5)


def test_megabyte_unknown_keys_are_named_by_a_short_prefix() -> None:
    msg = pb.CreateDealRequest()
    unknown = parse_body(b'{"' + b"k" * MB + b'": 1, "rules": {"' + b"k" * MB + b'": true}}', msg)
    assert unknown == ["k" * 64 + "\u2026", "rules." + "k" * 64 + "\u2026"]
    assert len(unknown_fields_header(unknown)) < 200


def test_the_header_names_at_most_ten_then_counts() -> None:
    assert unknown_fields_header(["rules.undoPolcy", "foo"]) == "rules.undoPolcy, foo"
    names = [f"f{i}" for i in range(25)]
    header = unknown_fields_header(names + names)  # repeated names count once
    assert header == ", ".join(names[:MAX_UNKNOWN_SHOWN]) + ", +15 more"
    assert unknown_fields_header(["a"] * 50) == "a"


def test_the_header_is_safe_whatever_the_keys() -> None:
    nasty = ["a\r\nx-evil: 1", "t\tab", "comma,key", "50%", "caf\u00e9", "sp ace", "\x00\x7f", "\u2028"]
    msg = pb.CreateDealRequest()
    unknown = parse_object(dict.fromkeys(nasty, 1), msg)
    header = unknown_fields_header(unknown)
    assert header.isascii() and all("!" <= ch <= "~" or ch == " " for ch in header), header
    items = header.split(", ")
    assert [unquote(item) for item in items] == nasty  # each name comes back, none split nor merged
    assert items[0] == "a%0D%0Ax-evil:%201" and items[4] == "caf%C3%A9"
    # A cut name ends in an encoded ellipsis; a long list stops by size as well as by count.
    long_names = [f"{i}" + "\u00e9" * 100 for i in range(MAX_UNKNOWN_SHOWN)]
    header = unknown_fields_header(parse_object(dict.fromkeys(long_names, 1), pb.CreateDealRequest()))
    assert len(header) <= MAX_UNKNOWN_HEADER + 50 and header.endswith(" more"), header
    assert header.split(", ")[0].endswith("%E2%80%A6")


_PLAIN_CASES: list[tuple[Any, Any]] = [
    (
        pb.PlayMoveRequest,
        {"gameId": "g", "move": {"playColumn": {"column": 3}}, "idempotencyKey": "k", "expectedVersion": 5},
    ),
    (pb.PlayMoveRequest, {"move": {"drawStock": {}}, "expected_version": 0}),
    (pb.PlayMoveRequest, {"move": {"playColumn": {}}}),
    (pb.PlayMoveRequest, {"move": {}}),
    (pb.PlayMoveRequest, {"move": {"playColumn": {"column": 0, "card": {"code": "QH"}}}}),
    (pb.PlayMoveRequest, {"move": {"playColumn": {"card": {"rank": "RANK_QUEEN", "suit": 3}}}}),  # enums
    (
        pb.PlayMoveRequest,
        {
            "move": {
                "playColumn": {
                    "column": 1,
                    "card": {"rank": "RANK_FIVE", "suit": "SUIT_HEARTS", "code": "5H", "joker": False},
                }
            }
        },
    ),
    (pb.PlayMoveRequest, {"move": {"playColumn": {"card": {"rank": "RANK_UNSPECIFIED", "suit": 0}}}}),
    (pb.PlayMoveRequest, {"expectedVersion": "7"}),  # a number as a string
    (pb.PlayMoveRequest, {"expectedVersion": 7.0}),
    (pb.PlayMoveRequest, {"expectedVersion": None, "gameId": None, "move": None}),
    (pb.PlayMoveRequest, {"idempotencyKey": "clé-ü", "x": 1, "move": {"y": {}}}),
    (pb.PlayMoveRequest, {"move": {"playColumn": {"column": 0}, "drawStock": {}}}),  # two members of one oneof
    (pb.PlayMoveRequest, {"move": {"playColumn": None, "drawStock": {}}}),
    (pb.PlayMoveRequest, {"expectedVersion": -2147483648, "move": {"playColumn": {"column": 2147483647}}}),
    (pb.CreateGameRequest, {"preset": "wrap", "winnableOnly": False, "rules": {"decks": 2, "wrap": True}}),
    (pb.CreateGameRequest, {"rules": {"undoPolicy": "UNDO_POLICY_NONE"}, "difficulty": "DIFFICULTY_EASY"}),
    (pb.CreateGameRequest, {"winnable_only": True, "deal_id": "d"}),
]


@pytest.mark.parametrize(("request_type", "obj"), _PLAIN_CASES)
def test_direct_parse_gives_what_json_format_gives(request_type: Any, obj: dict[str, Any]) -> None:
    """Objects of plain fields are set without json_format; the message (or the refusal) is json_format's, and a
    later parse (path parameters) merges into it the same way."""
    from google.protobuf import json_format

    ours, theirs = request_type(), request_type()
    try:
        parse_object(obj, ours)
    except ApiError as err:
        assert err.body.field == "move"  # two members of one oneof: json_format's refusal, as before
        with pytest.raises(json_format.ParseError):
            json_format.ParseDict(obj, theirs, ignore_unknown_fields=True)
        return
    json_format.ParseDict(obj, theirs, ignore_unknown_fields=True)
    assert ours == theirs
    assert ours.SerializeToString(deterministic=True) == theirs.SerializeToString(deterministic=True)
    for name in ("move", "rules"):
        if name in request_type.DESCRIPTOR.fields_by_name:
            assert ours.HasField(name) == theirs.HasField(name)
    if request_type is pb.PlayMoveRequest:
        assert ours.HasField("expected_version") == theirs.HasField("expected_version")
        assert ours.move.WhichOneof("kind") == theirs.move.WhichOneof("kind")
        parse_object({"gameId": "g2"}, ours)
        json_format.ParseDict({"gameId": "g2"}, theirs, ignore_unknown_fields=True)
        assert ours == theirs


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"idempotencyKey": "a", "idempotencyKey": "b"}', "idempotencyKey"),
        (b'{"move": {"playColumn": {"column": 0}}, "move": {"drawStock": {}}}', "move"),
        (b'{"move": {"playColumn": {"column": 0,\n "column" :1}}}', "move.playColumn.column"),
        (b'{"x": [{"a": 1}, {"b": 2, "b": 3}]}', "x[1].b"),  # in an unknown key too: the text is ambiguous
        (b'{"gameId": "g", "' + b"k" * 500 + b'": 1, "' + b"k" * 500 + b'": 2}', "k" * 64 + "…"),
    ],
)
def test_a_key_given_twice_is_refused_naming_it(body: bytes, field: str) -> None:
    """protobuf's json_format refuses a key given twice; taken last-wins it would make one request mean two things."""
    with pytest.raises(ApiError) as info:
        parse_body(body, pb.PlayMoveRequest())
    assert info.value.body.field == field and "twice" in info.value.body.message


def test_strings_that_look_like_keys_are_no_keys_given_twice() -> None:
    message = pb.PlayMoveRequest()
    unknown = parse_body(b'{"gameId": "\\":a\\":", "note": "\\"gameId\\": 1", "idempotencyKey": "k"}', message)
    assert message.game_id == '":a":' and message.idempotency_key == "k" and unknown == ["note"]
    deep = b'{"gameId": "g", "junk": ' + b"[" * 1020 + b"]" * 1020 + b"}"  # deeper than Python's own parser goes
    assert parse_body(deep, pb.PlayMoveRequest()) == ["junk"]


@pytest.mark.parametrize(("given", "status"), [("2", 2), ("GAME_STATUS_WON", 2), ("0", 0), ("3", 3)])
def test_query_strings_take_an_enum_by_name_or_by_number(given: str, status: int) -> None:
    """One rule for bodies and queries: ``status=2`` is ``status=GAME_STATUS_WON`` (it was a 400)."""
    message = pb.ListGamesRequest()
    parse_object({"status": given}, message)
    assert message.status == status
    with pytest.raises(ApiError) as err:
        parse_object({"status": "4"}, pb.ListGamesRequest())
    assert err.value.body.field == "status" and "GAME_STATUS_WON (2)" in err.value.body.message
