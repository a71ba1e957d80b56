"""``ExportRecords`` on a real server over both transports: a player finishes a solitaire game (with an undo) and a
card Golf match, then exports them. REST's newline-delimited JSON and gRPC's stream give the same records, the
table's published commitment is the record's, ``golf verify`` (the installed command) passes them, a record changed
fails it, and a game still being played is never in an export. Refusals before the stream are ordinary errors,
an unknown player's export among them (NOT_FOUND on REST, gRPC and Connect, as its history is)."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from connectrpc.client import ConnectClientSync
from connectrpc.code import Code
from connectrpc.compat import google_protobuf_binary_codec
from connectrpc.errors import ConnectError
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from google.protobuf import json_format

from golf.v1 import card_golf_pb2 as cg
from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2
from tests.e2e.record_exports import NDJSON, grpc_export, rest_export
from tests.e2e.support import GOLF, Grpc, R, Rest, Server, choose_move, move_request, new_key, pb
from tests.e2e.tables import Tables


@pytest.fixture(scope="module")
def player(server: Server) -> Iterator[tuple[Rest, Grpc]]:
    """One new player on both transports (REST signs in; gRPC uses its token)."""
    rest = Rest(server.http_url)
    grpc_client = Grpc(server.grpc_target, as_=rest)
    yield rest, grpc_client
    rest.close()
    grpc_client.close()


def finish_game(rest: Rest, seed: str) -> solitaire_pb2.Game:
    deal = rest.create_deal(pb.CreateDealRequest(preset="standard", seed=seed)).expect_ok().deal
    game = rest.create_game(pb.CreateGameRequest(deal_id=deal.id, winnable_only=False)).expect_ok().game
    n = 0
    while game.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS:
        game = rest.play_move(move_request(game, choose_move(game))).expect_ok().game
        n += 1
        if n == 2:
            game = rest.undo(pb.UndoRequest(game_id=game.id, idempotency_key=new_key())).expect_ok().game
    return game


def finish_match(tables: Tables, rng: random.Random) -> tuple[cg.Table, cg.Table]:
    """A match against a bot played to its end: the table as created, and at the end."""
    made = tables.create(preset="six-card", seats=2, holes=1).expect_ok().table
    tables.add_bot(made.id, cg.BOT_LEVEL_GREEDY).expect_ok()
    table = tables.start(made.id).expect_ok().table
    while table.status == cg.TABLE_STATUS_PLAYING:
        assert not table.seed and table.commitment == made.commitment
        table = tables.act(table.id, rng.choice(list(table.legal_moves))).expect_ok().table
    return made, table


def verify(records: list[rpb.Record], path: Path) -> subprocess.CompletedProcess[str]:
    path.write_text("".join(json_format.MessageToJson(r, indent=None) + "\n" for r in records))
    return subprocess.run([GOLF, "verify", str(path)], capture_output=True, text=True, timeout=120)


def test_both_transports_export_what_golf_verify_passes(player: tuple[Rest, Grpc], tmp_path: Path) -> None:
    rest, grpc_client = player
    game = finish_game(rest, "e2e-export-1")
    made, over = finish_match(Tables(rest), random.Random(3))
    assert over.status == cg.TABLE_STATUS_OVER and len(over.seed) == 32 and over.commitment == made.commitment
    by_rest = rest_export(rest, playerId="me")
    by_grpc = grpc_export(grpc_client, player_id="me")
    assert by_rest == by_grpc
    assert [(r.kind, r.id) for r in by_rest] == [
        (rpb.RECORD_KIND_SOLITAIRE_GAME, game.id),
        (rpb.RECORD_KIND_CARD_GOLF_MATCH, over.id),
    ]
    solitaire, match = by_rest
    assert (
        solitaire.seed == "e2e-export-1"
        and solitaire.score == game.score
        and "U" in [e.code for e in solitaire.entries]
    )
    # The match's record carries the commitment the table published from its creation, and the seed it revealed.
    assert match.commitment == made.commitment and match.seed == over.seed
    text = f"golf-shuffle-v1\n{match.seed}\n{match.rules}".encode()
    assert hashlib.sha256(text).hexdigest() == made.commitment
    assert [s.total for s in match.seats] == list(over.score_sheet.totals)
    done = verify(by_rest, tmp_path / "export.ndjson")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[0].startswith(f"OK game {game.id} ")
    assert done.stdout.splitlines()[1].startswith(f"OK match {over.id} ")
    match.seats[0].total += 1
    failed = verify([solitaire, match], tmp_path / "changed.ndjson")
    assert failed.returncode == 1 and f"FAILED match {over.id}: seat 0: total" in failed.stdout


def test_a_game_in_progress_is_never_exported(player: tuple[Rest, Grpc], server: Server) -> None:
    rest, _ = player
    deal = rest.create_deal(pb.CreateDealRequest(preset="standard", seed="e2e-export-open")).expect_ok().deal
    playing = rest.create_game(pb.CreateGameRequest(deal_id=deal.id, winnable_only=False)).expect_ok().game
    other = Rest(server.http_url)
    try:
        for who in (rest, other):
            with who.http.stream("GET", "/v1/records:export") as resp:
                body = resp.read().decode()
            assert resp.status_code == 200 and playing.id not in body and "e2e-export-open" not in body
    finally:
        other.close()


def test_refusals_come_before_the_stream(player: tuple[Rest, Grpc], server: Server) -> None:
    rest, grpc_client = player
    resp = rest.http.get("/v1/records:export", params={"max": "100001"})
    assert resp.status_code == 400 and resp.headers["content-type"].startswith("application/json")
    assert json.loads(resp.text)["reason"] == R.Name(R.ERROR_REASON_INVALID_ARGUMENT)
    with pytest.raises(grpc.RpcError) as caught:
        grpc_export(grpc_client, max=100_001)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT  # type: ignore[attr-defined]
    anonymous = Rest(server.http_url, sign_in=False)
    try:
        assert anonymous.http.get("/v1/records:export").status_code == 401
    finally:
        anonymous.close()


def test_an_unknown_player_is_not_found_as_for_their_history(player: tuple[Rest, Grpc], server: Server) -> None:
    rest, grpc_client = player
    unknown = "no-such-player"
    history = rest.http.get(f"/v1/players/{unknown}/history")
    assert history.status_code == 404
    resp = rest.http.get("/v1/records:export", params={"playerId": unknown})
    assert resp.status_code == 404 and resp.headers["content-type"].startswith("application/json"), resp.text
    assert json.loads(resp.text)["reason"] == R.Name(R.ERROR_REASON_NOT_FOUND)
    with pytest.raises(grpc.RpcError) as caught:
        grpc_export(grpc_client, player_id=unknown)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND  # type: ignore[attr-defined]
    export: MethodInfo[rpb.ExportRecordsRequest, rpb.ExportRecordsResponse] = MethodInfo(
        name="ExportRecords",
        service_name=rpb.DESCRIPTOR.services_by_name["RecordService"].full_name,
        input=rpb.ExportRecordsRequest,
        output=rpb.ExportRecordsResponse,
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=StreamType.SERVER_STREAM,
    )
    with ConnectClientSync(server.http_url, codec=google_protobuf_binary_codec(), timeout_ms=20_000) as connect:
        with pytest.raises(ConnectError) as refused:
            stream = connect.execute_server_stream(
                request=rpb.ExportRecordsRequest(player_id=unknown),
                method=export,
                headers={"authorization": f"Bearer {rest.token}"},
            )
            list(stream)
        assert refused.value.code == Code.NOT_FOUND
    # A player who exists is exported, records or none.
    other = Rest(server.http_url)
    try:
        assert rest_export(rest, playerId=other.player_id) == []
    finally:
        other.close()


def test_openapi_shows_the_ndjson_response(player: tuple[Rest, Grpc]) -> None:
    rest, _ = player
    doc = rest.http.get("/openapi.json").json()
    content = doc["paths"]["/v1/records:export"]["get"]["responses"]["200"]["content"]
    assert list(content) == [NDJSON]
