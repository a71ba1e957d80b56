"""Helpers of the end-to-end tier: server processes, one client per transport with the same interface, and the
client-side checks (scrubbing for parity, the golf-shuffle-v1 deal recomputed from a revealed seed)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
from google.protobuf import json_format
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from golf.adapters.db.migrate import upgrade
from golf.api.contract import http_route
from golf.v1 import (
    errors_pb2,
    player_service_pb2,
    player_service_pb2_grpc,
    solitaire_pb2,
    solitaire_service_pb2,
    solitaire_service_pb2_grpc,
)
from tests.shuffle_spec import golf_shuffle_v1

pb = solitaire_service_pb2
R = errors_pb2.ErrorReason
GOLF = str(Path(sys.executable).with_name("golf"))
ERROR_TRAILER = "golf-error-bin"
STATUS_TRAILER = "grpc-status-details-bin"
START_TIMEOUT = 60.0

# The one error table, as a client sees it: reason -> (gRPC code, HTTP status). Illegal moves are 409 except a
# move that is wrong from any position (no such column), which is 400.
ERROR_TABLE: dict[int, tuple[grpc.StatusCode, int]] = {
    R.ERROR_REASON_INVALID_ARGUMENT: (grpc.StatusCode.INVALID_ARGUMENT, 400),
    R.ERROR_REASON_NOT_FOUND: (grpc.StatusCode.NOT_FOUND, 404),
    R.ERROR_REASON_STALE_VERSION: (grpc.StatusCode.ABORTED, 409),
    R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED: (grpc.StatusCode.ALREADY_EXISTS, 409),
    R.ERROR_REASON_NO_SUCH_COLUMN: (grpc.StatusCode.INVALID_ARGUMENT, 400),
    R.ERROR_REASON_COLUMN_EMPTY: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_NOT_ADJACENT_RANK: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_NOTHING_ON_KING: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_CARD_MISMATCH: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_STOCK_EMPTY: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_DRAW_NOT_ALLOWED: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_GAME_OVER: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_NOTHING_TO_UNDO: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_UNDO_NOT_ALLOWED: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_UNDO_LIMIT_REACHED: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_NOTHING_TO_PLAY: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_ROUND_OVER: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_DEAL_UNAVAILABLE: (grpc.StatusCode.FAILED_PRECONDITION, 422),
    R.ERROR_REASON_DEAL_IN_PLAY: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_UNAUTHENTICATED: (grpc.StatusCode.UNAUTHENTICATED, 401),
    R.ERROR_REASON_PERMISSION_DENIED: (grpc.StatusCode.PERMISSION_DENIED, 403),
    R.ERROR_REASON_RATE_LIMITED: (grpc.StatusCode.RESOURCE_EXHAUSTED, 429),
    R.ERROR_REASON_PAYLOAD_TOO_LARGE: (grpc.StatusCode.RESOURCE_EXHAUSTED, 413),
    R.ERROR_REASON_METHOD_NOT_ALLOWED: (grpc.StatusCode.UNIMPLEMENTED, 405),
    R.ERROR_REASON_UNAVAILABLE: (grpc.StatusCode.UNAVAILABLE, 503),
    # Live tables: seats and the match's state (409), and card Golf moves; a move that can never be right at the
    # table (a position outside the grid or named twice, no such seat, a reveal of the wrong count) is 400.
    **{
        reason: (grpc.StatusCode.FAILED_PRECONDITION, 409)
        for reason in range(R.ERROR_REASON_TABLE_ALREADY_STARTED, R.ERROR_REASON_BAD_TARGET + 1)
    },
    R.ERROR_REASON_NO_SUCH_SEAT: (grpc.StatusCode.INVALID_ARGUMENT, 400),
    R.ERROR_REASON_WRONG_REVEAL_COUNT: (grpc.StatusCode.INVALID_ARGUMENT, 400),
    R.ERROR_REASON_DUPLICATE_POSITION: (grpc.StatusCode.INVALID_ARGUMENT, 400),
    R.ERROR_REASON_NO_SUCH_POSITION: (grpc.StatusCode.INVALID_ARGUMENT, 400),
    R.ERROR_REASON_TOO_MANY_WEBHOOKS: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_NOT_FINISHED: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_MALFORMED_MOVE: (grpc.StatusCode.INVALID_ARGUMENT, 400),
    R.ERROR_REASON_SHIELDED: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_POWER_USED: (grpc.StatusCode.FAILED_PRECONDITION, 409),
    R.ERROR_REASON_EARLY_OUT_NOT_ALLOWED: (grpc.StatusCode.FAILED_PRECONDITION, 409),
}
TEST_TOKEN_KEY = "e2e-token-key-" + "0123456789abcdef" * 3
UNLIMITED = {
    f"GOLF_RATE_LIMIT_{name}": ""
    for name in (
        "PLAYER",
        "ADDRESS",
        "SOLVER",
        "CREATE",
        "SIGN_IN",
        "SIGN_UP_NETWORK",
        "SIGN_UP_SERVICE",
        "JOIN_CODE_PLAYER",
        "JOIN_CODE_ADDRESS",
    )
}
"""Servers of the e2e tier run without rate limits unless a test sets them: the tests call faster than players."""

# -- server processes --------------------------------------------------------------------------------------------
PORT_ATTEMPTS = 3
"""Starts of a server tried on new ports when a chosen one was taken before the server bound it."""


def free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports on 127.0.0.1 (all held open while choosing so they differ)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def metric_sum(server: Server, name: str, **labels: str) -> float:
    """The sum of the server's ``/metrics`` samples named ``name`` whose labels include ``labels``."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"{server.http_url}/metrics", timeout=10).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    )


def migrate(database_url: str) -> None:
    """What ``golf migrate`` does, in this process: a ``golf migrate`` process costs a second and a half of imports
    per database (twice per test module); the command itself runs in ``tests/deploy/test_image.py`` (the chart's
    migration job) and ``tests/e2e/test_interrupts.py``."""
    upgrade(database_url)


@dataclass
class Server:
    """One ``golf serve`` process on free ports; stopped by its own PID with SIGTERM."""

    database_url: str
    log_dir: Path
    http_port: int = 0
    grpc_port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0
    extra_env: dict[str, str] = field(default_factory=dict)
    _log: Any = None

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.grpc_port}"

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"server-{self.starts}.log"

    def start(self) -> Server:
        """Start on new free ports and wait until gRPC health says SERVING and REST answers. A port taken between
        choosing it and binding it (another test process got it first) is met by starting again on new ports."""
        for attempt in range(1, PORT_ATTEMPTS + 1):
            try:
                return self._start()
            except AssertionError as failed:
                if self.proc is None or "address already in use" not in self.log_text() or attempt == PORT_ATTEMPTS:
                    raise
                self.proc = None
                self._log.close()
                print(f"golf serve: a chosen port was taken meanwhile; starting again ({failed.args[0][:60]!r})")
        raise AssertionError("unreachable")  # pragma: no cover

    def _start(self) -> Server:
        assert self.proc is None, "already running"
        self.starts += 1
        self.http_port, self.grpc_port = free_ports(2)
        env = {
            **os.environ,
            "GOLF_DATABASE_URL": self.database_url,
            "GOLF_HOST": "127.0.0.1",
            "GOLF_HTTP_PORT": str(self.http_port),
            "GOLF_GRPC_PORT": str(self.grpc_port),
            "GOLF_LOG_LEVEL": "warning",
            # No background refilling of the winnable-deal pool: it would compete for the CPU with the tests.
            "GOLF_POOL_SIZE": "0",
            # Stopped at once: taking up late gRPC calls for a second after SIGTERM is tested where it is meant.
            "GOLF_SHUTDOWN_DRAIN_SECONDS": "0",
            **UNLIMITED,
            # SQLite servers make and keep their own key beside the database; PostgreSQL ones must be given one.
            **({} if self.database_url.startswith("sqlite") else {"GOLF_TOKEN_KEY": TEST_TOKEN_KEY}),
            **self.extra_env,
        }
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen([GOLF, "serve"], env=env, stdout=self._log, stderr=subprocess.STDOUT)
        self._wait_ready()
        return self

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT
        grpc_ok = http_ok = False
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                raise AssertionError(f"golf serve exited with {code} while starting:\n{self.log_text()}")
            if not grpc_ok:
                grpc_ok = health_status(self.grpc_target) == health_pb2.HealthCheckResponse.SERVING
            if grpc_ok and not http_ok:
                try:
                    http_ok = httpx.get(f"{self.http_url}/openapi.json", timeout=2).status_code == 200
                except httpx.TransportError:
                    http_ok = False
            if grpc_ok and http_ok:
                return
            time.sleep(0.05)
        self.terminate()
        raise AssertionError(f"golf serve did not become ready in {START_TIMEOUT}s:\n{self.log_text()}")

    def signal_stop(self) -> None:
        """Send SIGTERM to our own process (by PID), without waiting."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGTERM)

    def wait(self) -> int:
        """Wait for the process to exit after SIGTERM; its exit code."""
        assert self.proc is not None
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            raise AssertionError(f"golf serve did not stop after SIGTERM:\n{self.log_text()}") from None
        self.proc = None
        self._log.close()
        return code

    def stop(self) -> int:
        self.signal_stop()
        return self.wait()

    def terminate(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.stop()
        elif self.proc is not None:
            self.proc = None
            self._log.close()


def health_status(target: str, service: str = "") -> int | None:
    """The health check's status for ``service``, or None when the port does not answer yet."""
    with grpc.insecure_channel(target) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
        except grpc.RpcError:
            return None
        status: int = reply.status
        return status


# -- clients -----------------------------------------------------------------------------------------------------
@dataclass
class Reply:
    """One answer from either transport: the response message or the ``Error``, the status, the raw payload."""

    transport: str
    message: Any = None
    error: errors_pb2.Error | None = None
    http_status: int = 200
    grpc_code: grpc.StatusCode = grpc.StatusCode.OK
    raw: str = ""
    """Everything the client received, as text: the REST body, or the gRPC message (as JSON) / status details
    and trailing metadata."""
    status: Any = None
    """gRPC: the ``google.rpc.Status`` of a refusal."""
    headers: dict[str, str] = field(default_factory=dict)
    """REST: the response headers."""

    def retry_delay(self) -> float | None:
        """Seconds to wait, as the transport's standard says: ``Retry-After`` or ``google.rpc.RetryInfo``."""
        if self.transport == "rest":
            value = self.headers.get("retry-after")
            return float(value) if value is not None else None
        for detail in self.status.details if self.status is not None else ():
            if detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
                info = error_details_pb2.RetryInfo()
                detail.Unpack(info)
                return float(info.retry_delay.ToTimedelta().total_seconds())
        return None

    @property
    def ok(self) -> bool:
        return self.error is None

    def expect_ok(self) -> Any:
        assert self.error is None, f"{self.transport}: expected success, got {self.error} ({self.raw[:500]})"
        return self.message

    def expect_error(self, reason: int) -> errors_pb2.Error:
        assert self.error is not None, f"{self.transport}: expected {R.Name(reason)}, got success"
        assert self.error.reason == reason, f"{self.transport}: expected {R.Name(reason)}, got {self.error}"
        code, status = ERROR_TABLE[reason]
        if self.transport == "rest":
            assert self.http_status == status, (reason, self.http_status, self.raw[:300])
        else:
            assert self.grpc_code == code, (reason, self.grpc_code)
        return self.error


def _json(message: Message) -> str:
    return json_format.MessageToJson(message, always_print_fields_with_no_presence=True, indent=None)


def _check_standard_details(status: Any, error: errors_pb2.Error) -> None:
    """The details any gRPC client library reads (and a REST body's ``details``): ErrorInfo (reason and domain)
    first, BadRequest for a field (each rule broken)."""
    infos = [d for d in status.details if d.Is(error_details_pb2.ErrorInfo.DESCRIPTOR)]
    assert len(infos) == 1 and status.details[0] == infos[0], status
    info = error_details_pb2.ErrorInfo()
    infos[0].Unpack(info)
    assert info.domain == "golf.v1" and "ERROR_REASON_" + info.reason == R.Name(error.reason), info
    assert info.metadata.get("field", "") == error.field
    bad = [d for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
    if error.field and status.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]:
        violations = error_details_pb2.BadRequest()
        bad[0].Unpack(violations)
        # One violation per rule broken, the first naming the error's field.
        assert violations.field_violations and violations.field_violations[0].field == error.field, violations


def _sign_in(client: Client, sign_in: bool, display_name: str, as_: Client | None) -> None:
    """Make ``client`` the player ``as_`` is, or a new guest (``sign_in``), or leave it without a token."""
    if as_ is not None:
        client.use_token(as_.token)
        client.player_id, client.refresh_token = as_.player_id, as_.refresh_token
    elif sign_in:
        guest = client.create_guest(player_service_pb2.CreateGuestRequest(display_name=display_name)).expect_ok()
        client.use_token(guest.credentials.access_token)
        client.player_id, client.refresh_token = guest.player.id, guest.credentials.refresh_token


class Rest:
    """The REST gateway through httpx; bodies are parsed strictly into the proto messages. It signs in as a new
    guest first (``sign_in=False`` to call without a token)."""

    name = "rest"

    def __init__(self, base_url: str, sign_in: bool = True, display_name: str = "", as_: Client | None = None) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30)
        self.player_id = self.refresh_token = self.token = ""
        _sign_in(self, sign_in, display_name, as_)

    def use_token(self, token: str | None) -> None:
        """Send ``token`` as the bearer token from now on (None: no authorization header)."""
        self.token = token or ""
        if token is None:
            self.http.headers.pop("authorization", None)
        else:
            self.http.headers["authorization"] = f"Bearer {token}"

    def close(self) -> None:
        self.http.close()

    def request(self, method: str, path: str, response: type[Message], **kwargs: Any) -> Reply:
        resp = self.http.request(method, path, **kwargs)
        return self.reply(resp, response)

    def reply(self, resp: httpx.Response, response: type[Message]) -> Reply:
        text = resp.text
        assert resp.headers.get("content-type", "").startswith("application/json"), (resp.status_code, text[:300])
        if resp.status_code == 200:
            message = response()
            json_format.Parse(text, message)  # strict: an unknown field in a reply fails here
            return Reply("rest", message=message, raw=text)
        assert resp.status_code != 500, f"500 from {resp.request.method} {resp.request.url}: {text}"
        err = errors_pb2.Error()
        json_format.Parse(text, err)
        # The standard details, as a gRPC client finds them in its google.rpc.Status.
        assert err.status in grpc.StatusCode.__members__, (err.status, text[:300])
        _check_standard_details(status_pb2.Status(code=grpc.StatusCode[err.status].value[0], details=err.details), err)
        return Reply("rest", error=err, http_status=resp.status_code, raw=text, headers=dict(resp.headers))

    def post(self, path: str, body: Message | dict[str, Any], response: type[Message]) -> Reply:
        content = _json(body) if isinstance(body, Message) else json.dumps(body)
        return self.request("POST", path, response, content=content, headers={"content-type": JSON_TYPE})

    # the RPCs, with the same signatures as Grpc's
    def create_deal(self, req: pb.CreateDealRequest) -> Reply:
        return self.post("/v1/deals", req, pb.CreateDealResponse)

    def get_deal(self, deal_id: str) -> Reply:
        return self.request("GET", f"/v1/deals/{deal_id}", pb.GetDealResponse)

    def create_game(self, req: pb.CreateGameRequest) -> Reply:
        return self.post("/v1/games", req, pb.CreateGameResponse)

    def get_game(self, game_id: str) -> Reply:
        return self.request("GET", f"/v1/games/{game_id}", pb.GetGameResponse)

    def list_games(self, page_size: int = 0, page_token: str = "") -> Reply:
        params: dict[str, Any] = {}
        if page_size:
            params["pageSize"] = page_size
        if page_token:
            params["pageToken"] = page_token
        return self.request("GET", "/v1/games", pb.ListGamesResponse, params=params)

    def play_move(self, req: pb.PlayMoveRequest) -> Reply:
        body = pb.PlayMoveRequest()
        body.CopyFrom(req)
        body.ClearField("game_id")  # it travels in the path
        return self.post(f"/v1/games/{req.game_id}/moves", body, pb.PlayMoveResponse)

    def list_moves(self, game_id: str) -> Reply:
        return self.request("GET", f"/v1/games/{game_id}/moves", pb.ListMovesResponse)

    def _action(self, verb: str, req: Any, response: type[Message]) -> Reply:
        """``POST /v1/games/{gameId}:verb`` with the request (less the game id, which is in the path) as body."""
        body = type(req)()
        body.CopyFrom(req)
        body.ClearField("game_id")
        return self.post(f"/v1/games/{req.game_id}:{verb}", body, response)

    def hint(self, req: pb.HintRequest) -> Reply:
        return self._action("hint", req, pb.HintResponse)

    def undo(self, req: pb.UndoRequest) -> Reply:
        return self._action("undo", req, pb.UndoResponse)

    def auto_play(self, req: pb.AutoPlayRequest) -> Reply:
        return self._action("autoPlay", req, pb.AutoPlayResponse)

    def create_round(self, req: pb.CreateRoundRequest) -> Reply:
        return self.post("/v1/rounds", req, pb.CreateRoundResponse)

    def get_round(self, round_id: str) -> Reply:
        return self.request("GET", f"/v1/rounds/{round_id}", pb.GetRoundResponse)

    def start_next_hole(self, round_id: str) -> Reply:
        return self.post(f"/v1/rounds/{round_id}:nextHole", {}, pb.StartNextHoleResponse)

    def get_daily_deal(self, date: str, preset: str = "") -> Reply:
        params = {"preset": preset} if preset else {}
        return self.request("GET", f"/v1/dailyDeals/{date}", pb.GetDailyDealResponse, params=params)

    def list_rounds(self, req: pb.ListRoundsRequest) -> Reply:
        params = {k: v for k, v in json_format.MessageToDict(req).items() if v not in ("", 0)}
        return self.request("GET", "/v1/rounds", pb.ListRoundsResponse, params=params)

    def list_games_where(self, req: pb.ListGamesRequest) -> Reply:
        params = json_format.MessageToDict(req)
        return self.request("GET", "/v1/games", pb.ListGamesResponse, params=params)

    # PlayerService
    def create_guest(self, req: player_service_pb2.CreateGuestRequest) -> Reply:
        return self.post("/v1/players:guest", req, player_service_pb2.CreateGuestResponse)

    def refresh_access(self, refresh_token: str) -> Reply:
        req = player_service_pb2.RefreshTokenRequest(refresh_token=refresh_token)
        return self.post("/v1/tokens:refresh", req, player_service_pb2.RefreshTokenResponse)

    def revoke(self, refresh_token: str) -> Reply:
        req = player_service_pb2.RevokeTokenRequest(refresh_token=refresh_token)
        return self.post("/v1/tokens:revoke", req, player_service_pb2.RevokeTokenResponse)

    def get_player(self, player_id: str) -> Reply:
        return self.request("GET", f"/v1/players/{player_id}", player_service_pb2.GetPlayerResponse)


JSON_TYPE = "application/json"


class Grpc:
    """The gRPC services through a real channel and the generated stubs. It signs in as a new guest first
    (``sign_in=False`` to call without a token)."""

    name = "grpc"

    def __init__(self, target: str, sign_in: bool = True, display_name: str = "", as_: Client | None = None) -> None:
        self.channel = grpc.insecure_channel(target)
        self.stub = solitaire_service_pb2_grpc.SolitaireServiceStub(self.channel)
        self.players = player_service_pb2_grpc.PlayerServiceStub(self.channel)
        self.metadata: tuple[tuple[str, str], ...] = ()
        self.player_id = self.refresh_token = self.token = ""
        _sign_in(self, sign_in, display_name, as_)

    def use_token(self, token: str | None) -> None:
        """Send ``token`` as the bearer token from now on (None: no authorization metadata)."""
        self.token = token or ""
        self.metadata = () if token is None else (("authorization", f"Bearer {token}"),)

    def close(self) -> None:
        self.channel.close()

    def call(self, method: str, req: Message, stub: Any = None) -> Reply:
        try:
            message = getattr(stub or self.stub, method)(req, timeout=30, metadata=self.metadata)
        except grpc.RpcError as err:
            return self.error_reply(err)
        return Reply("grpc", message=message, raw=_json(message))

    @staticmethod
    def error_reply(err: grpc.RpcError) -> Reply:
        code = err.code()  # type: ignore[attr-defined]
        details = err.details() or ""  # type: ignore[attr-defined]
        trailers = dict(err.trailing_metadata() or ())  # type: ignore[attr-defined]
        assert ERROR_TRAILER in trailers, f"gRPC {code} without {ERROR_TRAILER}: {details}"
        assert code != grpc.StatusCode.INTERNAL, f"INTERNAL: {details}"
        error = errors_pb2.Error.FromString(trailers[ERROR_TRAILER])
        # gRPC's rich error model: the standard google.rpc.Status carries the same Error (and RetryInfo).
        assert STATUS_TRAILER in trailers, f"gRPC {code} without {STATUS_TRAILER}"
        status = status_pb2.Status.FromString(trailers[STATUS_TRAILER])
        assert status.code == code.value[0] and status.message == details, (status, code, details)
        packed = [d for d in status.details if d.Is(errors_pb2.Error.DESCRIPTOR)]
        assert len(packed) == 1 and packed[0].value == trailers[ERROR_TRAILER]
        _check_standard_details(status, errors_pb2.Error.FromString(trailers[ERROR_TRAILER]))
        assert error.status == code.name and not error.details, error
        # The Error as REST sends it: with the status's standard details (all but the Error itself), so replies of
        # the two transports compare whole.
        error.details.extend(d for d in status.details if not d.Is(errors_pb2.Error.DESCRIPTOR))
        shown = (ERROR_TRAILER, STATUS_TRAILER)
        raw = " ".join(
            [details, _json(error), _json(status), *(f"{k}={v!r}" for k, v in trailers.items() if k not in shown)]
        )
        return Reply("grpc", error=error, grpc_code=code, raw=raw, status=status)

    def create_deal(self, req: pb.CreateDealRequest) -> Reply:
        return self.call("CreateDeal", req)

    def get_deal(self, deal_id: str) -> Reply:
        return self.call("GetDeal", pb.GetDealRequest(deal_id=deal_id))

    def create_game(self, req: pb.CreateGameRequest) -> Reply:
        return self.call("CreateGame", req)

    def get_game(self, game_id: str) -> Reply:
        return self.call("GetGame", pb.GetGameRequest(game_id=game_id))

    def list_games(self, page_size: int = 0, page_token: str = "") -> Reply:
        return self.call("ListGames", pb.ListGamesRequest(page_size=page_size, page_token=page_token))

    def play_move(self, req: pb.PlayMoveRequest) -> Reply:
        return self.call("PlayMove", req)

    def list_moves(self, game_id: str) -> Reply:
        return self.call("ListMoves", pb.ListMovesRequest(game_id=game_id))

    def hint(self, req: pb.HintRequest) -> Reply:
        return self.call("Hint", req)

    def undo(self, req: pb.UndoRequest) -> Reply:
        return self.call("Undo", req)

    def auto_play(self, req: pb.AutoPlayRequest) -> Reply:
        return self.call("AutoPlay", req)

    def create_round(self, req: pb.CreateRoundRequest) -> Reply:
        return self.call("CreateRound", req)

    def get_round(self, round_id: str) -> Reply:
        return self.call("GetRound", pb.GetRoundRequest(round_id=round_id))

    def start_next_hole(self, round_id: str) -> Reply:
        return self.call("StartNextHole", pb.StartNextHoleRequest(round_id=round_id))

    def get_daily_deal(self, date: str, preset: str = "") -> Reply:
        return self.call("GetDailyDeal", pb.GetDailyDealRequest(date=date, preset=preset))

    def list_rounds(self, req: pb.ListRoundsRequest) -> Reply:
        return self.call("ListRounds", req)

    def list_games_where(self, req: pb.ListGamesRequest) -> Reply:
        return self.call("ListGames", req)

    # PlayerService
    def create_guest(self, req: player_service_pb2.CreateGuestRequest) -> Reply:
        return self.call("CreateGuest", req, self.players)

    def refresh_access(self, refresh_token: str) -> Reply:
        return self.call(
            "RefreshToken", player_service_pb2.RefreshTokenRequest(refresh_token=refresh_token), self.players
        )

    def revoke(self, refresh_token: str) -> Reply:
        return self.call(
            "RevokeToken", player_service_pb2.RevokeTokenRequest(refresh_token=refresh_token), self.players
        )

    def get_player(self, player_id: str) -> Reply:
        return self.call("GetPlayer", player_service_pb2.GetPlayerRequest(player_id=player_id), self.players)


Client = Rest | Grpc


class ServiceCalls:
    """The unary RPCs of one ``golf.v1`` service for ``client``'s player, over ``client``'s transport: gRPC through
    the service's stub, REST at the route of each method's ``google.api.http`` option (path variables from the
    request, the rest in the query of a GET or DELETE, else in the body)."""

    def __init__(self, client: Client, service: Any, module: Any, stub: Any) -> None:
        self.client = client
        self.player_id = client.player_id
        self._service = service
        self._module = module
        self._stub = stub(client.channel) if isinstance(client, Grpc) else None

    def call(self, method: str, req: Message) -> Reply:
        if isinstance(self.client, Grpc):
            return self.client.call(method, req, self._stub)
        described = self._service.methods_by_name[method]
        route = http_route(described)
        data = json_format.MessageToDict(req)
        path = route.path
        for name in route.path_fields:
            path = path.replace("{" + name + "}", str(data.pop(name, "")))
        response = getattr(self._module, described.output_type.name)
        if route.method in ("GET", "DELETE"):
            return self.client.request(route.method, path, response, params=data)
        return self.client.post(path, data, response)


def new_key() -> str:
    return uuid.uuid4().hex


def move_request(
    game: solitaire_pb2.Game, move: solitaire_pb2.Move, key: str | None = None, expected: int | None = None
) -> pb.PlayMoveRequest:
    req = pb.PlayMoveRequest(game_id=game.id, idempotency_key=key or new_key())
    req.move.CopyFrom(move)
    if expected is not None:
        req.expected_version = expected
    return req


def choose_move(game: solitaire_pb2.Game) -> solitaire_pb2.Move:
    """Deterministic: the first column play on offer, else the draw."""
    assert game.legal_moves, "no legal moves"
    for move in game.legal_moves:
        if move.WhichOneof("kind") == "play_column":
            return move
    return game.legal_moves[0]


def play(column: int) -> solitaire_pb2.Move:
    return solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=column))


def draw() -> solitaire_pb2.Move:
    return solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock())


def fits(rules: solitaire_pb2.SolitaireRules, card_rank: int, top_rank: int) -> bool:
    """The rules' adjacency, recomputed on the client."""
    diff = card_rank - top_rank
    if abs(diff) == 1:
        return top_rank != 13 or rules.queens_on_kings or rules.wrap
    return rules.wrap and abs(diff) == 12


def unfit_column(game: solitaire_pb2.Game) -> int | None:
    """A column whose front card may not go on the pile now, if any."""
    for i, col in enumerate(game.columns):
        if col.cards and not fits(game.rules, col.cards[-1].rank, game.pile_top.rank):
            return i
    return None


# -- scrubbing for parity ----------------------------------------------------------------------------------------
_VOLATILE = {
    # post_mortem: the reply to a game's last move may come before or after the solver's verdict (GetGame waits).
    "golf.v1.Game": ("id", "deal_id", "create_time", "update_time", "elapsed", "post_mortem"),
    "golf.v1.Deal": ("id", "create_time"),
}


def scrub(message: Message) -> Message:
    """A copy without ids, times and elapsed (anywhere inside), for comparing two games of the same deal."""
    out = type(message)()
    out.CopyFrom(message)
    _scrub(out)
    return out


def _scrub(message: Message) -> None:
    for name in _VOLATILE.get(message.DESCRIPTOR.full_name, ()):
        message.ClearField(name)
    for fd, value in message.ListFields():
        if fd.message_type is None:
            continue
        if fd.is_repeated:
            for item in value:
                _scrub(item)
        else:
            _scrub(value)


# -- client-side verification of a revealed deal -----------------------------------------------------------------
RANKS = "A23456789TJQK"
SUITS = "CDHS"


def deal_from_seed(rules: solitaire_pb2.SolitaireRules, seed: str) -> tuple[list[list[str]], str, list[str]]:
    """Columns (back to front), start card and stock of a ``golf-shuffle-v1`` deal, as card codes."""
    deck = [r + s for _ in range(rules.decks) for s in SUITS for r in RANKS]
    cards = golf_shuffle_v1(deck, seed)
    n = rules.columns * rules.column_height
    columns = [cards[c : n : rules.columns] for c in range(rules.columns)]
    return columns, cards[n], cards[n + 1 :]


def canonical_rules(rules: solitaire_pb2.SolitaireRules) -> str:
    """The rules' canonical text as committed to: every option, sorted keys, compact JSON."""
    data = {
        "decks": rules.decks,
        "columns": rules.columns,
        "column_height": rules.column_height,
        "wrap": rules.wrap,
        "queens_on_kings": rules.queens_on_kings,
        "draw_only_when_stuck": rules.draw_only_when_stuck,
        "undo_policy": solitaire_pb2.UndoPolicy.Name(rules.undo_policy).removeprefix("UNDO_POLICY_").lower(),
        "undo_limit": rules.undo_limit,
    }
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def commitment(algorithm: str, seed: str, rules: solitaire_pb2.SolitaireRules) -> str:
    return hashlib.sha256(f"{algorithm}\n{seed}\n{canonical_rules(rules)}".encode()).hexdigest()


# -- client-side replay of a line of moves -----------------------------------------------------------------------
@dataclass
class Board:
    """A position recomputed on the client from a deal's public layout and moves that name their cards."""

    rules: solitaire_pb2.SolitaireRules
    columns: list[list[Any]]
    top: Any
    stock_left: int
    turned: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, deal: solitaire_pb2.Deal) -> Board:
        return cls(deal.rules, [list(col.cards) for col in deal.columns], deal.start_card, deal.stock_count)

    @classmethod
    def of_game(cls, game: solitaire_pb2.Game) -> Board:
        return cls(game.rules, [list(col.cards) for col in game.columns], game.pile_top, game.stock_count)

    def fitting_columns(self) -> list[int]:
        return [i for i, col in enumerate(self.columns) if col and fits(self.rules, col[-1].rank, self.top.rank)]

    def apply(self, move: solitaire_pb2.Move) -> None:
        """Apply ``move`` after checking it is legal by the rules, as the client understands them."""
        if move.WhichOneof("kind") == "play_column":
            col = self.columns[move.play_column.column]
            assert col, f"column {move.play_column.column} is empty"
            assert fits(self.rules, col[-1].rank, self.top.rank), f"{col[-1].code} does not fit on {self.top.code}"
            if move.play_column.HasField("card"):
                assert move.play_column.card.code == col[-1].code, (move, col[-1].code)
            self.top = col.pop()
            return
        assert move.WhichOneof("kind") == "draw_stock", move
        assert self.stock_left > 0, "draw from an empty stock"
        assert not (self.rules.draw_only_when_stuck and self.fitting_columns()), "draw while a card fits"
        assert move.draw_stock.HasField("card"), "a replayable line names the cards it turns"
        self.top = move.draw_stock.card
        self.stock_left -= 1
        self.turned.append(move.draw_stock.card.code)

    @property
    def cards_left(self) -> int:
        return sum(len(col) for col in self.columns)

    @property
    def score(self) -> int:
        """Golf's score: cards left in the columns, or minus the stock cards left once they are cleared."""
        return self.cards_left if self.cards_left else -self.stock_left

    def key(self) -> tuple[Any, ...]:
        return ([[c.code for c in col] for col in self.columns], self.top.code, self.stock_left)


def game_key(game: solitaire_pb2.Game) -> tuple[Any, ...]:
    """A game's position in the same form as ``Board.key``."""
    return Board.of_game(game).key()
