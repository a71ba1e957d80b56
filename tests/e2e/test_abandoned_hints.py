"""A flood of abandoned hints does not hold up the solver for anyone else.

One player asks for 200 hints over deals whose search runs the solver's whole budget (seconds each: the test's
server searches 10,000,000 positions a call, five times the default) and gives up
on every one: gRPC calls past their deadline, REST connections closed. Another player's hint then takes its own
search time and little more: the abandoned calls left the queue, the searches already running were stopped, and
the worker processes are idle once the other player is served. Cheap requests (a move) never waited for any of it.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path

import grpc
import pytest

from golf.v1 import solitaire_pb2
from tests.e2e.support import Grpc, Rest, Server, choose_move, metric_sum, migrate, move_request, pb

BUDGET = 10_000_000
FLOOD_SEEDS = ("flood-27", "flood-45", "flood-2")
"""Two-deck deals whose first hint runs ``BUDGET`` out (3 to 4 s of a worker on a quiet machine)."""
OWN_SEED = "slow-2"
"""The other player's deal: its first hint searches 300,000 positions (a tenth of a second)."""
ABANDONED = 100  # per transport
GIVE_UP_AFTER = 0.75  # seconds: every abandoned hint is queued or searching by then
SLACK = 1.5
"""What the other player's hint may take beyond its own search time (2 cores, tests running beside this one)."""


@pytest.fixture
def server(sqlite_url: str, tmp_path: Path) -> Iterator[Server]:
    migrate(sqlite_url)
    # Two workers, as the settings say; a queue long enough to hold the whole flood, with no bound per player
    # (nothing refused: abandoned; the bound is tested in tests/unit/adapters/test_solver_queue.py); a budget that keeps
    # each flood search running for seconds.
    env = {
        "GOLF_SOLVER_WORKERS": "2",
        "GOLF_SOLVER_QUEUE": "500",
        "GOLF_SOLVER_QUEUE_PER_PLAYER": "0",
        "GOLF_SOLVER_BUDGET": str(BUDGET),
    }
    srv = Server(sqlite_url, tmp_path, extra_env=env).start()
    try:
        yield srv
    finally:
        srv.terminate()


def _game(client: Grpc, seed: str) -> solitaire_pb2.Game:
    deal = client.create_deal(pb.CreateDealRequest(preset="two-decks", seed=seed)).expect_ok().deal
    game: solitaire_pb2.Game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    return game


def _timed_hint(client: Grpc, game: solitaire_pb2.Game, key: str) -> float:
    start = time.perf_counter()
    client.hint(pb.HintRequest(game_id=game.id, idempotency_key=key)).expect_ok()
    return time.perf_counter() - start


def _rest_hint(server: Server, token: str, game_id: str, key: str) -> socket.socket:
    """A REST hint sent on a connection of its own, its answer not read."""
    host, port = server.http_url.removeprefix("http://").split(":")
    body = json.dumps({"idempotencyKey": key}).encode()
    head = (
        f"POST /v1/games/{game_id}:hint HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    sock = socket.create_connection((host, int(port)))
    sock.sendall(head.encode() + body)
    return sock


def _unanswered(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) == b"x"  # never: a byte is an answer, b"" the server closing
    except BlockingIOError:
        return True


def _solver_cpu_seconds(server: Server) -> float:
    """CPU time used so far by the server's child processes (the solver's workers among them)."""
    assert server.proc is not None
    total = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == server.proc.pid:  # ppid
            total += int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks
    return total / os.sysconf("SC_CLK_TCK")


def test_abandoned_hints_do_not_delay_another_players_hint(server: Server) -> None:
    ann_rest = Rest(server.http_url)
    ann = Grpc(server.grpc_target, as_=ann_rest)
    bob = Grpc(server.grpc_target)  # another player
    try:
        bob_game = _game(bob, OWN_SEED)
        cheap = bob.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)).expect_ok().game
        floods = [_game(ann, seed) for seed in FLOOD_SEEDS]

        # Bob's hint alone: its own search time (after both workers have started and searched once).
        warm = [
            bob.stub.Hint.future(pb.HintRequest(game_id=bob_game.id, idempotency_key=key), metadata=bob.metadata)
            for key in ("warm-0", "warm-1")
        ]
        for call in warm:
            call.result()
        alone = max(_timed_hint(bob, bob_game, f"alone-{i}") for i in range(2))

        # Ann's flood: 100 hints over gRPC with a deadline, 100 over REST on connections she then closes.
        calls: list[Future[object]] = [
            ann.stub.Hint.future(
                pb.HintRequest(game_id=floods[i % len(floods)].id, idempotency_key=f"grpc-{i}"),
                timeout=GIVE_UP_AFTER,
                metadata=ann.metadata,
            )
            for i in range(ABANDONED)
        ]
        sockets = [
            _rest_hint(server, ann_rest.token, floods[i % len(floods)].id, f"rest-{i}") for i in range(ABANDONED)
        ]
        # Meanwhile a move is served at once: moves never wait for the solver. Waiting for it would take at least
        # one flood search (BUDGET positions: over 30 times Bob's own search), so the bound is in units of Bob's
        # search as this machine ran it just now, not in seconds: a loaded machine slows both alike.
        start = time.perf_counter()
        bob.play_move(move_request(cheap, choose_move(cheap))).expect_ok()
        move_took = time.perf_counter() - start
        assert move_took < max(1.0, 10 * alone), f"a move took {move_took:.2f} s; Bob's search alone {alone:.2f} s"

        time.sleep(max(0.0, GIVE_UP_AFTER - (time.perf_counter() - start)))
        pending = sum(_unanswered(sock) for sock in sockets)
        for sock in sockets:
            sock.close()
        codes = []
        for call in calls:
            with pytest.raises(grpc.RpcError) as info:
                call.result()
            codes.append(info.value.code())  # type: ignore[attr-defined]
        assert pending == ABANDONED  # every REST hint was still waiting for its answer: abandoned, not refused
        assert set(codes) == {grpc.StatusCode.DEADLINE_EXCEEDED}

        # Bob's hint takes its own search time, not that of Ann's flood (3 s and more per search still running).
        after = _timed_hint(bob, bob_game, "after")
        assert after <= alone + SLACK, f"bob's hint took {after:.2f} s after the flood, {alone:.2f} s alone"

        # And no worker is still searching for Ann.
        used = _solver_cpu_seconds(server)
        time.sleep(1.0)
        assert _solver_cpu_seconds(server) - used < 0.3, "a solver process is still busy after the flood"

        # The server saw every client go, and wrote no error about it.
        assert metric_sum(server, "golf_http_requests_total", method="POST", status="499") == ABANDONED
        assert metric_sum(server, "golf_grpc_requests_total", method="Hint", code="CANCELLED") == ABANDONED
        errors = [line for line in server.log_text().splitlines() if "Traceback" in line or "error" in line.lower()]
        assert errors == [], server.log_text()
    finally:
        for client in (ann, bob, ann_rest):
            client.close()
