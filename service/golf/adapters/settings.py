"""Every setting comes from an environment variable prefixed ``GOLF_``; defaults suit a laptop."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, Field, PositiveFloat, PositiveInt
from pydantic_settings import BaseSettings, SettingsConfigDict


class TrustedIssuerSettings(BaseModel):
    """A portal whose tokens sign its own players in: tokens with this ``iss`` and ``aud``, signed by ``public_key``
    (PEM) or by a key of the JWK set at ``jwks_url``. The fields of ``golf.adapters.auth.tokens.TrustedIssuer``,
    all of them: an unknown field is refused, not dropped (a misspelt ``jwks_refresh_seconds`` would otherwise
    leave the set kept 300 s)."""

    model_config = {"extra": "forbid"}

    issuer: str
    """The portal's ``iss``, as its tokens carry it (``https://portal.example``)."""
    audience: str
    """The ``aud`` the portal's tokens carry for this service."""
    public_key: str | None = None
    """The portal's public key as PEM; give it or ``jwks_url``."""
    jwks_url: str | None = None
    """Where the portal publishes its JWK set (fetched when first needed); give it or ``public_key``."""
    algorithms: list[str] = ["RS256", "ES256"]
    """Signature algorithms taken: RS, PS, ES and EdDSA ones only, so a token "signed" with the public key as an HMAC
    secret is refused."""
    jwks_refresh_seconds: PositiveFloat = 300.0
    """How long a fetched JWK set is used: a key the portal removes stops signing players in within this time."""
    jwks_timeout_seconds: PositiveFloat = 5.0
    """The most a sign-in waits for a fetch of the JWK set (concurrent sign-ins wait for the same one)."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="GOLF_", extra="ignore")

    database_url: str = "sqlite:///golf.db"
    """Plain URL: ``sqlite:///path/golf.db`` or ``postgresql://user@host:5432/db``; drivers are picked here."""
    host: str = "0.0.0.0"
    """Bind address for both ports."""
    http_port: int = 8080
    """REST, Connect and gRPC-Web, the docs pages, health and metrics."""
    grpc_port: int = 50051
    """gRPC."""
    db_pool_size: int = 10
    """PostgreSQL connections per process for requests that read or write in a transaction (a move on a game the
    process holds takes none); each process opens two more, one to store concurrent moves together (group commit)
    and one to listen for live tables' events."""
    migrate_wait_seconds: float = Field(default=60.0, ge=0.0)
    """``golf migrate``: how long to wait for a database that cannot be reached yet (not started, not accepting
    connections, not created yet), trying again with a growing pause (0.25 s up to 5 s) and one log line, before it
    exits 1 with the last reason; 0 tries once. So ``make run``, a container started beside its database and the
    chart's migration Job outlive a database that starts after them."""
    db_group_commit_delay_ms: float = Field(default=12.0, ge=0.0, le=100.0)
    """PostgreSQL: while concurrent moves share statements (group commit, ``golf.adapters.db.group_commit``), the
    most a batch waits for more moves before it is sent, as PostgreSQL's ``commit_delay``: it goes as soon as as many
    moves wait as came together lately, or 1/8 of this passes with no new one. Under load a move waits a few
    milliseconds for several times fewer statements; a lone move never waits; 0 sends at once."""
    shutdown_grace_seconds: float = 10.0
    """On SIGTERM, how long requests in flight may take to finish."""
    shutdown_drain_seconds: float = 1.0
    """On SIGTERM, how long gRPC keeps taking up calls already sent before it stops (health says NOT_SERVING)."""
    solver_workers: int = 1
    """Processes that run the solver for requests (hints, AutoPlay, winnable deals when the pool is empty)."""
    solver_queue: int = 64
    """Solver calls that may wait for a worker. Players take turns by claim (``golf.adapters.solver_queue``): one who
    asks now and then waits only for the searches running, and players who all keep the solver busy take turns (one
    player's many searches wait behind another's one); when the queue is full, a player with fewer calls in it than
    the one with the most takes that one's newest call's place, and more are refused with UNAVAILABLE / 503. A call
    whose client hangs up (a gRPC cancel or deadline, a closed HTTP connection) leaves the queue, or stops its search
    within milliseconds if it was running."""
    solver_queue_per_player: int = Field(default=3, ge=0)
    """Solver calls one player may have waiting or running at once; more are refused with RATE_LIMITED / 429
    (0: no bound of its own)."""
    solver_budget: int = 2_000_000
    """Positions one solver call may search for a request; a budget run out is reported, never taken as "no"."""
    pool_library: int = 500
    """Deals kept per preset and difficulty; when no fresh deal is left the least dealt is dealt again."""
    pool_size: int = 30
    """Winnable deals kept ready per preset and difficulty, refilled in the background; 0 turns refilling off."""
    pool_presets: str = "standard,queens-on-kings,wrap"
    """Presets the pool keeps ready (comma-separated)."""
    log_level: str = "info"
    """``debug``, ``info``, ``warning`` or ``error``."""
    log_format: Literal["json", "text"] = "json"
    """``json``: one JSON object per line with the request id (for log collectors); ``text`` for a terminal."""
    max_body_bytes: PositiveInt = 64 * 1024
    """The largest REST request body taken; the largest legitimate body is under 4 KiB. A larger one is
    PAYLOAD_TOO_LARGE (413), refused on its ``Content-Length`` or as soon as that many bytes have come, never read
    whole; a body the server never reads (a request refused first: 401, 404, 405, 429) is thrown away up to this
    many bytes, then the connection is closed. Connect refuses one over it, or one that inflates past it (gzip),
    with 413 too."""
    idle_timeout_seconds: PositiveInt = Field(
        default=75, validation_alias=AliasChoices("GOLF_IDLE_TIMEOUT_SECONDS", "GOLF_HTTP_KEEP_ALIVE_SECONDS")
    )
    """How long a connection with no request in progress stays open, on both ports: an HTTP/1.1 connection from
    its opening or its last answer (``GOLF_HTTP_KEEP_ALIVE_SECONDS``, its former name, is still read), a gRPC one
    from its last call (``max_connection_idle``: a GOAWAY, which clients take as "reconnect"). Longer than the idle
    timeout of the proxies and load balancers in front (60 s on most), so that the server never closes a connection
    just as one of them reuses it: a race the client sees as a connection reset with no answer."""
    header_timeout_seconds: PositiveFloat = 10.0
    """How long a client has to send a whole HTTP request once its first byte came (line, headers and a body of
    at most ``max_body_bytes``: 408, then the connection is closed), and to open a gRPC connection (its HTTP/2
    preface and settings). A connection that trickles its headers holds a connection slot for no longer."""
    max_connections: PositiveInt = 1000
    """Open connections per process, on each port; past them a new HTTP connection gets 503 (``Retry-After: 1``)
    and is closed, a new gRPC one is closed at once. The file descriptors and memory of a process stay bounded
    whoever connects."""
    max_request_line_bytes: PositiveInt = 16 * 1024
    """The longest HTTP request line (method, path and query) taken: 414, then the connection is closed."""
    max_header_bytes: PositiveInt = 16 * 1024
    """The most bytes of an HTTP request's headers (431, then the connection is closed; counted as they come, never
    parsed past it) and of a gRPC call's metadata (RESOURCE_EXHAUSTED)."""
    max_headers: PositiveInt = 100
    """The most header lines an HTTP request may have (431, then the connection is closed)."""
    access_log: bool = False
    """One log line per HTTP request (costs CPU on the hot path)."""
    readiness_interval_seconds: float = 5.0
    """How often the database and schema are re-checked for the gRPC health status (``/readyz`` checks on call)."""
    metrics_refresh_seconds: float = 15.0
    """``/metrics`` counts games in progress in the database at most this often."""
    event_heartbeat_seconds: PositiveFloat = 15.0
    """An idle table event stream (WatchTable, Server-Sent Events) sends a heartbeat this often, so proxies keep it
    open and clients know it is alive."""
    event_catch_up_seconds: PositiveFloat = 1.5
    """How often the tables watched in this process are compared with the database, so a lost notification (from
    another replica) costs at most this much latency, never an event."""
    event_queue_size: PositiveInt = 256
    """Commits a watcher may have waiting before its stream is cut off (it reconnects and reads the rest from the
    log): a slow client never makes the server hold more."""
    sqlite_synchronous: Literal["NORMAL", "FULL", "EXTRA"] = "FULL"
    """SQLite's ``synchronous`` pragma: FULL makes each acknowledged move durable even across a power cut;
    NORMAL survives process crashes only and is faster."""
    token_key: str | None = None
    """Secret (32 characters or more) signing this service's access tokens; every replica needs the same one. Unset
    with SQLite, a key is generated and kept beside the database file; unset with PostgreSQL, the server refuses to
    start."""
    token_issuer: str = "golf"
    """``iss`` of the access tokens this service signs."""
    token_audience: str = "golf"
    """``aud`` of the access tokens this service signs."""
    access_token_seconds: int = 3600
    """Lifetime of an access token."""
    refresh_token_days: int = 365
    """Lifetime of a refresh token (a device signs in again with it as the same player until then)."""
    token_leeway_seconds: float = 30.0
    """Clock skew allowed when checking ``exp``, ``nbf`` and ``iat``."""
    token_player_check_seconds: float = Field(default=10.0, ge=0.0)
    """How long a process takes a token's player to still exist before it asks the database again: a deleted
    player's access token stops working within this time (0: asked on every call)."""
    trusted_issuers: list[TrustedIssuerSettings] = []
    """Portals whose tokens sign their players in, as JSON: ``[{"issuer": ..., "audience": ..., "public_key": PEM
    or "jwks_url": URL, "algorithms": ["RS256"]}]``, each entry with the fields of ``TrustedIssuerSettings``; an
    unknown field is refused (a startup error, not ignored)."""
    private_issuers: list[str] = []
    """Portals (issuers) that keep their players private, as JSON: ``["https://portal.example"]``. Their players
    appear on no public leaderboard, and their histories are shown only to players of the same issuer."""
    redis_url: str | None = None
    """Where rate limits are counted, shared by every replica (``redis://host:6379/0``); unset: in this process."""
    redis_prefix: str = "golf"
    """Prefix of the rate-limit keys in Redis, so deployments sharing one Redis count apart."""
    rate_limit_player: str = "50/second;1500/minute"
    """Calls per signed-in player (moving windows; ``;`` separates several; empty turns it off)."""
    player_concurrent_calls: int = Field(default=4, ge=0)
    """Unary calls of one player (or, signed out, one address) in the handlers at once; more wait their turn, so one
    player's burst never makes another's call wait behind all of it (0: no bound)."""
    rate_limit_address: str = "200/second"
    """Calls per client address (the TCP peer), signed in or not."""
    rate_limit_solver: str = "30/minute"
    """Solver searches per player: hints, AutoPlay, and winnable deals under rules the pool does not keep."""
    rate_limit_create: str = "60/minute"
    """New deals, games, rounds and holes per player."""
    rate_limit_sign_in: str = "30/minute"
    """Guest sign-ups and token refreshes per client address."""
    rate_limit_sign_up_network: str = "60/minute"
    """Guest sign-ups per network: the client address's /24 (IPv4, IPv4-mapped IPv6 too) or /64 (IPv6), so that
    many addresses of one network (a rented block, one IPv6 host) do not each get the address's allowance."""
    rate_limit_sign_up_service: str = "600/minute"
    """Guest sign-ups on the whole service (every replica, with Redis; each process, without): the most new
    identities a flood from many networks can make. Refreshes and signed-in players are not counted."""
    rate_limit_join_code_player: str = "5/minute;30/day"
    """Wrong private-table join codes per player (joining, getting or watching a table by its code); past it every
    code of the player is refused, the right one too, until the window frees."""
    rate_limit_join_code_address: str = "20/minute;200/day"
    """Wrong private-table join codes per client address (every guest of one address together)."""
    webhook_max_attempts: PositiveInt = 10
    """Attempts at one webhook delivery before it is given up (with the default backoff, about 45 minutes)."""
    webhook_backoff_seconds: float = 5.0
    """The wait after a delivery's first failed attempt; it doubles after each (with jitter: half to all of it)."""
    webhook_backoff_max_seconds: float = 1800.0
    """The longest wait between two attempts at a delivery."""
    webhook_timeout_seconds: float = 5.0
    """How long a webhook receiver has to answer (connecting included) before the attempt counts as failed."""
    webhook_concurrency: PositiveInt = 32
    """Deliveries in flight at once in one process (a slow receiver holds one of them, never a move)."""
    webhook_poll_seconds: float = 1.0
    """How often the outbox is looked at for due deliveries (those of this process's moves go out at once)."""
    webhook_keep_days: float = 7.0
    """Finished deliveries (made, given up, cancelled) are removed after this many days."""
    webhook_allow_local_urls: bool = False
    """Tests and development only: let webhooks POST to ``localhost``, ``127.0.0.1`` and ``::1``, over http too."""
