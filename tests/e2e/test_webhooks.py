"""Webhooks over both transports and both databases, on a real server whose deliveries go to a receiver on
127.0.0.1 (the server allows local URLs, as a development server may): who may register, see and delete which
webhook; URLs refused with their field; TURN events signed with the webhook's secret, retried after a failure with
the same delivery id; a portal back end's webhook hearing of its players' turns and match ends; and moves that do
not wait for a receiver that does not answer."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from golf.v1 import card_golf_pb2 as cg
from golf.v1 import webhook_service_pb2 as wpb
from golf.v1 import webhook_service_pb2_grpc
from tests.e2e.identity import new_client
from tests.e2e.support import Client, R, Reply, Server, ServiceCalls, migrate
from tests.e2e.tables import Tables

SERVICE = wpb.DESCRIPTOR.services_by_name["WebhookService"]
TURN, ENDED = wpb.WEBHOOK_EVENT_TYPE_TURN, wpb.WEBHOOK_EVENT_TYPE_MATCH_ENDED
PORTAL, AUDIENCE = "https://portal.example", "golf-for-portals"
PLAYING, OVER = cg.TABLE_STATUS_PLAYING, cg.TABLE_STATUS_OVER


# -- a receiver on 127.0.0.1 -------------------------------------------------------------------------------------
@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.body)
        return data


@dataclass
class Receiver:
    """Records every POST; answers each path with the next status queued for it (200 when none is), after the
    path's delay."""

    port: int = 0
    requests: list[Received] = field(default_factory=list)
    statuses: dict[str, deque[int]] = field(default_factory=dict)
    delays: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def at(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.requests if r.path == path]

    def wait_for(self, path: str, check: Any, timeout: float = 20.0) -> list[Received]:
        """The requests to ``path`` once ``check(requests)`` holds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.at(path)
            if check(got):
                return got
            time.sleep(0.05)
        raise AssertionError(f"{path}: {[(r.headers.get('x-golf-event'), r.event) for r in self.at(path)]}")


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            with state.lock:
                state.requests.append(Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                queued = state.statuses.get(self.path)
                status = queued.popleft() if queued else 200
            time.sleep(state.delays.get(self.path, 0.0))
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()


# -- the server --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def server(
    module_database_url: str, tmp_path_factory: pytest.TempPathFactory, rsa_key: rsa.RSAPrivateKey
) -> Iterator[Server]:
    """A server that trusts one portal, lets webhooks call 127.0.0.1, and retries quickly."""
    pem = rsa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    issuers = [{"issuer": PORTAL, "audience": AUDIENCE, "public_key": pem.decode(), "algorithms": ["RS256"]}]
    env = {
        "GOLF_TRUSTED_ISSUERS": json.dumps(issuers),
        "GOLF_WEBHOOK_ALLOW_LOCAL_URLS": "true",
        "GOLF_WEBHOOK_BACKOFF_SECONDS": "0.2",
        "GOLF_WEBHOOK_TIMEOUT_SECONDS": "1",
        "GOLF_WEBHOOK_POLL_SECONDS": "0.1",
    }
    migrate(module_database_url)
    srv = Server(module_database_url, Path(tmp_path_factory.mktemp("e2e-webhooks")), extra_env=env).start()
    try:
        yield srv
    finally:
        code = srv.stop()
        assert code == 0, f"golf serve exited with {code} after SIGTERM:\n{srv.log_text()}"


def portal_token(key: rsa.RSAPrivateKey, sub: str, scope: str = "") -> str:
    now = int(time.time())
    body = {"iss": PORTAL, "aud": AUDIENCE, "sub": sub, "iat": now, "exp": now + 600, "name": sub}
    if scope:
        body["scope"] = scope
    return jwt.encode(body, key, algorithm="RS256")


class Webhooks(ServiceCalls):
    """The RPCs of WebhookService for ``client``'s player, over ``client``'s transport."""

    def __init__(self, client: Client) -> None:
        super().__init__(client, SERVICE, wpb, webhook_service_pb2_grpc.WebhookServiceStub)

    def create(self, url: str, events: list[int], **fields: Any) -> Reply:
        return self.call("CreateWebhook", wpb.CreateWebhookRequest(url=url, events=events, **fields))

    def get(self, webhook_id: str) -> Reply:
        return self.call("GetWebhook", wpb.GetWebhookRequest(webhook_id=webhook_id))

    def list(self, page_size: int = 0) -> Reply:
        return self.call("ListWebhooks", wpb.ListWebhooksRequest(page_size=page_size))

    def delete(self, webhook_id: str) -> Reply:
        return self.call("DeleteWebhook", wpb.DeleteWebhookRequest(webhook_id=webhook_id))


@pytest.fixture(params=["rest", "grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clients(server: Server, transport: str) -> Iterator[list[Client]]:
    made = [new_client(server, transport) for _ in range(2)]
    yield made
    for c in made:
        c.close()


def _hook(reply: Reply) -> wpb.Webhook:
    hook: wpb.Webhook = reply.expect_ok().webhook
    return hook


def _table(reply: Reply) -> cg.Table:
    table: cg.Table = reply.expect_ok().table
    return table


def _verified(secret: str, got: Received) -> bool:
    header = got.headers["x-golf-signature"]
    parts = dict(p.split("=", 1) for p in header.split(","))
    mac = hmac.new(secret.encode(), parts["t"].encode() + b"." + got.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(mac, parts["v1"]) and abs(time.time() - int(parts["t"])) < 300


# -- registering -------------------------------------------------------------------------------------------------
def test_players_register_see_and_delete_their_own_webhooks(clients: list[Client], receiver: Receiver) -> None:
    ann, bob = (Webhooks(c) for c in clients)
    made = _hook(ann.create(receiver.url("/ann"), [TURN, ENDED]))
    assert made.id and made.secret.startswith("whsec_") and made.player_id == ann.player_id
    assert made.coverage == wpb.WEBHOOK_COVERAGE_PLAYER and made.issuer == "golf"
    assert list(made.events) == [TURN, ENDED] and made.url == receiver.url("/ann")
    seen = _hook(ann.get(made.id))
    assert seen.secret == "" and seen.id == made.id and seen.create_time == made.create_time
    listed = ann.list().expect_ok()
    assert [h.id for h in listed.webhooks] == [made.id] and all(not h.secret for h in listed.webhooks)
    # Another player is told it does not exist, and sees none.
    assert bob.get(made.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert bob.delete(made.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert not bob.list().expect_ok().webhooks
    # Only a portal back end's token may cover every player of an issuer.
    assert ann.create(receiver.url("/x"), [TURN], coverage=wpb.WEBHOOK_COVERAGE_ISSUER).expect_error(
        R.ERROR_REASON_PERMISSION_DENIED
    )
    assert ann.delete(made.id).expect_ok() == wpb.DeleteWebhookResponse()
    assert ann.get(made.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert ann.delete(made.id).expect_error(R.ERROR_REASON_NOT_FOUND)


def test_a_retried_create_returns_the_same_webhook(clients: list[Client], receiver: Receiver) -> None:
    ann = Webhooks(clients[0])
    first = _hook(ann.create(receiver.url("/retry"), [TURN], idempotency_key="hook-1"))
    again = _hook(ann.create(receiver.url("/retry"), [TURN], idempotency_key="hook-1"))
    assert again == first
    assert ann.create(receiver.url("/other"), [TURN], idempotency_key="hook-1").expect_error(
        R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED
    )
    ann.delete(first.id).expect_ok()


@pytest.mark.parametrize(
    ("url", "events", "field"),
    [
        ("http://10.0.0.1/hook", [TURN], "url"),
        ("https://169.254.169.254/latest", [TURN], "url"),
        ("https://[::127.0.0.1]/hook", [TURN], "url"),  # IPv4-compatible loopback
        ("https://[::ffff:0:7f00:1]/hook", [TURN], "url"),  # IPv4-translated loopback
        ("https://[64:ff9b::a9fe:a9fe]/latest", [TURN], "url"),  # NAT64 of the cloud metadata address
        ("https://[2002:a9fe:a9fe::]/latest", [TURN], "url"),  # 6to4 of it
        ("https://192.0.0.8/hook", [TURN], "url"),  # IETF protocol assignments
        ("http://hooks.example.com/hook", [TURN], "url"),
        ("https://db.internal/hook", [TURN], "url"),
        ("ftp://hooks.example.com/hook", [TURN], "url"),
        ("https://user:pw@hooks.example.com/", [TURN], "url"),
        ("", [TURN], "url"),
        ("https://hooks.example.com/hook", [], "events"),
        ("https://hooks.example.com/hook", [TURN, TURN], "events"),
    ],
)
def test_bad_requests_are_refused_with_their_field(
    clients: list[Client], url: str, events: list[int], field: str
) -> None:
    error = Webhooks(clients[0]).create(url, events).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert error.field == field


@pytest.mark.parametrize("text", ["\x00", "\ud800"])
def test_a_page_token_holding_text_no_database_takes_is_invalid(clients: list[Client], text: str) -> None:
    """A NUL (PostgreSQL) or a lone surrogate (both databases) in a forged token's id was a 500 / INTERNAL."""
    raw = json.dumps(["2026-01-01T00:00:00+00:00", f"w{text}"]).encode()
    token = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    reply = Webhooks(clients[0]).call("ListWebhooks", wpb.ListWebhooksRequest(page_token=token))
    assert reply.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageToken"


def test_a_player_has_at_most_ten_webhooks(clients: list[Client], receiver: Receiver) -> None:
    ann = Webhooks(clients[1])
    made = [_hook(ann.create(receiver.url(f"/many/{n}"), [TURN])) for n in range(10)]
    assert ann.create(receiver.url("/many/10"), [TURN]).expect_error(R.ERROR_REASON_TOO_MANY_WEBHOOKS)
    page = ann.list(page_size=4).expect_ok()
    assert len(page.webhooks) == 4 and page.next_page_token
    for hook in made:
        ann.delete(hook.id).expect_ok()


# -- deliveries --------------------------------------------------------------------------------------------------
def test_turns_are_signed_retried_and_never_hold_up_a_move(
    server: Server, clients: list[Client], receiver: Receiver, transport: str
) -> None:
    ann, bob = clients
    run = uuid.uuid4().hex  # the receiver serves every test of the module: paths of this run alone
    ann_path, bob_path = f"/turns/{run}/ann", f"/turns/{run}/bob"
    receiver.statuses[ann_path] = deque([500])  # Ann's receiver fails once
    receiver.delays[bob_path] = 3.0  # Bob's answers long after the server's timeout
    ann_hook = _hook(Webhooks(ann).create(receiver.url(ann_path), [TURN, ENDED]))
    bob_hook = _hook(Webhooks(bob).create(receiver.url(bob_path), [TURN]))
    a, b = Tables(ann), Tables(bob)
    made = _table(a.create(preset="six-card", seats=3, holes=1))
    _table(b.join(made.id))
    _table(a.add_bot(made.id, cg.BOT_LEVEL_GREEDY))
    started = _table(a.start(made.id))
    assert set(started.awaiting) == {0, 1}
    # Ann's first delivery failed (500) and came again, the same delivery with the same body.
    got = receiver.wait_for(ann_path, lambda rs: len(rs) >= 2)
    first, second = got[0], got[1]
    assert first.headers["x-golf-delivery"] == second.headers["x-golf-delivery"] and first.body == second.body
    assert first.headers["x-golf-event"] == "TURN" and first.headers["content-type"] == "application/json"
    assert _verified(ann_hook.secret, second) and not _verified(bob_hook.secret, second)
    event = second.event
    assert event == {
        "deliveryId": second.headers["x-golf-delivery"],
        "webhookId": ann_hook.id,
        "type": "WEBHOOK_EVENT_TYPE_TURN",
        "tableId": made.id,
        "seat": 0,
        "playerId": ann.player_id,
        "tableVersion": str(started.version),
        "eventTime": event["eventTime"],
    }
    # Bob's receiver holds its deliveries: the moves go on at their usual pace all the same.
    receiver.wait_for(bob_path, lambda rs: len(rs) >= 1)
    rng = random.Random(3)
    seats = {0: a, 1: b}
    table = started
    slowest = 0.0
    for _ in range(12):
        if table.status != PLAYING:
            break
        me = seats[table.awaiting[0]]
        mine = _table(me.get(table.id))
        began = time.monotonic()
        table = _table(me.act(table.id, rng.choice(list(mine.legal_moves))))
        slowest = max(slowest, time.monotonic() - began)
    assert slowest < 1.0, f"a move took {slowest:.2f} s"
    assert _verified(bob_hook.secret, receiver.at(bob_path)[0])
    for hook, client in ((ann_hook, ann), (bob_hook, bob)):
        Webhooks(client).delete(hook.id).expect_ok()


def test_a_portal_hears_of_its_players_turns_and_match_ends(
    server: Server, receiver: Receiver, rsa_key: rsa.RSAPrivateKey, transport: str
) -> None:
    backend = new_client(server, transport, sign_in=False)
    backend.use_token(portal_token(rsa_key, f"backend-{transport}-{uuid.uuid4().hex}", scope="play golf.webhooks"))
    pat = new_client(server, transport, sign_in=False)
    pat.use_token(portal_token(rsa_key, f"pat-{transport}-{uuid.uuid4().hex}"))
    guest = new_client(server, transport)
    path = f"/portal/{uuid.uuid4().hex}"
    try:
        portal = Webhooks(backend)
        hook = _hook(portal.create(receiver.url(path), [TURN, ENDED]))
        assert hook.coverage == wpb.WEBHOOK_COVERAGE_ISSUER and hook.issuer == PORTAL and not hook.player_id
        # A portal's player without the scope may not cover the portal; the back end manages Pat's own webhooks.
        pats = Webhooks(pat)
        assert pats.create(receiver.url("/p"), [TURN], coverage=wpb.WEBHOOK_COVERAGE_ISSUER).expect_error(
            R.ERROR_REASON_PERMISSION_DENIED
        )
        own = _hook(pats.create(receiver.url(f"{path}/pat"), [ENDED]))
        assert own.coverage == wpb.WEBHOOK_COVERAGE_PLAYER and own.issuer == PORTAL and own.player_id
        assert {h.id for h in portal.list().expect_ok().webhooks} >= {hook.id, own.id}
        assert pats.get(hook.id).expect_error(R.ERROR_REASON_NOT_FOUND)
        # Pat (the portal's player) and a guest play against a bot; both resign: the match is over.
        p, g = Tables(pat), Tables(guest)
        made = _table(p.create(preset="six-card", seats=3, holes=1))
        _table(g.join(made.id))
        _table(p.add_bot(made.id, cg.BOT_LEVEL_GREEDY))
        started = _table(p.start(made.id))
        _table(p.resign(made.id))
        over = _table(g.resign(made.id))
        assert over.status == OVER
        got = receiver.wait_for(path, lambda rs: any(r.headers["x-golf-event"] == "MATCH_ENDED" for r in rs))
        events = sorted((r.event["type"], r.event["seat"], r.event["tableVersion"]) for r in got)
        assert events == [
            ("WEBHOOK_EVENT_TYPE_MATCH_ENDED", 0, str(over.version)),
            ("WEBHOOK_EVENT_TYPE_TURN", 0, str(started.version)),
        ]  # only Pat's events: the guest is not the portal's player
        assert all(r.event["playerId"] == own.player_id and _verified(hook.secret, r) for r in got)
        mine = receiver.wait_for(f"{path}/pat", lambda rs: len(rs) >= 1)
        assert [r.event["type"] for r in mine] == ["WEBHOOK_EVENT_TYPE_MATCH_ENDED"] and _verified(own.secret, mine[0])
        portal.delete(own.id).expect_ok()
        portal.delete(hook.id).expect_ok()
    finally:
        for c in (backend, pat, guest):
            c.close()
