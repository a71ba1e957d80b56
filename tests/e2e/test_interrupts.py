"""Nobody's fault, nothing in the error log: clients that hang up mid-request, and Ctrl-C on ``make run``.

A client that goes away (a REST connection closed mid-request, a gRPC call cancelled or past its deadline) is not a
server error: no traceback, no ERROR line. Ctrl-C stops ``golf serve`` (and ``golf migrate``) quietly: no
``KeyboardInterrupt`` traceback from the server or from its solver processes (a terminal sends SIGINT to the whole
process group), and an exit code of 0 (stopped gracefully) or 130 (interrupted).
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import grpc
import httpx
import pytest

from golf.v1 import solitaire_pb2
from tests.e2e.support import (
    GOLF,
    TEST_TOKEN_KEY,
    UNLIMITED,
    Grpc,
    Rest,
    Server,
    choose_move,
    free_ports,
    health_status,
    migrate,
    move_request,
    pb,
)

OWN_SERVER = True
"""A server and database of this module's own (tests/e2e/conftest.py):
it reads its server's whole log for errors that hung-up clients must not cause."""

QUIET_EXITS = (0, 130, -signal.SIGINT)
"""Stopped gracefully, interrupted (Ctrl-C taken as a KeyboardInterrupt), or killed by SIGINT before Python took
over its handling (the first milliseconds of the interpreter)."""
# Two-deck deals whose first hint runs through the solver's default budget (half a second or more), from fixed seeds.
SLOW_SEEDS = ("slow-9", "slow-15", "slow-20")


def _errors_in(log: str) -> list[str]:
    return [
        line
        for line in log.splitlines()
        if "Traceback" in line or "unhandled error" in line or '"level": "error"' in line or "KeyboardInterrupt" in line
    ]


def _slow_game(client: Grpc, seed: str) -> solitaire_pb2.Game:
    deal = client.create_deal(pb.CreateDealRequest(preset="two-decks", seed=seed)).expect_ok().deal
    game: solitaire_pb2.Game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    return game


# -- clients that hang up ----------------------------------------------------------------------------------------
def test_clients_that_hang_up_are_not_errors(server: Server, rest: Rest, grpc_client: Grpc) -> None:
    deadline_game, cancel_game, rest_game = (_slow_game(grpc_client, seed) for seed in SLOW_SEEDS)

    # gRPC: the deadline passes while the solver works.
    with pytest.raises(grpc.RpcError) as info:
        grpc_client.stub.Hint(
            pb.HintRequest(game_id=deadline_game.id, idempotency_key="deadline"),
            timeout=0.2,
            metadata=grpc_client.metadata,
        )
    assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED

    # gRPC: the client cancels the call.
    future = grpc_client.stub.Hint.future(
        pb.HintRequest(game_id=cancel_game.id, idempotency_key="cancel"), metadata=grpc_client.metadata
    )
    time.sleep(0.2)
    assert future.cancel()  # type: ignore[no-untyped-call]

    # REST: the client gives up waiting and closes the connection.
    with pytest.raises(httpx.TimeoutException):
        rest.http.post(f"/v1/games/{rest_game.id}:hint", json={"idempotencyKey": "gone"}, timeout=0.2)

    # REST: the client hangs up halfway through sending its body.
    host, port = server.http_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as sock:
        head = (
            f"POST /v1/games/{rest_game.id}/moves HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {rest.token}\r\nContent-Length: 1000\r\n\r\n"
        )
        sock.sendall(head.encode() + b'{"idempotencyKey": "half')
        time.sleep(0.3)

    # The server goes on serving, and wrote nothing about any of it at ERROR.
    time.sleep(1.5)  # the abandoned searches run out (the default budget: under a second each)
    for client in (rest, grpc_client):
        client.get_game(cancel_game.id).expect_ok()
    assert _errors_in(server.log_text()) == [], server.log_text()


def test_calls_cut_short_by_their_deadlines_are_not_errors(server: Server, grpc_client: Grpc) -> None:
    """Deadlines of a millisecond or so end calls at every point: before the handler, in the middle of a statement
    or of a commit, while the answer is being sent. None of it is an error of the server's."""
    games = [
        grpc_client.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)).expect_ok().game
        for _ in range(8)
    ]
    codes: Counter[grpc.StatusCode] = Counter()
    lock = threading.Lock()

    def calls(seed: int) -> None:
        rnd = random.Random(seed)
        for i in range(200):
            game = rnd.choice(games)
            timeout = rnd.choice([0.0005, 0.001, 0.002, 0.004, 0.008])
            kind = rnd.random()
            try:
                if kind < 0.4:
                    req = move_request(game, choose_move(game), key=f"cut-{seed}-{i}")
                    grpc_client.stub.PlayMove(req, timeout=timeout, metadata=grpc_client.metadata)
                elif kind < 0.7:
                    new = pb.CreateGameRequest(preset="standard", winnable_only=False)
                    grpc_client.stub.CreateGame(new, timeout=timeout, metadata=grpc_client.metadata)
                elif kind < 0.85:
                    grpc_client.stub.GetGame(
                        pb.GetGameRequest(game_id=game.id), timeout=timeout, metadata=grpc_client.metadata
                    )
                else:
                    listing = grpc_client.stub.ListGames.future(
                        pb.ListGamesRequest(page_size=50), metadata=grpc_client.metadata
                    )
                    time.sleep(timeout)
                    listing.cancel()  # type: ignore[no-untyped-call]
            except grpc.RpcError as err:
                with lock:
                    codes[err.code()] += 1

    threads = [threading.Thread(target=calls, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes[grpc.StatusCode.DEADLINE_EXCEEDED] > 100, codes  # the deadlines did cut calls short
    assert set(codes) <= {grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.FAILED_PRECONDITION}, codes
    time.sleep(0.5)
    for game in games:
        grpc_client.get_game(game.id).expect_ok()
    log = server.log_text()
    assert _errors_in(log) == [] and "Resetting connection" not in log, log


# -- Ctrl-C ------------------------------------------------------------------------------------------------------
FROM_A_TERMINAL = ["env", "--default-signal=INT"]
"""Runs a command as a terminal starts it, with Ctrl-C at its default. A test run in the background (``make test
&``, CI's runner) hands its children SIGINT ignored, as shells do for background jobs; the command would then
rightly not see a Ctrl-C sent before it takes SIGINT over itself. (coreutils' ``env`` execs at once: a Python
trampoline here had a start of its own, in which a Ctrl-C printed its own traceback.)"""


def _server_env(database_url: str) -> tuple[dict[str, str], int, int]:
    """The environment of a ``golf serve`` on free ports of 127.0.0.1, and its HTTP and gRPC ports."""
    http_port, grpc_port = free_ports(2)
    env = {
        **os.environ,
        "GOLF_DATABASE_URL": database_url,
        "GOLF_HOST": "127.0.0.1",
        "GOLF_HTTP_PORT": str(http_port),
        "GOLF_GRPC_PORT": str(grpc_port),
        "GOLF_LOG_LEVEL": "info",  # where it got to, should a test fail
        "GOLF_POOL_SIZE": "0",
        "GOLF_TOKEN_KEY": TEST_TOKEN_KEY,
        **UNLIMITED,
    }
    return env, http_port, grpc_port


def _serve(database_url: str, log_path: Path) -> tuple[subprocess.Popen[bytes], int, int]:
    """``golf serve`` in a session of its own (its process group is the test's to signal, like a terminal's)."""
    env, http_port, grpc_port = _server_env(database_url)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [*FROM_A_TERMINAL, GOLF, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    return proc, http_port, grpc_port


def _wait_serving(proc: subprocess.Popen[bytes], grpc_port: int, log_path: Path, http_port: int = 0) -> None:
    """Until gRPC health says SERVING and, given its port, REST answers (it starts a moment after gRPC)."""
    deadline = time.monotonic() + 60
    while health_status(f"127.0.0.1:{grpc_port}") != 1 or (http_port and not _rest_answers(http_port)):  # SERVING
        assert proc.poll() is None, log_path.read_text()
        assert time.monotonic() < deadline, log_path.read_text()
        time.sleep(0.05)


def _rest_answers(http_port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{http_port}/healthz", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def _exit_code(proc: subprocess.Popen[bytes], log_path: Path) -> int:
    try:
        return proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGUSR1)  # every thread's stack into the log (faulthandler), to see why
        time.sleep(1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise AssertionError(f"did not stop after SIGINT:\n{log_path.read_text()}") from None


def _group_gone(pgid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_ctrl_c_stops_the_server_and_its_solver_processes_quietly(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    migrate(url)
    log_path = tmp_path / "serve.log"
    proc, http_port, grpc_port = _serve(url, log_path)
    try:
        _wait_serving(proc, grpc_port, log_path, http_port)
        client = Rest(f"http://127.0.0.1:{http_port}")
        game = client.create_game(pb.CreateGameRequest(preset="standard", winnable_only=False)).expect_ok().game
        client.hint(pb.HintRequest(game_id=game.id, idempotency_key="spawn")).expect_ok()  # a solver process runs
        client.close()
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C in the terminal of `make run`: the whole process group
        code = _exit_code(proc, log_path)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log = log_path.read_text()
    assert code == 0, log
    assert _errors_in(log) == [], log
    assert _group_gone(proc.pid), "a process of the server outlived it"


def test_ctrl_c_to_the_server_alone_stops_it_gracefully(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    migrate(url)
    log_path = tmp_path / "serve.log"
    proc, _http_port, grpc_port = _serve(url, log_path)
    try:
        _wait_serving(proc, grpc_port, log_path)
        os.kill(proc.pid, signal.SIGINT)
        code = _exit_code(proc, log_path)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log = log_path.read_text()
    assert code == 0 and _errors_in(log) == [], log


@pytest.mark.parametrize("delay", [0.3, 0.8, 1.5])
def test_ctrl_c_while_the_server_starts(tmp_path: Path, delay: float) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    migrate(url)
    log_path = tmp_path / "serve.log"
    proc, _http_port, _grpc_port = _serve(url, log_path)
    try:
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGINT)
        code = _exit_code(proc, log_path)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    log = log_path.read_text()
    assert code in QUIET_EXITS and _errors_in(log) == [], (code, log)
    assert _group_gone(proc.pid)


@pytest.mark.parametrize("delay", [0.2, 0.45, 0.7])
def test_ctrl_c_while_migrating(tmp_path: Path, delay: float) -> None:
    env = {**os.environ, "GOLF_DATABASE_URL": f"sqlite:///{tmp_path / 'golf.db'}"}
    proc = subprocess.Popen(
        [*FROM_A_TERMINAL, GOLF, "migrate"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=60)
    text = out.decode(errors="replace")
    assert proc.returncode in QUIET_EXITS, (proc.returncode, text)
    assert "Traceback" not in text and "KeyboardInterrupt" not in text, text


_EARLY_CTRL_C = """
import asyncio, os, signal, sys
import golf.bootstrap as bootstrap
real = bootstrap.serve

async def serve_after_a_ctrl_c(settings):
    os.kill(os.getpid(), signal.SIGINT)  # before serve has taken SIGINT over
    await asyncio.sleep(0.2)
    await real(settings)

bootstrap.serve = serve_after_a_ctrl_c
from golf.cli import main
sys.exit(main(["serve"]))
"""


def test_a_ctrl_c_before_the_server_takes_sigint_over_stops_it_gracefully(tmp_path: Path) -> None:
    """asyncio's runner would turn that Ctrl-C into a cancellation of the starting server (a library on the way
    could swallow it and the server would serve on); it is noted instead, and the server stops once it is up."""
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    migrate(url)
    env, _http_port, _grpc_port = _server_env(url)
    done = subprocess.run(
        [*FROM_A_TERMINAL, sys.executable, "-c", _EARLY_CTRL_C], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "shutting down" in done.stderr and "stopped" in done.stderr, done.stderr
    assert _errors_in(done.stderr) == [], done.stderr


_CTRL_C_WRAPPED_WHILE_IMPORTING = """
import os, signal, sys
import golf.cli as cli
real = cli.build_parser

def build_parser_as_pydantic_did():
    try:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while a library builds something at import time
    except KeyboardInterrupt as interrupt:
        raise RuntimeError("Error building validator: KeyboardInterrupt") from None  # what pydantic-core did
    return real()

cli.build_parser = build_parser_as_pydantic_did
sys.exit(cli.main(sys.argv[1:]))
"""


@pytest.mark.parametrize("command", ["serve", "migrate"])
def test_a_ctrl_c_while_importing_is_not_turned_into_a_crash_by_a_library(tmp_path: Path, command: str) -> None:
    """CI once saw pydantic-core report a Ctrl-C that came while it built a schema at import time as a
    ``SchemaError``: ``golf serve`` ended with a traceback and exit code 1. A Ctrl-C is noted until the command is
    ready, so a library never sees it: the server starts and stops gracefully; ``golf migrate`` ends quietly."""
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    if command == "serve":
        migrate(url)
    env, _http_port, _grpc_port = _server_env(url)
    done = subprocess.run(
        [*FROM_A_TERMINAL, sys.executable, "-c", _CTRL_C_WRAPPED_WHILE_IMPORTING, command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    output = done.stdout + done.stderr
    assert done.returncode in QUIET_EXITS, (done.returncode, output)
    assert _errors_in(output) == [] and "RuntimeError" not in output, output
    if command == "serve":
        assert done.returncode == 0 and "stopped" in done.stderr, output


_CTRL_C_IN_A_GC_CALLBACK = """
import argparse, gc, os, signal, sys, time, weakref
import golf.cli as cli

class Thing:
    pass

def run(_args):
    thing = Thing()
    weakref.finalize(thing, lambda: os.kill(os.getpid(), signal.SIGINT))  # the Ctrl-C comes while it is collected
    del thing
    gc.collect()
    time.sleep(0.5)
    print("ran on after the Ctrl-C")
    return 0

def build_parser():
    parser = argparse.ArgumentParser(prog="golf")
    parser.set_defaults(func=run)
    return parser

cli.build_parser = build_parser
sys.exit(cli.main([]))
"""


def test_a_ctrl_c_during_a_gc_callback_still_ends_the_command() -> None:
    """CI once saw ``golf migrate`` take a Ctrl-C inside a garbage collector's callback: raised there as a
    KeyboardInterrupt, Python printed it as "Exception ignored" with a traceback and the command ran on. Every
    command but ``serve`` now ends at once on Ctrl-C, exit code 130."""
    done = subprocess.run(
        [*FROM_A_TERMINAL, sys.executable, "-c", _CTRL_C_IN_A_GC_CALLBACK], capture_output=True, text=True, timeout=60
    )
    output = done.stdout + done.stderr
    assert done.returncode == 130, (done.returncode, output)
    assert "ran on" not in output and _errors_in(output) == [] and "Exception ignored" not in output, output


_CTRL_C_WHILE_IMPORTING = """
import os, signal, sys

TARGET = sys.argv[1]

class CtrlCOnImport:
    '''Sends the Ctrl-C the moment the command starts importing the module named in argv[1].'''

    def find_spec(self, name, path=None, target=None):
        if name == TARGET:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, CtrlCOnImport())
sys.argv = ["golf", *sys.argv[2:]]
# What the console script does: import its entry point's module and call its function.
from importlib.metadata import entry_points
(script,) = entry_points(group="console_scripts", name="golf")
module, _, function = script.value.partition(":")
sys.exit(getattr(__import__(module, fromlist=[function]), function)())
"""


@pytest.mark.parametrize("module", ["golf.interrupts", "golf.cli", "argparse", "golf.commands.serve"])
@pytest.mark.parametrize("command", ["migrate", "serve"])
def test_a_ctrl_c_at_each_import_of_the_start_is_quiet(tmp_path: Path, command: str, module: str) -> None:
    """A Ctrl-C that lands while ``golf`` imports what it starts with, not after a delay the machine's speed
    decides: the ``golf`` command (``golf.command``) takes SIGINT over before it imports anything else. Before,
    ``golf.cli`` imported ``argparse`` first, and a Ctrl-C then was a KeyboardInterrupt traceback (CI, on a loaded
    machine). ``migrate`` ends at once (130); ``serve`` notes it and stops gracefully once up (0), or ends as
    interrupted if the Ctrl-C came while its first import ran."""
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    if command == "serve":
        migrate(url)
    env, _http_port, _grpc_port = _server_env(url)
    done = subprocess.run(
        [*FROM_A_TERMINAL, sys.executable, "-c", _CTRL_C_WHILE_IMPORTING, module, command],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    output = done.stdout + done.stderr
    assert done.returncode in QUIET_EXITS, (done.returncode, output)
    assert _errors_in(output) == [], output
    if command == "migrate":
        assert done.returncode == 130, (done.returncode, output)
        assert "Running upgrade" not in output, output  # it did not go on to migrate
