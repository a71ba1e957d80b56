"""The load generator of ``playmove.py``: PlayMove clients over REST or gRPC, run in a worker process.

Each client owns its games, so every move it sends should be accepted. A client creates a game (preset
``wrap``, long games), then plays one legal move after another from the last response (a column play if there
is one, else a draw), each with a fresh idempotency key and ``expectedVersion``; when the game ends it creates
another. A move counts only if the server answered OK and the answer proves it was validated and stored: the
version and ``movesPlayed`` went up by one, it is not a replay, and the move made is the one asked for.

Before the warm-up every client signs in as its own guest (``CreateGuest``, over the transport it measures) and
then sends its access token with every call: an ``authorization`` header (REST) or metadata (gRPC). A server
without sign-in (an older revision) answers 404 / UNIMPLEMENTED to it, and the clients go on without a token.

The clients are kept cheap because they share two cores with the server: REST goes through a minimal
keep-alive HTTP/1.1 client over asyncio streams (Content-Length framing, orjson), gRPC through grpc.aio stubs
spread over a few channels.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol

import orjson

PRESET = "wrap"
_PLAY_PATH = "/v1/games/{}/moves"
_GUEST_PATH = "/v1/players:guest"
AUTH_FAILED, AUTH_GUEST, AUTH_NONE = -1, 1, 2
"""Per worker in the shared ``auth`` array: sign-in failed, every client signed in as a guest, no sign-in."""


@dataclass(frozen=True)
class LoadConfig:
    transport: str  # "rest" or "grpc"
    host: str
    http_port: int
    grpc_port: int
    clients: int
    client_base: int  # number of this worker's first client, for idempotency keys
    grpc_channels: int = 4


@dataclass
class WorkerResult:
    """What one worker saw: per counted move its finish time and latency (seconds, ``time.monotonic``)."""

    finished: array[float] = field(default_factory=lambda: array("d"))
    latency: array[float] = field(default_factory=lambda: array("d"))
    games: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    fatal: str = ""


class Window(Protocol):
    """Shared with the parent: when the measured window starts and ends, and a move counter per worker."""

    def end(self) -> float: ...
    def count(self, n: int) -> None: ...


class Refused(Exception):
    """The server refused or failed a request; ``reason`` names it for the error tally."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class GameView:
    """The little a client needs from a game: id, version, whether it goes on, and the move to send next."""

    id: str
    version: int
    in_progress: bool
    next_move: Any  # transport-specific move, None when the game is over
    next_is_column: bool


# -- REST ------------------------------------------------------------------------------------------------------
class HttpConnection:
    """One keep-alive HTTP/1.1 connection: POST a JSON body, read the status and a Content-Length body."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self._head = f"Host: {host}:{port}\r\nContent-Type: application/json\r\nContent-Length: ".encode()

    def authorize(self, token: str) -> None:
        """Send ``token`` as the bearer token of every later request (it is part of the prebuilt head)."""
        self._head = (
            f"Host: {self.host}:{self.port}\r\nAuthorization: Bearer {token}\r\n"
            "Content-Type: application/json\r\nContent-Length: "
        ).encode()

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        if self.writer is None or self.reader is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.reader, self.writer
        writer.write(b"POST %s HTTP/1.1\r\n%s%d\r\n\r\n%s" % (path.encode(), self._head, len(body), body))
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            await self.close()
            raise Refused("connection closed") from None
        status = int(head[9:12])
        lower = head.lower()
        at = lower.find(b"\r\ncontent-length:")
        if at < 0:
            await self.close()
            raise Refused("response without content-length")
        length = int(lower[at + 17 : lower.index(b"\r\n", at + 2)])
        data = await reader.readexactly(length)
        if b"\r\nconnection: close" in lower:
            await self.close()
        return status, data

    async def close(self) -> None:
        writer, self.writer, self.reader = self.writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


def _rest_view(game: dict[str, Any]) -> GameView:
    legal = game["legalMoves"]
    move = next((m for m in legal if "playColumn" in m), legal[0] if legal else None)
    return GameView(
        game["id"],
        int(game["version"]),
        game["status"] == "GAME_STATUS_IN_PROGRESS",
        move,
        move is not None and "playColumn" in move,
    )


class RestApi:
    def __init__(self, cfg: LoadConfig) -> None:
        self.conn = HttpConnection(cfg.host, cfg.http_port)

    async def sign_in(self) -> bool:
        """Sign in as a new guest and keep its token; False when the server has no sign-in (HTTP 404)."""
        try:
            status, data = await self.conn.post(_GUEST_PATH, b"{}")
        finally:
            await self.conn.close()  # the warm-up opens the connection its moves use, as without sign-in
        if status == 404:
            return False
        if status != 200:
            try:
                error = orjson.loads(data)
                detail = f"{error.get('reason', '')}: {error.get('message', '')}"
            except (orjson.JSONDecodeError, AttributeError):
                detail = data[:200].decode(errors="replace")
            raise Refused(f"CreateGuest HTTP {status} {detail}")
        self.conn.authorize(orjson.loads(data)["credentials"]["accessToken"])
        return True

    async def new_game(self) -> GameView:
        status, data = await self.conn.post("/v1/games", b'{"preset":"%s","winnableOnly":false}' % PRESET.encode())
        if status != 200:
            raise Refused(f"CreateGame HTTP {status}")
        return _rest_view(orjson.loads(data)["game"])

    async def play(self, game: GameView, key: str) -> GameView:
        body = orjson.dumps({"move": game.next_move, "idempotencyKey": key, "expectedVersion": game.version})
        status, data = await self.conn.post(_PLAY_PATH.format(game.id), body)
        if status != 200:
            try:
                reason = orjson.loads(data).get("reason", "")
            except orjson.JSONDecodeError:
                reason = ""
            raise Refused(f"HTTP {status} {reason}".strip())
        reply = orjson.loads(data)
        after = reply["game"]
        if (
            reply.get("replayed")
            or after["id"] != game.id
            or int(after["version"]) != game.version + 1
            or after.get("movesPlayed") != game.version + 1
            or ("playColumn" in reply["move"]) != game.next_is_column
        ):
            raise Refused("unvalidated reply")
        return _rest_view(after)

    async def close(self) -> None:
        await self.conn.close()


# -- gRPC ------------------------------------------------------------------------------------------------------
class GrpcApi:
    """PlayMove and CreateGame through grpc.aio stubs; the channels are shared by the clients of a worker."""

    def __init__(self, stub: Any, players: Any) -> None:
        from golf.v1 import solitaire_pb2, solitaire_service_pb2

        self.stub = stub
        self.players = players
        self.pb = solitaire_service_pb2
        self.in_progress = solitaire_pb2.GAME_STATUS_IN_PROGRESS
        self.metadata: tuple[tuple[str, str], ...] | None = None

    async def sign_in(self) -> bool:
        """Sign in as a new guest and keep its token; False when the server has no sign-in (UNIMPLEMENTED)."""
        import grpc

        from golf.v1 import player_service_pb2

        try:
            reply = await self.players.CreateGuest(player_service_pb2.CreateGuestRequest())
        except grpc.aio.AioRpcError as err:
            if err.code() == grpc.StatusCode.UNIMPLEMENTED:
                return False
            raise Refused(f"CreateGuest gRPC {err.code().name} {err.details()}") from None
        self.metadata = (("authorization", f"Bearer {reply.credentials.access_token}"),)
        return True

    def _view(self, game: Any) -> GameView:
        legal = game.legal_moves
        move = next((m for m in legal if m.HasField("play_column")), legal[0] if legal else None)
        return GameView(
            game.id,
            game.version,
            game.status == self.in_progress,
            move,
            move is not None and move.HasField("play_column"),
        )

    async def _call(self, method: Any, request: Any) -> Any:
        import grpc

        try:
            return await method(request, metadata=self.metadata)
        except grpc.aio.AioRpcError as err:
            raise Refused(f"gRPC {err.code().name}") from None

    async def new_game(self) -> GameView:
        reply = await self._call(self.stub.CreateGame, self.pb.CreateGameRequest(preset=PRESET, winnable_only=False))
        return self._view(reply.game)

    async def play(self, game: GameView, key: str) -> GameView:
        request = self.pb.PlayMoveRequest(
            game_id=game.id, move=game.next_move, idempotency_key=key, expected_version=game.version
        )
        reply = await self._call(self.stub.PlayMove, request)
        after = reply.game
        if (
            reply.replayed
            or after.id != game.id
            or after.version != game.version + 1
            or after.moves_played != game.version + 1
            or reply.move.HasField("play_column") != game.next_is_column
        ):
            raise Refused("unvalidated reply")
        return self._view(after)

    async def close(self) -> None:
        return None


# -- the clients -----------------------------------------------------------------------------------------------
async def _client(api: RestApi | GrpcApi, number: int, start: float, window: Window, out: WorkerResult) -> None:
    prefix = f"b{os.getpid():x}{time.time_ns() & 0xFFFFFF:x}c{number}-"
    sent = 0
    game: GameView | None = None
    finished, latency = out.finished, out.latency
    clock = time.monotonic
    while clock() < window.end():
        try:
            if game is None or not game.in_progress:
                game = await api.new_game()
                out.games += 1
                continue
            sent += 1
            began = clock()
            game = await api.play(game, f"{prefix}{sent}")
            done = clock()
            if done >= start:
                finished.append(done)
                latency.append(done - began)
                window.count(1)
        except Refused as err:
            out.errors[err.reason] += 1
            game = None  # start afresh on a new game
            await asyncio.sleep(0.01)


@dataclass
class Clients:
    """A worker's clients, signed in (or not, when the server has no sign-in), and the gRPC channels they share."""

    cfg: LoadConfig
    apis: list[RestApi | GrpcApi]
    channels: list[Any]
    signed_in: bool = False

    async def close(self) -> None:
        for api in self.apis:
            await api.close()
        for ch in self.channels:
            await ch.close()


async def open_clients(cfg: LoadConfig) -> Clients:
    """Make ``cfg.clients`` clients and sign each in as its own guest: the first alone (a server without sign-in
    answers it 404 / UNIMPLEMENTED, and then none signs in), the others at once."""
    if cfg.transport == "rest":
        clients = Clients(cfg, [RestApi(cfg) for _ in range(cfg.clients)], [])
    else:
        import grpc

        from golf.v1 import player_service_pb2_grpc, solitaire_service_pb2_grpc

        target = f"{cfg.host}:{cfg.grpc_port}"
        channels = [grpc.aio.insecure_channel(target) for _ in range(max(1, min(cfg.grpc_channels, cfg.clients)))]
        stubs = [solitaire_service_pb2_grpc.SolitaireServiceStub(ch) for ch in channels]
        players = [player_service_pb2_grpc.PlayerServiceStub(ch) for ch in channels]
        apis: list[RestApi | GrpcApi] = [
            GrpcApi(stubs[i % len(stubs)], players[i % len(stubs)]) for i in range(cfg.clients)
        ]
        clients = Clients(cfg, apis, channels)
    try:
        clients.signed_in = await clients.apis[0].sign_in()
        if clients.signed_in:
            await asyncio.gather(*(api.sign_in() for api in clients.apis[1:]))
    except BaseException:
        await clients.close()
        raise
    return clients


async def run_clients(clients: Clients, start: float, window: Window) -> WorkerResult:
    """Run the clients until the window ends; moves finishing before ``start`` are warm-up."""
    out = WorkerResult()
    base = clients.cfg.client_base
    try:
        await asyncio.gather(*(_client(api, base + i, start, window, out) for i, api in enumerate(clients.apis)))
    finally:
        await clients.close()
    return out


# -- the worker process ----------------------------------------------------------------------------------------
class SharedWindow:
    """The window in shared memory: ``times`` holds (start, end) in ``time.monotonic`` seconds."""

    def __init__(self, times: Any, counts: Any, index: int) -> None:
        self.times, self.counts, self.index = times, counts, index

    def end(self) -> float:
        return float(self.times[1])

    def count(self, n: int) -> None:
        self.counts[self.index] += n


def worker_main(
    cfg: LoadConfig, index: int, times: Any, counts: Any, auth: Any, ready: Any, go: Any, results: Any
) -> None:
    """Entry point of a worker process: sign the clients in, say so in ``auth[index]``, wait for the window to
    be set, run the clients, send the result."""
    loop_factory: Any = None
    if cfg.transport == "rest":
        with contextlib.suppress(ImportError):
            import uvloop

            loop_factory = uvloop.new_event_loop
    if cfg.transport == "grpc":
        import grpc  # noqa: F401  (import before timing starts)

        from golf.v1 import solitaire_service_pb2_grpc  # noqa: F401
    window = SharedWindow(times, counts, index)
    with asyncio.Runner(loop_factory=loop_factory) as runner:
        clients: Clients | None = None
        try:
            clients = runner.run(open_clients(cfg))  # signing in is done before the warm-up
            auth[index] = AUTH_GUEST if clients.signed_in else AUTH_NONE
            fatal = ""
        except Exception as err:  # reported to the parent, which prints it
            auth[index] = AUTH_FAILED
            fatal = f"sign-in: {type(err).__name__}: {err}"
        ready.set()
        go.wait()
        out = WorkerResult(fatal=fatal)
        if clients is not None:
            try:
                out = runner.run(run_clients(clients, float(times[0]), window))
            except Exception as err:  # reported to the parent, which prints it
                out = WorkerResult(fatal=f"{type(err).__name__}: {err}")
    results.put((index, out))
