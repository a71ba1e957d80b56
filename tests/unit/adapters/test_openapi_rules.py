"""The OpenAPI document states the contract's field rules and comments, taken from the .proto (buf.validate options,
google.api.http routes, comments), so the document, protovalidate and the gateway cannot drift apart."""

from __future__ import annotations

from typing import Any

import pytest
from buf.validate import validate_pb2

from golf.adapters.edge import Edge
from golf.adapters.rest import build_rest_app
from golf.api.contract import comment, http_route
from golf.api.handlers import SolitaireHandlers
from golf.api.player_handlers import PlayerHandlers
from golf.api.rpc import Rpc
from golf.v1 import solitaire_service_pb2 as pb

RPCS = SolitaireHandlers(None, None, None).rpcs() + PlayerHandlers(None).rpcs()  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    schema: dict[str, Any] = build_rest_app(RPCS, Edge(None, None)).openapi()  # type: ignore[arg-type]
    return schema


def _schemas(doc: dict[str, Any]) -> dict[str, Any]:
    schemas: dict[str, Any] = doc["components"]["schemas"]
    return schemas


def test_every_string_and_number_rule_of_the_contract_is_in_the_document(doc: dict[str, Any]) -> None:
    checked = 0
    for rpc in RPCS:
        for field in rpc.request.DESCRIPTOR.fields:
            options = field.GetOptions()
            if not options.HasExtension(validate_pb2.field):
                continue
            rules = options.Extensions[validate_pb2.field]
            prop = _schemas(doc)[rpc.request.DESCRIPTOR.full_name]["properties"][field.json_name]
            required = _schemas(doc)[rpc.request.DESCRIPTOR.full_name].get("required", [])
            assert (field.json_name in required) == rules.required, field.full_name
            if rules.HasField("string"):
                if rules.string.HasField("max_len"):
                    assert prop["maxLength"] == rules.string.max_len, field.full_name
                if rules.string.HasField("pattern"):
                    assert prop["pattern"] == rules.string.pattern, field.full_name
                checked += 1
            if rules.HasField("int32"):
                if rules.int32.HasField("gte"):
                    assert prop["minimum"] == rules.int32.gte, field.full_name
                if rules.int32.HasField("lte"):
                    assert prop["maximum"] == rules.int32.lte, field.full_name
                checked += 1
    assert checked >= 20


def test_nested_rules_and_enums(doc: dict[str, Any]) -> None:
    schemas = _schemas(doc)
    decks = schemas["golf.v1.SolitaireRules"]["properties"]["decks"]
    assert (decks["minimum"], decks["maximum"]) == (1, 4) and "packs" in decks["description"]
    assert schemas["golf.v1.CreateRoundRequest"]["properties"]["holes"]["enum"] == [0, 9, 18, None]  # null: default
    move = schemas["golf.v1.Move"]
    assert (move["minProperties"], move["maxProperties"]) == (1, 1) and "playColumn" in move["description"]
    pysol = schemas["golf.v1.CreateDealRequest"]["properties"]["pysolDealNumber"]
    assert pysol["anyOf"][0]["minimum"] == 1 and pysol["anyOf"][1]["type"] == "string"
    seed_source = schemas["golf.v1.SeedSource"]
    assert "`SEED_SOURCE_SERVER`: Drawn by the server" in seed_source["description"]
    assert "SHA-256" in schemas["golf.v1.Deal"]["properties"]["commitment"]["description"]


def test_operations_take_routes_summaries_and_parameters_from_the_contract(doc: dict[str, Any]) -> None:
    hint = doc["paths"]["/v1/games/{gameId}:hint"]["post"]
    assert hint["summary"] == comment("golf.v1.SolitaireService.Hint") != ""
    body = hint["requestBody"]["content"]["application/json"]["schema"]
    assert "gameId" not in body["properties"] and body["required"] == ["idempotencyKey"]
    (game_id,) = hint["parameters"]
    assert game_id["schema"]["maxLength"] == 64 and game_id["required"]
    daily = doc["paths"]["/v1/dailyDeals/{date}"]["get"]
    date = next(p for p in daily["parameters"] if p["name"] == "date")
    assert date["in"] == "path" and date["schema"]["pattern"].startswith("^[0-9]{4}")
    page_size = next(p for p in doc["paths"]["/v1/games"]["get"]["parameters"] if p["name"] == "pageSize")
    assert page_size["schema"]["maximum"] == 100 and page_size["description"]
    # A body with no required field may be left out, as an empty message over gRPC.
    assert doc["paths"]["/v1/deals"]["post"]["requestBody"]["required"] is False


def test_each_route_is_its_rpcs_google_api_http_option() -> None:
    method = pb.DESCRIPTOR.services_by_name["SolitaireService"].methods_by_name["StartNextHole"]
    route = http_route(method)
    assert (route.method, route.path, route.path_fields, route.body) == (
        "POST",
        "/v1/rounds/{roundId}:nextHole",
        ("roundId",),
        True,
    )


def test_a_row_must_match_the_contract() -> None:
    async def handler(_req: Any, _ctx: Any) -> Any:
        return None

    with pytest.raises(ValueError, match="not the contract's"):
        Rpc("golf.v1.SolitaireService", "GetGame", pb.GetDealRequest, pb.GetGameResponse, handler)
    with pytest.raises(KeyError):
        Rpc("golf.v1.SolitaireService", "NoSuchRpc", pb.GetGameRequest, pb.GetGameResponse, handler)
    assert comment("golf.v1.NoSuchMessage") == ""
