"""Webhooks' use cases over the in-memory store: the URL rules (SSRF), who may register, see and delete which
webhook, the per-owner limit, idempotent creation, and the outbox the table observer writes inside each mutation's
transaction (a TURN per new wait of a person's seat, a MATCH_ENDED per person at the end, nothing for a refused
move, nothing for bots)."""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import pytest

from golf.app.errors import IdempotencyKeyReused, InvalidArgument, NotFound, PermissionDenied
from golf.app.identity import OWN_ISSUER, Caller, PlayerRecord
from golf.app.ports import AlreadyStored
from golf.app.tables import TableMoveRefused, TableStatus
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.service import TableService
from golf.app.webhook_records import (
    WEBHOOK_SCOPE,
    Coverage,
    DeliveryRecord,
    DeliveryStatus,
    Subscription,
    WebhookEventType,
    WebhookRecord,
)
from golf.app.webhooks import (
    MAX_WEBHOOKS,
    TooManyWebhooks,
    WebhookOutbox,
    WebhookService,
    address_allowed,
    check_url,
)
from golf.engine.cardgolf import DrawStock, Knock, Move
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore, FakeUnitOfWork, Tables

TURN, ENDED = WebhookEventType.TURN, WebhookEventType.MATCH_ENDED
PORTAL = "https://portal.example"
ANN = Caller("player-ann")
BOB = Caller("player-bob")
# Players of a portal (issuer PORTAL), the portal's back end (scope golf.webhooks), and another portal's.
PAT = Caller("player-pat", PORTAL, frozenset({"play"}))
BACKEND = Caller("player-backend", PORTAL, frozenset({WEBHOOK_SCOPE}))
RIVAL = Caller("player-rival", "https://rival.example", frozenset({WEBHOOK_SCOPE}))
URL = "https://hooks.example.com/golf"


# -- an in-memory webhook store, transactional like the rest of the fakes ----------------------------------------
@dataclass
class HookData:
    hooks: dict[str, WebhookRecord] = field(default_factory=dict)
    deliveries: list[DeliveryRecord] = field(default_factory=list)


class FakeWebhookStore:
    def __init__(self, data: HookData, tables: Tables) -> None:
        self.d = data
        self.t = tables

    async def add_webhook(self, hook: WebhookRecord) -> None:
        if hook.id in self.d.hooks:
            raise AlreadyStored("webhooks_pkey")
        self.d.hooks[hook.id] = hook

    async def get_webhook(self, webhook_id: str) -> WebhookRecord | None:
        return self.d.hooks.get(webhook_id)

    async def list_webhooks(
        self, limit: int, after: tuple[datetime, str] | None, issuer: str | None = None, player_id: str | None = None
    ) -> list[WebhookRecord]:
        rows = [
            h
            for h in self.d.hooks.values()
            if h.live
            and (
                h.issuer == issuer if issuer is not None else h.coverage is Coverage.PLAYER and h.player_id == player_id
            )
            and (after is None or (h.created_at, h.id) < after)
        ]
        rows.sort(key=lambda h: (h.created_at, h.id), reverse=True)
        return rows[:limit]

    async def count_webhooks(self, coverage: Coverage, owner: str) -> int:
        return sum(
            1
            for h in self.d.hooks.values()
            if h.live and h.coverage is coverage and (h.player_id if coverage is Coverage.PLAYER else h.issuer) == owner
        )

    async def delete_webhook(self, webhook_id: str, when: datetime) -> bool:
        hook = self.d.hooks.get(webhook_id)
        if hook is None or not hook.live:
            return False
        self.d.hooks[webhook_id] = replace(hook, deleted_at=when)
        self.d.deliveries = [
            replace(d, status=DeliveryStatus.CANCELLED)
            if d.webhook_id == webhook_id and d.status is DeliveryStatus.PENDING
            else d
            for d in self.d.deliveries
        ]
        return True

    async def subscriptions(self, player_ids: Sequence[str]) -> list[Subscription]:
        out = []
        for pid in player_ids:
            player = self.t.players.get(pid)
            for h in self.d.hooks.values():
                if not h.live:
                    continue
                own = h.coverage is Coverage.PLAYER and h.player_id == pid
                issuer = h.coverage is Coverage.ISSUER and player is not None and player.issuer == h.issuer
                if own or issuer:
                    out.append(Subscription(h.id, pid, h.events))
        return out

    async def add_deliveries(self, deliveries: Sequence[DeliveryRecord]) -> None:
        self.d.deliveries.extend(deliveries)


class HookUnitOfWork(FakeUnitOfWork):
    store: HookStore

    async def __aenter__(self) -> HookUnitOfWork:
        await super().__aenter__()
        self.hook_data = copy.deepcopy(self.store.hooks)
        self._webhooks = FakeWebhookStore(self.hook_data, self.data)
        return self

    @property
    def webhooks(self) -> FakeWebhookStore:
        return self._webhooks

    async def commit(self) -> None:
        await super().commit()
        self.store.hooks = self.hook_data


class HookStore(FakeStore):
    def __init__(self) -> None:
        super().__init__()
        self.hooks = HookData()

    def __call__(self) -> HookUnitOfWork:
        return HookUnitOfWork(self)


@pytest.fixture
def hooks_store(clock: FakeClock) -> HookStore:
    store = HookStore()
    for caller in (PAT, BACKEND):
        store.tables.players[caller.player_id] = PlayerRecord(caller.player_id, "p", clock(), PORTAL, caller.player_id)
    return store


@pytest.fixture
def webhooks(hooks_store: HookStore, clock: FakeClock, limiter: FakeLimiter) -> WebhookService:
    return WebhookService(hooks_store, clock, limiter)


# -- URLs ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/golf",
        "https://hooks.example.com:8443/golf?portal=1",
        "https://8.8.8.8/hook",
        "https://[2001:4860:4860::8888]/hook",
        "https://xn--bcher-kva.example/hook",
        "https://example.com./hook",
    ],
)
def test_public_https_urls_are_taken(url: str) -> None:
    assert check_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "",
        "http://hooks.example.com/golf",  # not https
        "ftp://hooks.example.com/golf",
        "https://",
        "https://user:pw@hooks.example.com/",
        "https://hooks.example.com/#frag",
        "https://hooks.example.com:99999/",
        "https://hooks.example.com/a b",
        "https://localhost/hook",
        "http://localhost:8080/hook",
        "https://127.0.0.1/hook",
        "https://[::1]/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://172.16.5.4/hook",
        "https://169.254.169.254/latest/meta-data",  # cloud metadata (link-local)
        "https://[fe80::1]/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:10.0.0.1]/hook",  # IPv4-mapped private address
        "https://0.0.0.0/hook",
        "https://224.0.0.1/hook",
        "https://127.1/hook",  # resolvers read it as 127.0.0.1
        "https://0x7f000001/hook",
        "https://2130706433/hook",
        "https://metadata/computeMetadata",  # a single-label (intranet) name
        "https://db.internal/hook",
        "https://printer.local/hook",
        "https://app.localhost/hook",
        "https://router.home.arpa/hook",
        "https://bücher.example/hook",  # IDN must be in its xn-- form
        "https://" + "a" * 2050 + ".com/",
    ],
)
def test_other_urls_are_refused_with_the_field(url: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        check_url(url)
    assert refused.value.field == "url"


def test_a_development_server_may_allow_this_machine_only() -> None:
    for url in ("http://localhost:8080/hook", "http://127.0.0.1:9/x", "https://[::1]:8443/", "http://localhost/"):
        assert check_url(url, allow_local=True) == url
    for url in ("http://10.0.0.1/hook", "http://hooks.example.com/", "https://192.168.1.1/"):
        with pytest.raises(InvalidArgument):
            check_url(url, allow_local=True)


def test_delivery_addresses() -> None:
    assert address_allowed("93.184.216.34") and address_allowed("2606:2800:220:1:248:1893:25c8:1946")
    for private in ("10.0.0.1", "127.0.0.1", "::1", "169.254.169.254", "fe80::1%eth0", "::ffff:192.168.0.1", "x"):
        assert not address_allowed(private)
    assert address_allowed("127.0.0.1", allow_local=True) and address_allowed("::1", allow_local=True)
    assert not address_allowed("10.0.0.1", allow_local=True)


# IPv4 addresses a public-looking IPv6 address (or Python 3.11's tables) let through, each with its public twin.
HIDDEN_PRIVATE = [
    ("::127.0.0.1", "2001:4860:4860::8888"),  # IPv4-compatible loopback
    ("::ffff:0:7f00:1", "::ffff:8.8.8.8"),  # IPv4-translated (SIIT) loopback; the mapped form of a public one
    ("64:ff9b::a9fe:a9fe", "64:ff9b::808:808"),  # NAT64 of 169.254.169.254 (cloud metadata); of 8.8.8.8
    ("2002:a9fe:a9fe::", "2002:808:808::"),  # 6to4 of 169.254.169.254; of 8.8.8.8
    ("192.0.0.8", "8.8.4.4"),  # IETF protocol assignments (3.11.7's is_global says global)
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "1.1.1.1"),  # Teredo
    ("::ffff:0:808:808", "2606:4700:4700::1111"),  # IPv4-translated: routed nowhere, whatever it holds
    ("::8.8.8.8", "9.9.9.9"),  # IPv4-compatible (deprecated): routed nowhere
    ("64:ff9b:1::a00:1", "2a00:1450:4001::200e"),  # local-use NAT64 (RFC 8215)
    ("100.64.0.1", "93.184.216.34"),  # shared address space (carrier NAT)
    ("198.18.0.1", "151.101.1.69"),  # benchmarking
]


@pytest.mark.parametrize(("hidden", "public"), HIDDEN_PRIVATE)
def test_addresses_that_embed_a_private_ipv4_one_are_refused(hidden: str, public: str) -> None:
    """``[::127.0.0.1]``, ``[64:ff9b::a9fe:a9fe]``... passed the public host check: refused at registration and at
    delivery, however written; the same forms of a public address still pass."""
    host = f"[{hidden}]" if ":" in hidden else hidden
    with pytest.raises(InvalidArgument) as refused:
        check_url(f"https://{host}/hook")
    assert refused.value.field == "url" and "public host" in refused.value.message
    assert not address_allowed(hidden) and not address_allowed(hidden, allow_local=True)
    host = f"[{public}]" if ":" in public else public
    assert check_url(f"https://{host}/hook") and address_allowed(public)


# -- registering, seeing, deleting -----------------------------------------------------------------------------
async def test_a_player_registers_a_webhook_for_themself_and_sees_its_secret_once(
    webhooks: WebhookService, limiter: FakeLimiter
) -> None:
    hook = await webhooks.create(ANN, URL, [TURN])
    assert hook.coverage is Coverage.PLAYER and hook.player_id == ANN.player_id and hook.issuer == OWN_ISSUER
    assert hook.secret.startswith("whsec_") and len(hook.secret) > 40
    assert hook.events == {TURN} and limiter.count("create") == 1
    assert (await webhooks.get(ANN, hook.id)).id == hook.id
    listed, token = await webhooks.list_webhooks(ANN)
    assert [h.id for h in listed] == [hook.id] and token == ""
    # Others are told it does not exist, whatever their scopes.
    for other in (BOB, BACKEND, Caller("player-bob", OWN_ISSUER, frozenset({WEBHOOK_SCOPE}))):
        with pytest.raises(NotFound):
            await webhooks.get(other, hook.id)
        with pytest.raises(NotFound):
            await webhooks.delete(other, hook.id)
        assert (await webhooks.list_webhooks(other))[0] == []
    await webhooks.delete(ANN, hook.id)
    with pytest.raises(NotFound):
        await webhooks.get(ANN, hook.id)
    with pytest.raises(NotFound):
        await webhooks.delete(ANN, hook.id)
    assert (await webhooks.list_webhooks(ANN))[0] == []


async def test_only_a_trusted_issuers_scoped_token_covers_every_player_of_its_issuer(webhooks: WebhookService) -> None:
    # The scope is the default's switch: a portal back end's webhook covers its issuer's players.
    everyone = await webhooks.create(BACKEND, URL, [TURN, ENDED])
    assert everyone.coverage is Coverage.ISSUER and everyone.player_id is None and everyone.issuer == PORTAL
    # A scoped token may still register one for its own player only.
    own = await webhooks.create(BACKEND, URL, [ENDED], Coverage.PLAYER)
    assert own.coverage is Coverage.PLAYER and own.player_id == BACKEND.player_id
    # Without the scope, or with it on this service's own tokens, asking for the issuer is refused.
    for caller in (PAT, ANN, Caller("player-ann", OWN_ISSUER, frozenset({WEBHOOK_SCOPE}))):
        with pytest.raises(PermissionDenied):
            await webhooks.create(caller, URL, [TURN], Coverage.ISSUER)
    # This service's own token with the scope: its default is the player's own webhook.
    guest_with_scope = Caller("player-x", OWN_ISSUER, frozenset({WEBHOOK_SCOPE}))
    assert (await webhooks.create(guest_with_scope, URL, [TURN])).coverage is Coverage.PLAYER
    # The portal's back end manages its players' own webhooks too; its players only their own; rivals nothing.
    pats = await webhooks.create(PAT, URL, [TURN])
    assert {h.id for h in (await webhooks.list_webhooks(BACKEND))[0]} == {everyone.id, own.id, pats.id}
    assert [h.id for h in (await webhooks.list_webhooks(PAT))[0]] == [pats.id]
    with pytest.raises(NotFound):
        await webhooks.get(PAT, everyone.id)
    with pytest.raises(NotFound):
        await webhooks.get(RIVAL, everyone.id)
    assert (await webhooks.list_webhooks(RIVAL))[0] == []
    await webhooks.delete(BACKEND, pats.id)
    with pytest.raises(NotFound):
        await webhooks.get(PAT, pats.id)


async def test_bad_requests_are_refused_before_anything_is_stored(
    webhooks: WebhookService, hooks_store: HookStore, limiter: FakeLimiter
) -> None:
    with pytest.raises(InvalidArgument) as bad:
        await webhooks.create(ANN, "http://hooks.example.com/", [TURN])
    assert bad.value.field == "url"
    with pytest.raises(InvalidArgument) as bad:
        await webhooks.create(ANN, URL, [])
    assert bad.value.field == "events"
    with pytest.raises(InvalidArgument) as bad:
        await webhooks.create(ANN, URL, [TURN], idempotency_key="k" * 129)
    assert bad.value.field == "idempotencyKey"
    assert hooks_store.hooks.hooks == {} and limiter.count("create") == 0


async def test_owners_have_at_most_ten_live_webhooks(webhooks: WebhookService) -> None:
    made = [await webhooks.create(ANN, f"{URL}/{n}", [TURN]) for n in range(MAX_WEBHOOKS)]
    with pytest.raises(TooManyWebhooks):
        await webhooks.create(ANN, URL, [TURN])
    await webhooks.create(BOB, URL, [TURN])  # counted per player
    await webhooks.delete(ANN, made[0].id)
    await webhooks.create(ANN, URL, [TURN])
    # The issuer's webhooks count apart from its back end's own.
    for n in range(MAX_WEBHOOKS):
        await webhooks.create(BACKEND, f"{URL}/{n}", [TURN])
    with pytest.raises(TooManyWebhooks):
        await webhooks.create(BACKEND, URL, [TURN])
    await webhooks.create(BACKEND, URL, [TURN], Coverage.PLAYER)


async def test_list_pages(webhooks: WebhookService, clock: FakeClock) -> None:
    made = []
    for n in range(5):
        made.append(await webhooks.create(ANN, f"{URL}/{n}", [TURN]))
        clock.advance(1)
    page, token = await webhooks.list_webhooks(ANN, 2)
    seen = [h.id for h in page]
    while token:
        page, token = await webhooks.list_webhooks(ANN, 2, token)
        seen += [h.id for h in page]
    assert seen == [h.id for h in reversed(made)]
    assert all(h.secret for h in page)  # the record has it; the API leaves it out (tests/e2e)
    with pytest.raises(InvalidArgument) as bad:
        await webhooks.list_webhooks(ANN, 2, "not-a-token")
    assert bad.value.field == "pageToken"


async def test_create_is_idempotent_with_a_key(webhooks: WebhookService, hooks_store: HookStore) -> None:
    first = await webhooks.create(ANN, URL, [TURN, ENDED], idempotency_key="k1")
    again = await webhooks.create(ANN, URL, [ENDED, TURN], idempotency_key="k1")
    assert again == first and again.secret == first.secret and len(hooks_store.hooks.hooks) == 1
    with pytest.raises(IdempotencyKeyReused):
        await webhooks.create(ANN, URL + "/other", [TURN, ENDED], idempotency_key="k1")
    other = await webhooks.create(BOB, URL, [TURN, ENDED], idempotency_key="k1")  # keys are per caller
    assert other.id != first.id
    await webhooks.delete(ANN, first.id)
    with pytest.raises(NotFound):
        await webhooks.create(ANN, URL, [TURN, ENDED], idempotency_key="k1")


# -- the outbox ------------------------------------------------------------------------------------------------
@pytest.fixture
def outbox() -> WebhookOutbox:
    return WebhookOutbox()


@pytest.fixture
def tables(hooks_store: HookStore, clock: FakeClock, limiter: FakeLimiter, outbox: WebhookOutbox) -> TableService:
    service = TableService(hooks_store, clock, limiter)
    service.observers.append(outbox)
    service.publishers.append(outbox.published)
    return service


def events(store: HookStore, webhook_id: str | None = None) -> list[tuple[WebhookEventType, int, str, int]]:
    return [
        (d.event.type, d.event.seat, d.event.player_id, d.event.table_version)
        for d in store.hooks.deliveries
        if webhook_id is None or d.webhook_id == webhook_id
    ]


async def two_people_and_a_bot(tables: TableService, a: Caller, b: Caller, holes: int = 1) -> TableSnapshot:
    made = await tables.create_table(a, "six-card", seats=3, holes=holes)
    await tables.join(b, "b-join", table_id=made.table_id)
    await tables.add_bot(a, made.table_id, "greedy", "bot")
    return await tables.start(a, made.table_id, "go")


def plain(legal: tuple[Move, ...], rng: random.Random) -> Move:
    moves = [m for m in legal if not isinstance(m, Knock)]
    return rng.choice(moves or list(legal))


async def test_turn_events_come_once_per_wait_of_a_person_and_never_for_bots(
    tables: TableService, webhooks: WebhookService, hooks_store: HookStore
) -> None:
    ann_turns = await webhooks.create(ANN, URL, [TURN])
    bob_all = await webhooks.create(BOB, URL, [TURN, ENDED])
    started = await two_people_and_a_bot(tables, ANN, BOB)
    # The start awaits both people's start cards: one TURN each, at the start's version.
    v = started.version
    assert events(hooks_store, ann_turns.id) == [(TURN, 0, ANN.player_id, v)]
    assert events(hooks_store, bob_all.id) == [(TURN, 1, BOB.player_id, v)]
    rng = random.Random(5)
    snap = started
    players = {ANN.player_id: ANN, BOB.player_id: BOB}
    while snap.view.status is TableStatus.PLAYING:
        before = len(hooks_store.hooks.deliveries)
        seat = snap.view.awaiting[0]
        caller = players[snap.view.seats[seat].player_id or ""]
        mine = await tables.get(caller, snap.table_id)
        move = plain(mine.view.legal_moves, rng)
        snap = await tables.act(caller, snap.table_id, move, f"m-{snap.version}")
        new = hooks_store.hooks.deliveries[before:]
        if isinstance(move, DrawStock) and snap.view.awaiting == (seat,):
            assert new == []  # the same turn goes on: nobody is told anything
        for d in new:
            assert d.event.table_version == snap.version and d.status is DeliveryStatus.PENDING
            assert d.next_attempt_at == d.event.at
            if d.event.type is TURN:
                assert d.event.seat in snap.view.awaiting
    # One TURN per wait: never two in a row for a seat without that seat having moved in between.
    for hook, seat in ((ann_turns, 0), (bob_all, 1)):
        turns = [e for e in events(hooks_store, hook.id) if e[0] is TURN]
        assert len(turns) == len({e[3] for e in turns}) and all(e[1] == seat for e in turns)
    ended = [e for e in events(hooks_store) if e[0] is ENDED]
    assert ended == [(ENDED, 1, BOB.player_id, snap.version)]  # only Bob's webhook wants MATCH_ENDED
    assert all(d.event.player_id in players for d in hooks_store.hooks.deliveries)  # nothing for the bot


async def test_a_portals_webhook_covers_its_players_and_no_others(
    tables: TableService, webhooks: WebhookService, hooks_store: HookStore
) -> None:
    portal = await webhooks.create(BACKEND, URL, [TURN, ENDED])
    rival = await webhooks.create(RIVAL, URL, [TURN, ENDED])
    started = await two_people_and_a_bot(tables, PAT, ANN)
    assert events(hooks_store, portal.id) == [(TURN, 0, PAT.player_id, started.version)]
    assert events(hooks_store, rival.id) == []
    # Pat resigns; Ann is the last person, then resigns too: the match is abandoned and over.
    await tables.resign(PAT, started.table_id, "pat-out")
    over = await tables.resign(ANN, started.table_id, "ann-out")
    assert over.view.status is TableStatus.OVER
    assert events(hooks_store, portal.id)[-1] == (ENDED, 0, PAT.player_id, over.version)


async def test_a_refused_move_writes_no_delivery(
    tables: TableService, webhooks: WebhookService, hooks_store: HookStore
) -> None:
    await webhooks.create(BOB, URL, [TURN, ENDED])
    started = await two_people_and_a_bot(tables, ANN, BOB)
    queued = list(hooks_store.hooks.deliveries)
    with pytest.raises(TableMoveRefused):
        await tables.act(ANN, started.table_id, DrawStock(), "too-early")  # start cards first
    assert hooks_store.hooks.deliveries == queued


async def test_a_failing_observer_refuses_the_move_and_its_deliveries(
    tables: TableService, webhooks: WebhookService, hooks_store: HookStore, outbox: WebhookOutbox
) -> None:
    """The outbox commits with the move or not at all: a mutation whose transaction fails stores neither."""
    await webhooks.create(BOB, URL, [TURN])
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1)
    await tables.join(BOB, "b", table_id=made.table_id)

    async def broken(uow: object, appended: object) -> None:
        raise RuntimeError("the transaction fails after the outbox row was written")

    tables.observers.append(broken)  # runs after the outbox's observer, in the same transaction
    with pytest.raises(RuntimeError):
        await tables.start(ANN, made.table_id, "go")
    assert hooks_store.hooks.deliveries == []
    assert hooks_store.tables.card_tables[made.table_id].status is TableStatus.SEATING


async def test_the_outbox_wakes_the_sender_after_a_commit_that_wrote_deliveries(
    tables: TableService, webhooks: WebhookService, outbox: WebhookOutbox
) -> None:
    woken: list[int] = []
    outbox.wake = lambda: woken.append(1)
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1)
    await tables.join(BOB, "b", table_id=made.table_id)
    await tables.start(ANN, made.table_id, "go")
    assert woken == []  # no webhook: nothing written, nobody woken
    await webhooks.create(ANN, URL, [TURN])
    other = await two_people_and_a_bot(tables, ANN, BOB)
    assert woken == [1] and other.version > 0
