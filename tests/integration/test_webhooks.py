"""Webhooks on SQLite and PostgreSQL: the store, the outbox written in the same transaction as the move, and the
sender against a real HTTP receiver on 127.0.0.1: signed deliveries, retries with backoff, giving up, deleted
webhooks, addresses refused at delivery, claims that never overlap, leases that run out, and moves that never
wait for a slow receiver."""

from __future__ import annotations

import asyncio
import json
import ssl
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from golf.adapters.db.repository import Database
from golf.adapters.webhook_sender import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    SenderSettings,
    WebhookSender,
    sign,
    verify_signature,
)
from golf.app.identity import Caller, PlayerRecord
from golf.app.tables import TableMoveRefused, TableStatus
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.service import TableService
from golf.app.webhook_records import (
    WEBHOOK_SCOPE,
    Coverage,
    DeliveryRecord,
    DeliveryStatus,
    WebhookEvent,
    WebhookEventType,
)
from golf.app.webhooks import WebhookOutbox, WebhookService
from golf.engine.cardgolf import DrawStock, Knock

TURN, ENDED = WebhookEventType.TURN, WebhookEventType.MATCH_ENDED
PORTAL = "https://portal.example"
ANN = Caller(str(uuid.UUID(int=1)))
BOB = Caller(str(uuid.UUID(int=2)))
PAT = Caller(str(uuid.UUID(int=3)), PORTAL)
BACKEND = Caller(str(uuid.UUID(int=4)), PORTAL, frozenset({WEBHOOK_SCOPE}))


class Clock:
    """A clock the tests move (the sender's backoff is measured on it)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class NoLimits:
    async def hit(self, limit: str, key: str) -> None:
        return None


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    """A tiny HTTP/1.1 server on 127.0.0.1: records each request, answers with the next of ``statuses`` (200 when
    none is left), after ``delay`` seconds."""

    statuses: deque[int] = field(default_factory=deque)
    delay: float = 0.0
    requests: list[Received] = field(default_factory=list)
    port: int = 0
    server: asyncio.Server | None = None

    async def start(self, tls: ssl.SSLContext | None = None) -> Receiver:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=tls)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def close(self) -> None:
        if self.server is not None:
            self.server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            lines = head.split("\r\n")
            path = lines[0].split(" ")[1]
            headers = {k.lower(): v for k, v in (line.split(": ", 1) for line in lines[1:] if line)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            self.requests.append(Received(path, headers, body, time.monotonic()))
            if self.delay:
                await asyncio.sleep(self.delay)
            status = self.statuses.popleft() if self.statuses else 200
            writer.write(f"HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok".encode())
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()


@pytest.fixture
async def database(migrated_url: str) -> AsyncIterator[Database]:
    db = Database(migrated_url, pool_size=4)
    yield db
    await db.dispose()


@pytest.fixture
async def receiver() -> AsyncIterator[Receiver]:
    r = await Receiver().start()
    yield r
    await r.close()


@pytest.fixture
def clock() -> Clock:
    return Clock()


def sender_with(database: Database, clock: Clock, **knobs: object) -> WebhookSender:
    base = {"allow_local_urls": True, "timeout_seconds": 2.0, "backoff_seconds": 10.0}
    return WebhookSender(database, clock, SenderSettings(**{**base, **knobs}))  # type: ignore[arg-type]


async def add_players(db: Database, clock: Clock) -> None:
    async with db() as uow:
        for caller in (ANN, BOB):
            await uow.players.add_player(PlayerRecord(caller.player_id, "p", clock()))
        for caller in (PAT, BACKEND):
            await uow.players.add_player(PlayerRecord(caller.player_id, "p", clock(), PORTAL, caller.player_id))
        await uow.commit()


def services(db: Database, clock: Clock, wake: WebhookSender | None = None) -> tuple[WebhookService, TableService]:
    outbox = WebhookOutbox(wake=wake.wake if wake is not None else None)
    tables = TableService(db, clock, NoLimits())
    tables.observers.append(outbox)
    tables.publishers.append(outbox.published)
    return WebhookService(db, clock, NoLimits(), allow_local_urls=True), tables


async def deliveries(db: Database, webhook_id: str) -> list[DeliveryRecord]:
    async with db() as uow:
        return await uow.webhooks.deliveries_of(webhook_id)


async def two_people_and_a_bot(tables: TableService, a: Caller = ANN, b: Caller = BOB) -> TableSnapshot:
    made = await tables.create_table(a, "six-card", seats=3, holes=1)
    await tables.join(b, "b-join", table_id=made.table_id)
    await tables.add_bot(a, made.table_id, "greedy", "bot")
    return await tables.start(a, made.table_id, "go")


# -- the store and the outbox ----------------------------------------------------------------------------------
async def test_the_store_finds_who_a_webhook_covers(database: Database, clock: Clock) -> None:
    await add_players(database, clock)
    webhooks, _ = services(database, clock)
    anns = await webhooks.create(ANN, "https://hooks.example.com/a", [TURN])
    portal = await webhooks.create(BACKEND, "https://hooks.example.com/p", [TURN, ENDED])
    clock.advance(1)
    pats = await webhooks.create(PAT, "https://hooks.example.com/pat", [ENDED])
    async with database() as uow:
        subs = await uow.webhooks.subscriptions([ANN.player_id, BOB.player_id, PAT.player_id])
        assert await uow.webhooks.count_webhooks(Coverage.ISSUER, PORTAL) == 1
        assert await uow.webhooks.count_webhooks(Coverage.PLAYER, PAT.player_id) == 1
    assert sorted((s.webhook_id, s.player_id, tuple(sorted(e.value for e in s.events))) for s in subs) == sorted(
        [
            (anns.id, ANN.player_id, ("turn",)),
            (portal.id, PAT.player_id, ("match_ended", "turn")),
            (pats.id, PAT.player_id, ("match_ended",)),
        ]
    )
    listed, _ = await webhooks.list_webhooks(BACKEND)
    assert [h.id for h in listed] == [pats.id, portal.id]
    stored = await webhooks.get(BACKEND, portal.id)
    assert stored == portal and stored.secret == portal.secret  # kept as given, to sign with
    await webhooks.delete(BACKEND, portal.id)
    async with database() as uow:
        assert [s.webhook_id for s in await uow.webhooks.subscriptions([PAT.player_id])] == [pats.id]


async def test_concurrent_creates_never_pass_the_limit_per_owner(database: Database, clock: Clock) -> None:
    """Twelve creates of one player at once, three allowed: exactly three are stored, the others are refused."""
    from dataclasses import replace

    from golf.app.webhooks import TooManyWebhooks

    await add_players(database, clock)
    webhooks, _ = services(database, clock)
    webhooks = replace(webhooks, max_per_owner=3)
    made = await asyncio.gather(
        *(webhooks.create(ANN, f"https://hooks.example.com/{n}", [TURN]) for n in range(12)), return_exceptions=True
    )
    assert sum(1 for m in made if isinstance(m, TooManyWebhooks)) == 9
    assert all(isinstance(m, TooManyWebhooks) or m.player_id == ANN.player_id for m in made)
    async with database() as uow:
        assert await uow.webhooks.count_webhooks(Coverage.PLAYER, ANN.player_id) == 3


async def test_the_outbox_is_written_with_the_move_and_not_without_it(database: Database, clock: Clock) -> None:
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    bobs = await webhooks.create(BOB, "https://hooks.example.com/b", [TURN, ENDED])
    portal = await webhooks.create(BACKEND, "https://hooks.example.com/p", [TURN])
    started = await two_people_and_a_bot(tables, PAT, BOB)
    queued = await deliveries(database, bobs.id)
    assert [(d.event.type, d.event.seat, d.event.table_version) for d in queued] == [(TURN, 1, started.version)]
    assert [(d.event.player_id, d.event.seat) for d in await deliveries(database, portal.id)] == [(PAT.player_id, 0)]
    assert all(d.status is DeliveryStatus.PENDING and d.attempts == 0 for d in queued)
    # A refused move stores nothing: neither an entry nor a delivery.
    with pytest.raises(TableMoveRefused):
        await tables.act(BOB, started.table_id, DrawStock(), "too-early")
    assert await deliveries(database, bobs.id) == queued

    # A mutation whose transaction fails after the outbox row was written leaves neither.
    async def broken(uow: object, appended: object) -> None:
        raise RuntimeError("fails after the outbox")

    tables.observers.append(broken)
    bob = await tables.get(BOB, started.table_id)
    with pytest.raises(RuntimeError):
        await tables.act(BOB, started.table_id, bob.view.legal_moves[0], "bob-reveal")
    tables.observers.remove(broken)
    assert await deliveries(database, bobs.id) == queued
    assert (await tables.get(BOB, started.table_id)).version == started.version
    # Resigning both people ends the match: Bob's webhook hears of it at the version that ended it.
    await tables.resign(PAT, started.table_id, "pat-out")
    over = await tables.resign(BOB, started.table_id, "bob-out")
    assert over.view.status is TableStatus.OVER
    last = (await deliveries(database, bobs.id))[-1]
    assert (last.event.type, last.event.seat, last.event.table_version) == (ENDED, 1, over.version)


# -- the sender ------------------------------------------------------------------------------------------------
async def test_deliveries_are_signed_and_carry_the_event(database: Database, clock: Clock, receiver: Receiver) -> None:
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    hook = await webhooks.create(ANN, receiver.url("/golf?portal=1"), [TURN, ENDED])
    started = await two_people_and_a_bot(tables)
    sender = sender_with(database, clock)
    try:
        assert await sender.run_once() == 1
    finally:
        await sender.close()
    [got] = receiver.requests
    assert got.path == "/golf?portal=1"
    assert got.headers["content-type"] == "application/json"
    assert got.headers[EVENT_HEADER.lower()] == "TURN"
    [delivery] = await deliveries(database, hook.id)
    assert got.headers[DELIVERY_HEADER.lower()] == delivery.id
    header = got.headers[SIGNATURE_HEADER.lower()]
    t = int(clock().timestamp())
    assert header == sign(hook.secret, t, got.body)
    assert verify_signature(hook.secret, header, got.body, now=t + 10)
    assert not verify_signature(hook.secret, header, got.body + b" ", now=t)  # a changed body
    assert not verify_signature("whsec_other", header, got.body, now=t)  # another secret
    assert not verify_signature(hook.secret, header, got.body, now=t + 301)  # a replay, later
    assert json.loads(got.body) == {
        "deliveryId": delivery.id,
        "webhookId": hook.id,
        "type": "WEBHOOK_EVENT_TYPE_TURN",
        "tableId": started.table_id,
        "seat": 0,
        "playerId": ANN.player_id,
        "tableVersion": str(started.version),
        "eventTime": delivery.event.at.isoformat().replace("+00:00", "Z"),
    }
    assert delivery.status is DeliveryStatus.DELIVERED and delivery.attempts == 1 and delivery.delivered_at


async def test_a_failing_receiver_is_retried_with_backoff_until_it_answers(
    database: Database, clock: Clock, receiver: Receiver
) -> None:
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    hook = await webhooks.create(ANN, receiver.url(), [TURN])
    await two_people_and_a_bot(tables)
    receiver.statuses.extend([500, 503, 302])
    sender = sender_with(database, clock, backoff_seconds=10.0, max_attempts=5)
    try:
        waits = []
        for attempt in (1, 2, 3):
            assert await sender.run_once() == 1
            [d] = await deliveries(database, hook.id)
            assert d.status is DeliveryStatus.PENDING and d.attempts == attempt
            assert d.last_error is not None and d.last_error.startswith("HTTP ")
            assert d.next_attempt_at is not None
            wait = (d.next_attempt_at - clock()).total_seconds()
            full = 10.0 * 2 ** (attempt - 1)
            assert full / 2 <= wait <= full  # exponential, with jitter
            waits.append(wait)
            assert await sender.run_once() == 0  # not due yet
            clock.advance(wait)
        assert await sender.run_once() == 1
    finally:
        await sender.close()
    [d] = await deliveries(database, hook.id)
    assert d.status is DeliveryStatus.DELIVERED and d.attempts == 4 and d.last_error is None
    ids = {r.headers[DELIVERY_HEADER.lower()] for r in receiver.requests}
    bodies = {r.body for r in receiver.requests}
    assert len(receiver.requests) == 4 and ids == {d.id} and len(bodies) == 1  # the same delivery each time
    assert waits[0] < waits[2]


async def test_a_delivery_is_given_up_after_its_attempts(database: Database, clock: Clock, receiver: Receiver) -> None:
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    hook = await webhooks.create(ANN, receiver.url(), [TURN])
    await two_people_and_a_bot(tables)
    receiver.statuses.extend([500] * 10)
    sender = sender_with(database, clock, backoff_seconds=1.0, max_attempts=3)
    try:
        for _ in range(3):
            assert await sender.run_once() == 1
            clock.advance(3600)
        assert await sender.run_once() == 0
    finally:
        await sender.close()
    [d] = await deliveries(database, hook.id)
    assert d.status is DeliveryStatus.FAILED and d.attempts == 3 and d.last_error == "HTTP 500"
    assert len(receiver.requests) == 3


async def test_a_timeout_and_a_refused_connection_are_failed_attempts(
    database: Database, clock: Clock, receiver: Receiver
) -> None:
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    slow = await webhooks.create(ANN, receiver.url("/slow"), [TURN])
    closed = await Receiver().start()
    await closed.close()
    await asyncio.sleep(0)
    gone = await webhooks.create(BOB, closed.url("/gone"), [TURN])
    await two_people_and_a_bot(tables)
    receiver.delay = 2.0
    sender = sender_with(database, clock, timeout_seconds=0.5)
    try:
        began = time.monotonic()
        assert await sender.run_once() == 2
        assert time.monotonic() - began < 1.8  # both attempts ran at once, each cut off at the timeout
    finally:
        await sender.close()
    [s] = await deliveries(database, slow.id)
    [g] = await deliveries(database, gone.id)
    assert s.status is DeliveryStatus.PENDING and s.last_error == "no answer within 0.5 s"
    assert g.status is DeliveryStatus.PENDING and g.attempts == 1 and g.last_error


async def test_a_deleted_webhook_gets_nothing_more(database: Database, clock: Clock, receiver: Receiver) -> None:
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    hook = await webhooks.create(ANN, receiver.url(), [TURN])
    await two_people_and_a_bot(tables)
    await webhooks.delete(ANN, hook.id)
    sender = sender_with(database, clock)
    try:
        assert await sender.run_once() == 0
    finally:
        await sender.close()
    [d] = await deliveries(database, hook.id)
    assert d.status is DeliveryStatus.CANCELLED and receiver.requests == []


async def test_a_host_resolving_to_a_private_address_is_never_called(
    database: Database, clock: Clock, receiver: Receiver
) -> None:
    """DNS rebinding: the name passed the checks at registration; at delivery it resolves to a private address."""
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    hook = await webhooks.create(ANN, f"https://hooks.example.com:{receiver.port}/hook", [TURN])
    await two_people_and_a_bot(tables)

    async def rebinding(host: str, port: int) -> list[str]:
        assert host == "hooks.example.com"
        return ["93.184.216.34", "10.0.0.7"]

    sender = WebhookSender(database, clock, SenderSettings(allow_local_urls=True), resolver=rebinding)
    try:
        assert await sender.run_once() == 1
    finally:
        await sender.close()
    [d] = await deliveries(database, hook.id)
    assert d.status is DeliveryStatus.PENDING and d.last_error is not None and "10.0.0.7" in d.last_error
    assert receiver.requests == []


@pytest.mark.parametrize(
    "hidden", ["::127.0.0.1", "::ffff:0:7f00:1", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::", "192.0.0.8"]
)
async def test_a_host_resolving_to_a_private_ipv4_address_in_ipv6_form_is_never_called(
    database: Database, clock: Clock, receiver: Receiver, hidden: str
) -> None:
    """IPv4-compatible, -translated, NAT64 and 6to4 forms of loopback and link-local addresses (and 192.0.0.8) were
    taken as public at delivery too."""
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    hook = await webhooks.create(ANN, f"https://hooks.example.com:{receiver.port}/hook", [TURN])
    await two_people_and_a_bot(tables)

    async def resolver(host: str, port: int) -> list[str]:
        return [hidden]

    sender = WebhookSender(database, clock, SenderSettings(allow_local_urls=True), resolver=resolver)
    try:
        assert await sender.run_once() == 1
    finally:
        await sender.close()
    [d] = await deliveries(database, hook.id)
    assert d.status is DeliveryStatus.PENDING and d.last_error is not None and hidden in d.last_error
    assert receiver.requests == []


async def test_a_named_host_is_called_at_the_address_checked_with_its_name(
    database: Database, clock: Clock, receiver: Receiver
) -> None:
    await add_players(database, clock)
    webhooks, tables = services(database, clock)
    hook = await webhooks.create(ANN, f"http://localhost:{receiver.port}/hook", [TURN])
    await two_people_and_a_bot(tables)
    sender = sender_with(database, clock)
    try:
        assert await sender.run_once() == 1
    finally:
        await sender.close()
    [got] = receiver.requests
    assert got.headers["host"] == f"localhost:{receiver.port}"
    assert (await deliveries(database, hook.id))[0].status is DeliveryStatus.DELIVERED


async def test_claims_never_overlap_and_a_lost_lease_is_claimed_again(database: Database, clock: Clock) -> None:
    await add_players(database, clock)
    webhooks, _ = services(database, clock)
    hook = await webhooks.create(ANN, "https://hooks.example.com/a", [TURN])
    rows = [
        DeliveryRecord(
            str(uuid.uuid4()),
            hook.id,
            WebhookEvent(TURN, str(uuid.uuid4()), 0, ANN.player_id, n + 1, clock()),
            next_attempt_at=clock(),
        )
        for n in range(20)
    ]
    async with database() as uow:
        await uow.webhooks.add_deliveries(rows)
        await uow.commit()
    lease = clock() + timedelta(seconds=30)

    async def claim(limit: int) -> list[str]:
        async with database() as uow:
            got = await uow.webhooks.claim(clock(), lease, limit)
            await asyncio.sleep(0.05)  # hold the claim's locks a moment: the other claim runs meanwhile
            await uow.commit()
        return [c.delivery.id for c in got]

    first, second = await asyncio.gather(claim(12), claim(12))
    assert len(first) + len(second) == 20 and not set(first) & set(second)
    assert await claim(20) == []  # leased
    clock.advance(31)
    again = await claim(20)
    assert sorted(again) == sorted(r.id for r in rows)  # the lease ran out: claimed anew, a second attempt
    async with database() as uow:
        assert {d.attempts for d in await uow.webhooks.deliveries_of(hook.id)} == {2}


async def test_a_slow_receiver_never_slows_a_move(database: Database, clock: Clock, receiver: Receiver) -> None:
    """The sender runs as it does in the server (its own task, woken after each commit that queued deliveries);
    the receiver takes far longer to answer than a move may take."""
    await add_players(database, clock)
    receiver.delay = 3.0
    sender = sender_with(database, clock, timeout_seconds=5.0, poll_seconds=0.05)
    webhooks, tables = services(database, clock, wake=sender)
    await webhooks.create(ANN, receiver.url("/ann"), [TURN, ENDED])
    await webhooks.create(BOB, receiver.url("/bob"), [TURN, ENDED])
    sender.start()
    try:
        snap = await two_people_and_a_bot(tables)
        players = {ANN.player_id: ANN, BOB.player_id: BOB}
        slowest = 0.0
        moves = 0
        while snap.view.status is TableStatus.PLAYING and moves < 40:
            seat = snap.view.awaiting[0]
            caller = players[snap.view.seats[seat].player_id or ""]
            mine = await tables.get(caller, snap.table_id)
            move = next((m for m in mine.view.legal_moves if not isinstance(m, Knock)), mine.view.legal_moves[0])
            began = time.monotonic()
            snap = await tables.act(caller, snap.table_id, move, f"m-{moves}")
            slowest = max(slowest, time.monotonic() - began)
            moves += 1
            if moves == 3:
                await asyncio.sleep(0.3)  # the sender has had time to post (and be held up by the receiver)
                assert receiver.requests, "the sender was woken and is waiting for the receiver"
        assert moves == 40 or snap.view.status is TableStatus.OVER
        assert slowest < 1.0, f"a move took {slowest:.2f} s while the receiver held deliveries for 3 s"
        assert len(receiver.requests) >= 2
    finally:
        await sender.stop()


def _certificate(
    name: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name, signer: ec.EllipticCurvePrivateKey, ca: bool
) -> x509.Certificate:
    now = datetime.now(UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def tls_contexts(tmp_path: Path, served_name: str) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a certificate for ``served_name`` from a fresh CA, and a client context trusting
    that CA only."""
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "golf test CA")])
    ca = _certificate("golf test CA", ca_key, ca_name, ca_key, ca=True)
    leaf = _certificate(served_name, key, ca_name, ca_key, ca=False)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    folder = tmp_path
    (folder / "leaf.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (folder / "leaf.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    server.load_cert_chain(folder / "leaf.pem", folder / "leaf.key")
    client = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    return server, client


@pytest.mark.parametrize("served_name", ["hooks.example.com", "someone-else.example.com"])
async def test_tls_checks_the_webhooks_name_at_the_address_it_was_resolved_to(
    database: Database, clock: Clock, tmp_path: Path, served_name: str
) -> None:
    """The sender connects to the address it checked, and TLS still checks the certificate against the URL's host
    name (SNI): a receiver with another name's certificate is a failed attempt."""
    await add_players(database, clock)
    server_tls, client_tls = tls_contexts(tmp_path, served_name)
    receiver = await Receiver().start(server_tls)
    webhooks, tables = services(database, clock)
    hook = await webhooks.create(ANN, f"https://hooks.example.com:{receiver.port}/hook", [TURN])
    await two_people_and_a_bot(tables)

    async def local(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    client = httpx.AsyncClient(verify=client_tls, trust_env=False, follow_redirects=False)
    sender = WebhookSender(database, clock, SenderSettings(allow_local_urls=True), client=client, resolver=local)
    try:
        assert await sender.run_once() == 1
    finally:
        await sender.close()
        await receiver.close()
    [d] = await deliveries(database, hook.id)
    if served_name == "hooks.example.com":
        assert d.status is DeliveryStatus.DELIVERED
        [got] = receiver.requests
        assert got.headers["host"] == f"hooks.example.com:{receiver.port}"
    else:
        assert d.status is DeliveryStatus.PENDING and d.last_error and "CERTIFICATE" in d.last_error.upper()
        assert receiver.requests == []
