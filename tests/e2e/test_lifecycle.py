"""The process: a restart mid-game loses nothing, and SIGTERM lets requests in flight finish and exits 0."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from golf.v1 import solitaire_pb2
from tests.e2e.support import Grpc, Reply, Rest, Server, choose_move, migrate, move_request, pb

OWN_SERVER = True
"""A server and database of this module's own (tests/e2e/conftest.py):
it stops and restarts its server."""

IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS


def test_restart_mid_game_continues_at_the_same_version(own_server: Server) -> None:
    rest, grpc_client = Rest(own_server.http_url), Grpc(own_server.grpc_target)
    games: dict[str, solitaire_pb2.Game] = {}
    last: dict[str, pb.PlayMoveRequest] = {}
    for client in (rest, grpc_client):
        deal = client.create_deal(pb.CreateDealRequest(seed="restart-seed")).expect_ok().deal
        game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
        for _ in range(6):
            last[client.name] = move_request(game, choose_move(game), expected=game.version)
            game = client.play_move(last[client.name]).expect_ok().game
        games[client.name] = game
    rest.close()
    grpc_client.close()

    assert own_server.stop() == 0, own_server.log_text()
    own_server.start()  # same database, new ports
    # The same players with the tokens they had: the signing key outlives the process.
    rest, grpc_client = Rest(own_server.http_url, as_=rest), Grpc(own_server.grpc_target, as_=grpc_client)
    try:
        for client in (rest, grpc_client):
            before = games[client.name]
            now = client.get_game(before.id).expect_ok().game
            assert now.version == before.version == 6
            assert now.columns == before.columns and now.pile_top == before.pile_top
            assert now.legal_moves == before.legal_moves
            # The idempotency record survived too: the last move's retry is the stored result.
            again = client.play_move(last[client.name]).expect_ok()
            assert again.replayed and again.game.version == 6
            game = now
            while game.status == IN_PROGRESS:
                game = client.play_move(move_request(game, choose_move(game), expected=game.version)).expect_ok().game
            assert game.version == game.moves_played > 6
            assert game.HasField("reveal")
        # Both games of the same deal, played the same way, ended the same.
        end_r = rest.get_game(games["rest"].id).expect_ok().game
        end_g = grpc_client.get_game(games["grpc"].id).expect_ok().game
        assert (end_r.score, end_r.version, end_r.reveal) == (end_g.score, end_g.version, end_g.reveal)
    finally:
        rest.close()
        grpc_client.close()


def _server_side_unread(port: int) -> int:
    """Bytes the kernel holds for the server's established connections on ``port`` that it has not read."""
    unread = 0
    with open("/proc/net/tcp") as table:
        next(table)
        for line in table:
            parts = line.split()
            local, state, queues = parts[1], parts[3], parts[4]
            if state == "01" and int(local.split(":")[1], 16) == port:
                unread += int(queues.split(":")[1], 16)
    return unread


@pytest.fixture
def draining_server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    """A server of this test alone that keeps taking up gRPC calls for the default second after SIGTERM (the
    harness's other servers stop without that drain, to save time)."""
    migrate(database_url)
    srv = Server(database_url, tmp_path, extra_env={"GOLF_SHUTDOWN_DRAIN_SECONDS": "1"}).start()
    try:
        yield srv
    finally:
        if srv.proc is not None:
            assert srv.stop() == 0, srv.log_text()


def test_sigterm_lets_requests_in_flight_finish(draining_server: Server) -> None:
    setup = Rest(draining_server.http_url)
    n = 12
    games = []
    for _ in range(2 * n):
        games.append(setup.create_game(pb.CreateGameRequest(preset="two-decks", winnable_only=False)).expect_ok().game)
    setup.close()

    # Connections are opened (and used once) first, so every request below is sent on an accepted connection.
    rests = [Rest(draining_server.http_url, as_=setup) for _ in range(n)]
    grpc_client = Grpc(draining_server.grpc_target, as_=setup)
    for client, game in zip(rests, games, strict=False):
        client.get_game(game.id).expect_ok()
    grpc_client.get_game(games[-1].id).expect_ok()

    first_reply = threading.Event()
    requests = [move_request(g, choose_move(g), expected=0) for g in games]

    def send(client: Rest | Grpc, req: pb.PlayMoveRequest) -> Reply:
        try:
            return client.play_move(req)
        finally:
            first_reply.set()

    with ThreadPoolExecutor(max_workers=2 * n) as pool:
        futures: list[Future[Reply]] = [pool.submit(send, c, r) for c, r in zip(rests, requests[:n], strict=True)]
        futures += [pool.submit(send, grpc_client, r) for r in requests[n:]]
        first_reply.wait(timeout=60)
        # Wait (bounded, not asserted) until the server has read every byte sent to it: the requests are its now.
        deadline = time.monotonic() + 10
        while _server_side_unread(draining_server.http_port) + _server_side_unread(draining_server.grpc_port):
            if time.monotonic() > deadline:
                break
            time.sleep(0.005)
        draining_server.signal_stop()
        outcomes: list[Reply | BaseException] = []
        for f in futures:
            try:
                outcomes.append(f.result(timeout=120))
            except Exception as err:  # connection errors, or a reply without its Error
                outcomes.append(err)
    code = draining_server.wait()
    for client in rests:
        client.close()
    grpc_client.close()

    failed = [i for i, o in enumerate(outcomes) if not isinstance(o, Reply) or not o.ok]
    for i, reply in enumerate(outcomes):
        if i not in failed:
            assert isinstance(reply, Reply)
            made = reply.expect_ok()
            assert made.game.id == requests[i].game_id and made.game.version == 1
    assert code == 0, f"exit code {code} after SIGTERM:\n{draining_server.log_text()}"

    # Every acknowledged move was committed: a new process on the same database has all of them. A request
    # that failed is safe to retry with its idempotency key: it is made once, whatever happened before.
    draining_server.start()
    check, check_grpc = Rest(draining_server.http_url, as_=setup), Grpc(draining_server.grpc_target, as_=setup)
    try:
        for i in failed:
            retry = (check if i < n else check_grpc).play_move(requests[i]).expect_ok()
            assert retry.game.version == 1
        for game in games:
            assert check.get_game(game.id).expect_ok().game.version == 1
    finally:
        check.close()
        check_grpc.close()
    report = [f"{'rest' if i < n else 'grpc'} #{i}: {outcomes[i]!r}"[:300] for i in failed]
    assert not failed, f"{len(failed)} of {len(outcomes)} requests sent before SIGTERM failed:\n" + "\n".join(report)


def test_a_port_taken_before_the_server_binds_it_is_met_by_new_ports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness chooses free ports, then the server binds them: another process may take one in between (it
    did, in a CI run). The server then exits at start; the harness starts it again on new ports."""
    import socket

    import httpx

    from tests.e2e import support

    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    real = support.free_ports
    chosen = iter([[taken.getsockname()[1], real(1)[0]]])
    monkeypatch.setattr(support, "free_ports", lambda n: next(chosen, None) or real(n))
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    support.migrate(url)
    server = support.Server(url, tmp_path)
    try:
        server.start()
        assert server.starts == 2 and server.http_port != taken.getsockname()[1]
        assert "address already in use" in (tmp_path / "server-1.log").read_text()
        assert httpx.get(f"{server.http_url}/openapi.json", timeout=5).status_code == 200
    finally:
        taken.close()
        server.terminate()


def test_idle_http_connections_stay_open_for_the_keep_alive_setting(tmp_path: Path) -> None:
    """An idle HTTP connection is closed after ``GOLF_HTTP_KEEP_ALIVE_SECONDS`` (75 by default), not uvicorn's 5 s:
    a proxy that reuses a connection the server is closing gets a reset, and a test client did once, on a loaded
    machine."""
    import socket

    from tests.e2e import support

    url = f"sqlite:///{tmp_path / 'golf.db'}"
    support.migrate(url)
    server = support.Server(url, tmp_path, extra_env={"GOLF_HTTP_KEEP_ALIVE_SECONDS": "1"})
    try:
        server.start()
        with socket.create_connection(("127.0.0.1", server.http_port), timeout=10) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200")
            idle = time.monotonic()
            sock.settimeout(4)  # under uvicorn's own 5 s
            assert sock.recv(1) == b""  # closed by the server
            assert 0.5 < time.monotonic() - idle < 3.5
    finally:
        server.terminate()
