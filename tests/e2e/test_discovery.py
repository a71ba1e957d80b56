"""What a client can discover: gRPC health and reflection, the OpenAPI document and the docs page."""

from __future__ import annotations

import re
from typing import Any

import grpc
import httpx
import pytest
from google.api import annotations_pb2
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from golf.v1 import player_service_pb2, record_service_pb2, solitaire_service_pb2
from tests.e2e.support import Server, health_status

SERVICE = solitaire_service_pb2.DESCRIPTOR.services_by_name["SolitaireService"]
PLAYERS = player_service_pb2.DESCRIPTOR.services_by_name["PlayerService"]
# Every RPC and its REST route (method, path), as the proto comments document them.
ROUTES = {
    "CreateDeal": ("post", "/v1/deals"),
    "GetDeal": ("get", "/v1/deals/{dealId}"),
    "CreateGame": ("post", "/v1/games"),
    "GetGame": ("get", "/v1/games/{gameId}"),
    "ListGames": ("get", "/v1/games"),
    "PlayMove": ("post", "/v1/games/{gameId}/moves"),
    "ListMoves": ("get", "/v1/games/{gameId}/moves"),
    "Hint": ("post", "/v1/games/{gameId}:hint"),
    "Undo": ("post", "/v1/games/{gameId}:undo"),
    "AutoPlay": ("post", "/v1/games/{gameId}:autoPlay"),
    "CreateRound": ("post", "/v1/rounds"),
    "GetRound": ("get", "/v1/rounds/{roundId}"),
    "StartNextHole": ("post", "/v1/rounds/{roundId}:nextHole"),
    "GetDailyDeal": ("get", "/v1/dailyDeals/{date}"),
    "ListRounds": ("get", "/v1/rounds"),
}
PLAYER_ROUTES = {
    "CreateGuest": ("post", "/v1/players:guest"),
    "RefreshToken": ("post", "/v1/tokens:refresh"),
    "RevokeToken": ("post", "/v1/tokens:revoke"),
    "GetPlayer": ("get", "/v1/players/{playerId}"),
    "SetDisplayName": ("post", "/v1/players/{playerId}:setDisplayName"),
}
RECORDS = record_service_pb2.DESCRIPTOR.services_by_name["RecordService"]
RECORD_ROUTES = {
    "ListHistory": ("get", "/v1/players/{playerId}/history"),
    "GetLeaderboard": ("get", "/v1/leaderboards"),
    "GetDealStats": ("get", "/v1/deals/{dealId}/stats"),
    "ListDealStats": ("get", "/v1/dealStats"),
    "GetReplay": ("get", "/v1/replays/{recordId}"),
    "ExportRecords": ("get", "/v1/records:export"),
}
PUBLIC = {"CreateGuest", "RefreshToken", "RevokeToken"}
"""The RPCs callable without an access token."""
# Query parameters of the GET routes, besides their path parameters.
LISTING = {"pageSize", "pageToken", "preset", "status", "createdAfter", "createdBefore"}
QUERY = {"ListGames": LISTING, "ListRounds": LISTING, "GetDailyDeal": {"preset"}}


@pytest.mark.parametrize(("service", "routes"), [(SERVICE, ROUTES), (PLAYERS, PLAYER_ROUTES), (RECORDS, RECORD_ROUTES)])
def test_routes_cover_every_rpc_as_the_proto_declares_them(service: Any, routes: dict[str, Any]) -> None:
    """Each RPC's `google.api.http` option (what a gateway such as Envoy's transcoder reads) states the route the
    REST gateway serves, unchanged since the routes were first published."""
    assert set(routes) == {m.name for m in service.methods}, "an RPC without a REST route in this test"
    declared = {}
    for method in service.methods:
        rule = method.GetOptions().Extensions[annotations_pb2.http]
        kind = rule.WhichOneof("pattern")
        assert (kind, rule.body) in {("get", ""), ("post", "*")}, method.name
        declared[method.name] = (kind, re.sub(r"{(\w+)}", _camel_param, getattr(rule, kind)))
    assert declared == routes


def _camel_param(match: re.Match[str]) -> str:
    """A path parameter in proto3 JSON form: {game_id} -> {gameId}."""
    head, *rest = match.group(1).split("_")
    return "{" + head + "".join(w.title() for w in rest) + "}"


def test_health_reports_serving(server: Server) -> None:
    assert health_status(server.grpc_target) == health_pb2.HealthCheckResponse.SERVING
    assert health_status(server.grpc_target, SERVICE.full_name) == health_pb2.HealthCheckResponse.SERVING
    with grpc.insecure_channel(server.grpc_target) as channel:
        from grpc_health.v1 import health_pb2_grpc

        with pytest.raises(grpc.RpcError) as err:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service="no.Such"), timeout=5)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_and_describes_the_service(server: Server) -> None:
    with grpc.insecure_channel(server.grpc_target) as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        services = set(db.get_services())
        health, reflection = "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"
        assert {SERVICE.full_name, PLAYERS.full_name, health, reflection} <= services
        # The full descriptor is served, so a generic client (grpcurl, Postman) can call every method.
        from google.protobuf.descriptor_pool import DescriptorPool

        pool = DescriptorPool(db)
        described = pool.FindServiceByName(SERVICE.full_name)
        # The server reflects the same contract as the generated code; the core RPCs are all there.
        assert {m.name for m in described.methods} == {m.name for m in SERVICE.methods}
        assert set(ROUTES) == {m.name for m in described.methods}
        play = described.methods_by_name["PlayMove"]
        assert play.input_type.full_name == "golf.v1.PlayMoveRequest"
        assert "idempotency_key" in play.input_type.fields_by_name
        assert pool.FindMessageTypeByName("golf.v1.Error").fields_by_name["reason"].enum_type.name == "ErrorReason"


def test_openapi_lists_every_route_with_schemas(server: Server) -> None:
    resp = httpx.get(f"{server.http_url}/openapi.json", timeout=10)
    assert resp.status_code == 200
    doc = resp.json()
    schemas = doc["components"]["schemas"]
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    assert doc["security"] == [{"bearer": []}]
    every = [(SERVICE, rpc, route) for rpc, route in ROUTES.items()]
    every += [(PLAYERS, rpc, route) for rpc, route in PLAYER_ROUTES.items()]
    for service, rpc, (method, path) in every:
        assert path in doc["paths"], f"{path} missing"
        op = doc["paths"][path][method]
        assert op["operationId"] == rpc
        # Signing in needs no token; every other operation inherits the document's bearer requirement.
        assert ("security" in op and op["security"] == []) == (rpc in PUBLIC), rpc
        assert {"401", "405", "429"} <= set(op["responses"])
        assert ("413" in op["responses"]) == (method == "post"), rpc
        assert "Retry-After" in op["responses"]["429"]["headers"]
        assert "Allow" in op["responses"]["405"]["headers"]
        method_desc = service.methods_by_name[rpc]
        ok = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
        assert ok == f"#/components/schemas/{method_desc.output_type.full_name}"
        for status in ("400", "404", "409"):
            err = op["responses"][status]["content"]["application/json"]["schema"]["$ref"]
            assert err == "#/components/schemas/golf.v1.Error"
        if method == "post":
            # The request message; with path parameters, the message less those fields (they come from the path).
            body = op["requestBody"]["content"]["application/json"]["schema"]
            path_fields = {f.json_name for f in method_desc.input_type.fields if "{" + f.json_name + "}" in path}
            if path_fields:
                message = schemas[method_desc.input_type.full_name]
                assert set(body["properties"]) == set(message["properties"]) - path_fields, rpc
                assert not path_fields & set(body.get("required", [])), rpc
            else:
                assert body["$ref"] == f"#/components/schemas/{method_desc.input_type.full_name}"
        else:
            params = {p["name"] for p in op.get("parameters", [])}
            path_params = {f.json_name for f in method_desc.input_type.fields if "{" + f.json_name + "}" in path}
            assert path_params <= params
            assert QUERY.get(rpc, set()) <= params, (rpc, params)
    # Every $ref points at a schema that exists; the schemas use the proto3 JSON names.
    refs: list[str] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref":
                    refs.append(value)
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    missing = {r for r in refs if r.removeprefix("#/components/schemas/") not in schemas}
    assert not missing
    assert "idempotencyKey" in schemas["golf.v1.PlayMoveRequest"]["properties"]
    assert "legalMoves" in schemas["golf.v1.Game"]["properties"]
    assert {"postMortem", "hintsUsed", "undosUsed", "undosLeft", "roundId", "hole"} <= set(
        schemas["golf.v1.Game"]["properties"]
    )
    assert {"winnable", "difficulty", "difficultyScore"} <= set(schemas["golf.v1.Deal"]["properties"])


def test_docs_page_answers(server: Server) -> None:
    resp = httpx.get(f"{server.http_url}/docs", timeout=10)
    assert resp.status_code == 200
    assert "openapi.json" in resp.text


def test_reflection_answers_on_v1_as_well_as_v1alpha(server: Server) -> None:
    """Newer grpcurl, buf curl and Postman ask grpc.reflection.v1 first; it is v1alpha renamed on the wire."""
    from grpc_reflection.v1alpha import reflection_pb2

    with grpc.insecure_channel(server.grpc_target) as channel:
        for name in ("grpc.reflection.v1", "grpc.reflection.v1alpha"):
            call = channel.stream_stream(
                f"/{name}.ServerReflection/ServerReflectionInfo",
                request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
            )
            asks = [
                reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol=SERVICE.full_name),
                reflection_pb2.ServerReflectionRequest(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
            ]
            listed, described, itself = list(call(iter(asks), timeout=10))
            names = {s.name for s in listed.list_services_response.service}
            assert {SERVICE.full_name, PLAYERS.full_name, "grpc.reflection.v1.ServerReflection"} <= names, name
            assert described.file_descriptor_response.file_descriptor_proto, name
            assert itself.file_descriptor_response.file_descriptor_proto, name
