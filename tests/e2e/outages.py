"""A database outage seen from outside: calls refused as UNAVAILABLE while it lasts, readiness, recovery, and what the
server logged."""

from __future__ import annotations

import time

import httpx

from tests.e2e.support import Grpc, Rest, Server, choose_move, draw, move_request, pb
from tests.e2e.support import R as Reason

RETRY_SECONDS = 2.0
RECOVERY_TIMEOUT = 30.0


def refused_while_down(clients: list[Rest | Grpc], game_ids: dict[str, str]) -> None:
    """Every kind of request is refused with UNAVAILABLE and a retry delay, several times over."""
    for _ in range(3):
        for client in clients:
            game_id = game_ids[client.name]
            for reply in (
                client.get_game(game_id),
                client.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)),
                client.list_games(),
                client.play_move(pb.PlayMoveRequest(game_id=game_id, idempotency_key="down", move=draw())),
            ):
                err = reply.expect_error(Reason.ERROR_REASON_UNAVAILABLE)
                assert "database" in err.message and "try again" in err.message, err
                assert reply.retry_delay() == RETRY_SECONDS, (client.name, reply.raw, reply.headers)
                assert err.retry_delay.ToTimedelta().total_seconds() == RETRY_SECONDS


def recovered(clients: list[Rest | Grpc], game_ids: dict[str, str]) -> None:
    """Both transports answer again (without a restart), and a move can be played."""
    deadline = time.monotonic() + RECOVERY_TIMEOUT
    for client in clients:
        while True:
            reply = client.get_game(game_ids[client.name])
            if reply.ok:
                break
            reply.expect_error(Reason.ERROR_REASON_UNAVAILABLE)
            assert time.monotonic() < deadline, f"{client.name}: still refused after the database came back"
            time.sleep(0.2)
        game = reply.message.game
        moved = client.play_move(move_request(game, choose_move(game), expected=game.version)).expect_ok()
        assert moved.game.version == game.version + 1


def readiness(server: Server) -> tuple[int, dict[str, str]]:
    resp = httpx.get(f"{server.http_url}/readyz", timeout=10)
    checks: dict[str, str] = resp.json().get("checks", {})
    return resp.status_code, checks


def check_log(server: Server) -> None:
    text = server.log_text()
    assert text.count("database unreachable") == 1, text
    assert text.count("database reachable again") == 1, text
    assert "Traceback" not in text and "unhandled error" not in text, text


def sign_in_and_play(server: Server) -> tuple[list[Rest | Grpc], dict[str, str]]:
    """Clients signed in (that writes the database, so it happens while the database is up) with a game each."""
    clients: list[Rest | Grpc] = [Rest(server.http_url), Grpc(server.grpc_target)]
    game_ids = {}
    for client in clients:
        game = client.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)).expect_ok().game
        game_ids[client.name] = game.id
    return clients, game_ids
