"""Live card Golf tables: the use cases over the pure table aggregate (``golf.app.tables``) and its store.

Every mutation is one unit of work: read the table (from this process's cache, else the store), run the pure
command, let every bot whose turn has come play at once (``immediate_bots``; a table that paces its bots leaves them
to fall due), and append the command's entries and the bots' entries in ONE append at the version read, under the
request's idempotency key, with the table's next due time (``golf.app.tables.clocks.due_at``). Of two writers at one
version the store keeps exactly one; the loser reads again and runs its command again, unless the client named
the version it saw (``expected_version``): then it is told its view is stale. A retry with a used key answers with
the table as that command left it (``replayed``), without writing anything. Keys are each caller's own: another
player's same key at the table is an independent command.

Who may do what:

| command | who |
| --- | --- |
| create | any signed-in player (rate limited as ``create``); sits at seat 0 unless told not to |
| join | any player; a private table asks for its join code (wrong codes are limited per player and address) |
| add a bot, start | the table's creator |
| act, resign | the seated player, for their own seat only |
| leave | the seated player (before the start it frees the seat, after it resigns); the creator may also take a bot
  out of a seat before the start |
| get | anyone for a listed table (a spectator's view unless seated); a private table only its creator, its seated
  players, or someone giving its join code; others are told it does not exist |
| quick play | any signed-in player (opening a table counts as ``create``) |

Work due by time (turn clocks, paced bots, away seats, quick play's autofill) is done by :meth:`TableService.run_due`
(the table clock, ``golf.adapters.table_clock``, calls it for the tables it claims) through the same append at the
version read, with no idempotency key: of two processes doing the same due work, exactly one stores it.
"""

from __future__ import annotations

import math
import secrets
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from golf.app.errors import AppError, Conflict, IdempotencyKeyReused, InvalidArgument, NotFound, PermissionDenied
from golf.app.identity import Caller
from golf.app.ports import AlreadyStored, Clock, RateLimiter, UnitOfWork, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.tables import commands
from golf.app.tables.bots import immediate_bots, pending_bot_seat
from golf.app.tables.clocks import autofill, due_at, due_work, turn_deadline
from golf.app.tables.code_guard import JoinCodeGuard
from golf.app.tables.commands import Applied
from golf.app.tables.entries import BotAdded, Entry, SeatJoined, SeatLeft, SeatMoved, SeatResigned, TableStarted
from golf.app.tables.errors import TableChanged, TableMoveRefused, TableRefusal, TableRefused
from golf.app.tables.options import DEFAULT_MISSED_TURNS, DEFAULT_PRESET, MAX_AUTOFILL_SECONDS, TableOptions
from golf.app.tables.records import TableRecord
from golf.app.tables.state import Table, TableStatus, apply_entry, new_table, replay
from golf.app.tables.views import TableView, view_for
from golf.engine.cardgolf.moves import Move, Reveal

MAX_KEY_LENGTH = 128
DEFAULT_LIST_SIZE = 20
MAX_LIST_SIZE = 100
RACE_ATTEMPTS = 5
"""How often a command is run again on a fresh read after losing the race for a version."""
CODE_ATTEMPTS = 8
"""How many join codes are drawn before giving up on creating a private table (a collision is rare)."""
JOIN_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ"
"""Letters only, without I, L and O (read as 1, 1 and 0): a code read aloud or off a screen is typed right."""
JOIN_CODE_LENGTH = 8
"""23^8 is about 78 billion codes. With wrong codes limited per player and address (``JoinCodeGuard``; 200 a day
per address by default) and even 10,000 private tables open, one address needs about 39,000 days for one lucky
guess. Codes of 6 letters, made before, still open their tables (any code of 4 to 16 letters and digits does)."""
JOIN_CODE_CONSTRAINT = "uq_card_golf_tables_join_code"
"""The unique index that ``TableRepository.add_table`` names (``AlreadyStored``) when another open table holds the
join code just drawn."""
_TABLE_IDS = uuid.UUID("6f1c3a52-5d8e-4f0b-9a57-2b7c9e1d4a60")
"""The namespace of table ids made from (creator, idempotency key), so a retried create finds its table."""
QUICK_PLAY_SEATS = 4
"""Seats at a table quick play opens, unless the caller asks for another number."""
QUICK_PLAY_TURN_SECONDS = 60
"""The turn clock of quick play tables: strangers share them, so one who walks away must not stall the others (after
the default three missed turns in a row a bot plays for them until they come back)."""
QUICK_PLAY_CANDIDATES = 10
"""How many open quick play tables one call tries to join (oldest first) before opening one."""


def secure_join_code() -> str:
    """A fresh private table's join code, drawn with ``secrets``."""
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def secure_seed() -> str:
    """A fresh match seed, drawn with ``secrets``; never sent to a client."""
    return secrets.token_hex(16)


def _check_key(key: str) -> None:
    if not key or len(key) > MAX_KEY_LENGTH:
        raise InvalidArgument("idempotencyKey", f"idempotencyKey must be 1 to {MAX_KEY_LENGTH} characters")


class StaleTableVersion(AppError):
    """The client named a version the table is no longer at; ``current`` is the table as the caller sees it now.
    (The solitaire ``StaleVersion`` carries a solitaire snapshot, so tables have their own.)"""

    def __init__(self, message: str, current: TableSnapshot) -> None:
        super().__init__(message)
        self.current = current


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """A table as one caller sees it: the view of their seat (or a spectator's), and what a client may know of
    the table itself. The seed and the full state never leave the service."""

    table_id: str
    owner_id: str
    created_at: datetime
    view: TableView
    seat: int | None
    """The caller's seat (``None``: the caller watches)."""
    join_code: str | None = None
    """A private table's code, shown to its creator only (to pass on to friends)."""
    replayed: bool = False
    """This is the stored answer to an earlier request with the same idempotency key; nothing changed now."""
    turn_deadline: datetime | None = None
    """When the turn clock of the awaited people runs out (or an away seat's grace): the table acts for them then.
    ``None`` at a table without a turn clock and when no person's move is awaited."""

    @property
    def version(self) -> int:
        return self.view.version


@dataclass(frozen=True, slots=True)
class Appended:
    """What one mutation appended to a table's log: the table before and after, the entries (sequence numbers
    ``first_seq`` onwards) and when. Observers see it inside the mutation's transaction."""

    record: TableRecord
    """The table's record after the append (its version is ``after.version``)."""
    before: Table
    after: Table
    entries: tuple[Entry, ...]
    at: datetime

    @property
    def table_id(self) -> str:
        return self.record.id

    @property
    def first_seq(self) -> int:
        """The sequence number of the first entry appended (the log's entries are numbered from 1)."""
        return self.before.version + 1


AppendObserver = Callable[[UnitOfWork, Appended], Awaitable[None]]
"""Runs inside a mutation's transaction, after its append and before its commit (a webhook outbox, the table's
due time): what it writes commits with the entries or not at all; what it raises refuses the mutation."""
Publisher = Callable[[Appended], None]
"""Told after a commit what it appended (live events, the table clock, the webhook sender; must not block or
raise)."""

Also = Callable[[UnitOfWork, TableRecord], Awaitable[None]]
"""More to write in a mutation's transaction after its append (quick play remembers its key)."""
Intent = Callable[[Table, Entry], bool]
"""Whether a command's stored first entry (on the table as it was before it) is what a retried request asks."""
Command = Callable[[TableRecord, Table], Applied]
"""A table command bound to its request: raises an ``AppError`` (refusal) or returns the entries to store."""


@dataclass(frozen=True, slots=True)
class ClockTimes:
    """The log's times a table's clocks count from (``golf.app.tables.clocks``), at ``version``."""

    version: int
    awaited_since: datetime
    """When the entry ``Table.wait_from`` was written (the table's creation for 0)."""
    last_at: datetime
    """When the latest entry was written (the table's creation at version 0)."""


@dataclass
class TableService:
    """The live table use cases. ``ids``, ``seeds`` and ``join_codes`` draw fresh values (tests replace them)."""

    uow: UnitOfWorkFactory
    clock: Clock
    limiter: RateLimiter
    ids: Callable[[], str] = field(default=lambda: str(uuid.uuid4()))
    seeds: Callable[[], str] = secure_seed
    join_codes: Callable[[], str] = secure_join_code
    cache_size: int = 4096
    observers: list[AppendObserver] = field(default_factory=list)
    """Called inside every mutation's transaction with what it appended (see ``AppendObserver``)."""
    publishers: list[Publisher] = field(default_factory=list)
    """Told after every commit what it appended (a table created without a seat taken appends nothing)."""
    # The tables this process last read or wrote. A mutation goes ahead on a cached table without reading it: if
    # another writer (or replica) moved the table on, the store refuses the append at the stale version and the
    # command runs again on a fresh read. Refusals are only ever decided on a fresh read.
    _tables: OrderedDict[str, tuple[TableRecord, Table]] = field(default_factory=OrderedDict)
    # The clock times of the cached tables that have clocks (by id; valid at their version only).
    _clock_times: dict[str, ClockTimes] = field(default_factory=dict)
    codes: JoinCodeGuard = field(init=False)
    """Wrong join codes per player and address (shared with the table events' watch, which takes codes too)."""

    def __post_init__(self) -> None:
        self.codes = JoinCodeGuard(self.limiter)

    # -- creating and finding tables -----------------------------------------------------------------------
    async def create_table(
        self,
        caller: Caller,
        preset: str = DEFAULT_PRESET,
        rules: dict[str, Any] | None = None,
        seats: int = 4,
        holes: int | None = None,
        private: bool = False,
        take_seat: bool = True,
        idempotency_key: str | None = None,
        turn_seconds: int | None = None,
        missed_turns_limit: int = DEFAULT_MISSED_TURNS,
        missed_action: str = "bot",
        bot_delay_ms: int = 0,
        house_rules: Sequence[str] = (),
    ) -> TableSnapshot:
        """Open a table of ``preset`` with the ``house_rules`` applied (in order) and the rule ``rules`` changed,
        ``seats`` seats and ``holes`` holes; listed, or ``private`` behind a fresh join code. The creator sits at
        seat 0 unless ``take_seat`` is false. A turn clock of ``turn_seconds`` gives a person who lets it run out the
        timeout action, and after ``missed_turns_limit`` missed turns in a row ``missed_action`` (``bot``: a bot
        plays for them until they act again; ``resign``); ``bot_delay_ms`` paces the bots (see
        ``TableOptions.build``).

        With ``idempotency_key`` the table's id is made from the creator and the key, so a retry finds the table
        the first request made (``replayed``); the same key with other options is ``IdempotencyKeyReused``."""
        if idempotency_key is not None:
            _check_key(idempotency_key)
        plain = TableOptions.build(  # refuses bad options before counting the call
            preset,
            rules,
            seats,
            holes,
            turn_seconds=turn_seconds,
            missed_turns_limit=missed_turns_limit,
            missed_action=missed_action,
            bot_delay_ms=bot_delay_ms,
            house_rules=house_rules,
        )
        await self.limiter.hit("create", caller.player_id)
        table_id = self.ids() if idempotency_key is None else self._table_id(caller, idempotency_key)
        for _ in range(CODE_ATTEMPTS):
            options = replace(plain, join_code=self.join_codes()) if private else plain
            options.validate()
            now = self.clock()
            record = TableRecord(table_id, options, self.seeds(), caller.player_id, now)
            table = new_table(options, record.seed)
            applied = commands.join(table, caller.player_id, 0, options.join_code) if take_seat else None
            times: ClockTimes | None = None
            appended: Appended | None = None
            try:
                async with self.uow() as uow:
                    await uow.tables.add_table(record)
                    if applied is not None:
                        appended, times = await self._append(
                            uow, record, table, applied.table, applied.entries, now, idempotency_key, caller.player_id
                        )
                    await uow.commit()
            except AlreadyStored as taken:
                if JOIN_CODE_CONSTRAINT in taken.constraint:
                    continue  # another open table holds the code: draw another
                if idempotency_key is None:
                    raise
                return await self._created(caller, table_id, plain, take_seat)
            final = applied.table if applied is not None else table
            record = replace(record, version=final.version, status=final.status)
            self._remember(record, final, times)
            if appended is not None:
                self._publish(appended)
            return self._snapshot(caller, record, final)
        raise Conflict("no free join code was found; retry")

    @staticmethod
    def _table_id(caller: Caller, key: str) -> str:
        return str(uuid.uuid5(_TABLE_IDS, f"{caller.player_id}\n{key}"))

    async def _created(self, caller: Caller, table_id: str, plain: TableOptions, take_seat: bool) -> TableSnapshot:
        """The answer to a retried create: the table as the first request made it."""
        async with self.uow() as uow:
            record = await uow.tables.get_table(table_id)
            if record is None:  # pragma: no cover - a table is never deleted
                raise NotFound(f"no table {shown(table_id)}")
            first = await uow.tables.get_entries(table_id, through_seq=1)
        seated = bool(first) and first[0].entry == SeatJoined(0, caller.player_id) and bool(first[0].idempotency_key)
        if (
            record.owner_id != caller.player_id
            or replace(record.options, join_code=None) != plain
            or (take_seat and not seated)
            or (not take_seat and seated)
        ):
            raise IdempotencyKeyReused("this idempotency key was already used to create another table")
        table = replay(record.options, record.seed, [first[0].entry] if seated else [])
        return self._snapshot(caller, record, table, replayed=True)

    async def get(
        self, caller: Caller, table_id: str, join_code: str | None = None, address: str | None = None
    ) -> TableSnapshot:
        """The table as ``caller`` sees it: their seat's view when seated, a spectator's otherwise (see the module
        docstring for private tables). A wrong ``join_code`` counts against the caller and ``address``."""
        async with self._codes_tried(caller, join_code, address):
            async with self.uow() as uow:
                record, table = await self._load(uow, table_id)
                await self._times_of(uow, record, table)  # the turn deadline's times (cached)
            self._check_visible(caller, record, table, join_code)
        return self._snapshot(caller, record, table)

    async def find_by_code(self, caller: Caller, join_code: str, address: str | None = None) -> TableSnapshot:
        """The open private table ``join_code`` opens, as ``caller`` sees it (``NotFound`` for no such code, which
        counts against the caller and ``address``)."""
        async with self._codes_tried(caller, join_code, address), self.uow() as uow:
            record = await uow.tables.find_by_join_code(join_code)
            if record is None:
                raise NotFound("no open table has this join code")
            record, table = await self._load(uow, record.id)
            await self._times_of(uow, record, table)
        return self._snapshot(caller, record, table)

    async def list_open(self, preset: str | None = None, limit: int = 0) -> list[TableSnapshot]:
        """Listed tables still seating players (of ``preset`` if given), newest first, as spectators see them."""
        if limit < 0 or limit > MAX_LIST_SIZE:
            raise InvalidArgument("pageSize", f"pageSize must be 0 to {MAX_LIST_SIZE}")
        async with self.uow() as uow:
            records = await uow.tables.list_open_tables(limit or DEFAULT_LIST_SIZE, preset or None)
            loaded = [await self._catch_up(uow, record) for record in records]
        return [TableSnapshot(r.id, r.owner_id, r.created_at, view_for(t, None), None) for r, t in loaded]

    # -- commands ------------------------------------------------------------------------------------------
    async def join(
        self,
        caller: Caller,
        idempotency_key: str,
        table_id: str | None = None,
        join_code: str | None = None,
        seat: int | None = None,
        address: str | None = None,
    ) -> TableSnapshot:
        """Take ``seat`` (default: the first free one) at the table ``table_id``, or at the open private table
        ``join_code`` opens; a private table asks for its code either way. A wrong code (no open table has it, or
        not the private table's) counts against the caller and ``address``."""
        _check_key(idempotency_key)
        if table_id is None and not join_code:
            raise InvalidArgument("tableId", "give a table id or a join code")
        async with self._codes_tried(caller, join_code, address):
            return await self._join(caller, idempotency_key, table_id, join_code, seat)

    async def _join(
        self, caller: Caller, idempotency_key: str, table_id: str | None, join_code: str | None, seat: int | None
    ) -> TableSnapshot:
        if table_id is None:
            assert join_code
            async with self.uow() as uow:
                found = await uow.tables.find_by_join_code(join_code)
            if found is None:
                raise NotFound("no open table has this join code")
            table_id = found.id
        player = caller.player_id

        def command(_record: TableRecord, table: Table) -> Applied:
            return commands.join(table, player, seat, join_code)

        def intent(_before: Table, entry: Entry) -> bool:
            return isinstance(entry, SeatJoined) and entry.player_id == player and seat in (None, entry.seat)

        return await self._mutate(caller, table_id, idempotency_key, None, intent, command, join_code=join_code)

    async def add_bot(
        self, caller: Caller, table_id: str, kind: str, idempotency_key: str, seat: int | None = None
    ) -> TableSnapshot:
        """The creator seats a bot of level ``kind`` at ``seat`` (default: the first free one)."""
        _check_key(idempotency_key)

        def command(record: TableRecord, table: Table) -> Applied:
            self._check_creator(caller, record, "add bots")
            return commands.add_bot(table, kind, seat)

        def intent(_before: Table, entry: Entry) -> bool:
            return isinstance(entry, BotAdded) and entry.kind == kind and seat in (None, entry.seat)

        return await self._mutate(caller, table_id, idempotency_key, None, intent, command)

    async def start(self, caller: Caller, table_id: str, idempotency_key: str) -> TableSnapshot:
        """The creator starts the match once every seat is filled; bots play until a person's move is awaited."""
        _check_key(idempotency_key)

        def command(record: TableRecord, table: Table) -> Applied:
            self._check_creator(caller, record, "start the match")
            return commands.start(table)

        def intent(_before: Table, entry: Entry) -> bool:
            return isinstance(entry, TableStarted)

        return await self._mutate(caller, table_id, idempotency_key, None, intent, command)

    async def act(
        self,
        caller: Caller,
        table_id: str,
        move: Move,
        idempotency_key: str,
        expected_version: int | None = None,
        seat: int | None = None,
    ) -> TableSnapshot:
        """The caller makes ``move`` for their own seat (``seat``, if given, must be it); then every bot whose
        turn comes plays, and the reply is the table when a person's move is awaited again (or the match is over).
        """
        _check_key(idempotency_key)
        player = caller.player_id
        wanted = Reveal(tuple(sorted(move.positions))) if isinstance(move, Reveal) else move

        def command(_record: TableRecord, table: Table) -> Applied:
            return commands.act(table, self._own_seat(caller, table, seat), move)

        def intent(before: Table, entry: Entry) -> bool:
            return (
                isinstance(entry, SeatMoved) and before.seats[entry.seat].player_id == player and entry.move == wanted
            )

        return await self._mutate(caller, table_id, idempotency_key, expected_version, intent, command)

    async def leave(
        self, caller: Caller, table_id: str, idempotency_key: str, seat: int | None = None
    ) -> TableSnapshot:
        """Leave the table: before the start the seat is free again, after it the player resigns. The creator may
        name a bot's ``seat`` to take the bot out before the start."""
        _check_key(idempotency_key)
        player = caller.player_id

        def command(record: TableRecord, table: Table) -> Applied:
            own = table.seat_of(player)
            if seat is not None and seat != own:
                bot_seat = 0 <= seat < len(table.seats) and table.seats[seat].bot is not None
                if not bot_seat or table.status is not TableStatus.SEATING:
                    raise PermissionDenied("a player leaves only their own seat")
                self._check_creator(caller, record, "take a bot out of its seat")
                return commands.leave(table, seat)
            return commands.leave(table, self._own_seat(caller, table, seat))

        def intent(before: Table, entry: Entry) -> bool:
            if not isinstance(entry, SeatLeft | SeatResigned):
                return False
            if seat is not None and entry.seat != seat:
                return False
            return seat is not None or before.seats[entry.seat].player_id == player

        return await self._mutate(caller, table_id, idempotency_key, None, intent, command)

    async def resign(self, caller: Caller, table_id: str, idempotency_key: str) -> TableSnapshot:
        """The caller gives up their seat in the match: a bot plays on for it (or the match ends when nobody else
        at the table is a person)."""
        _check_key(idempotency_key)
        player = caller.player_id

        def command(_record: TableRecord, table: Table) -> Applied:
            return commands.resign(table, self._own_seat(caller, table, None))

        def intent(before: Table, entry: Entry) -> bool:
            return isinstance(entry, SeatResigned) and before.seats[entry.seat].player_id == player

        return await self._mutate(caller, table_id, idempotency_key, None, intent, command)

    # -- quick play -----------------------------------------------------------------------------------------
    async def quick_play(
        self,
        caller: Caller,
        preset: str = DEFAULT_PRESET,
        seats: int | None = None,
        wait_seconds: float = 0.0,
        *,
        idempotency_key: str,
    ) -> TableSnapshot:
        """Seat the caller at an open quick play table of ``preset``, or open one.

        Quick play tables are those this call opens: listed, the preset's own rules and holes, a turn clock of
        :data:`QUICK_PLAY_TURN_SECONDS` (three missed turns in a row: a bot plays for the player until they act),
        bots unpaced, and autofill: ``wait_seconds`` (0 to 600, counted in whole seconds, rounded up) after the
        table opened, greedy bots fill its empty seats and the match starts (with 0, at once, in this call).

        The oldest open quick play table of the preset with a free seat is joined first (any number of seats;
        ``seats``, default :data:`QUICK_PLAY_SEATS`, is for a table this call opens); the person who takes its last
        seat starts the match. Two callers racing for a last seat: one gets it, the other tries the next table.
        A caller already seated at an open quick play table of the preset is answered with it.

        Idempotent by ``idempotency_key``: a retry answers with the table the first call seated the caller at, as it
        stands now (``replayed``); the same key for another preset is ``IdempotencyKeyReused``."""
        _check_key(idempotency_key)
        if not math.isfinite(wait_seconds) or not 0 <= wait_seconds <= MAX_AUTOFILL_SECONDS:
            raise InvalidArgument("wait", f"the wait for people is 0 to {MAX_AUTOFILL_SECONDS} seconds")
        options = TableOptions.build(
            preset,
            seats=QUICK_PLAY_SEATS if seats is None else seats,
            turn_seconds=QUICK_PLAY_TURN_SECONDS,
            autofill_seconds=math.ceil(wait_seconds),
        )
        answered = await self._quick_answer(caller, idempotency_key, options.preset)
        if answered is not None:
            return answered
        async with self.uow() as uow:
            candidates = await uow.tables.list_quick_play_tables(options.preset, QUICK_PLAY_CANDIDATES)
        for record in candidates:
            joined = await self._quick_join(caller, record.id, idempotency_key, options.preset)
            if joined is not None:
                return joined
        return await self._quick_open(caller, options, idempotency_key)

    async def _quick_answer(self, caller: Caller, key: str, preset: str) -> TableSnapshot | None:
        """The answer to a retried quick play: the table the key seated the caller at, as it stands (or None)."""
        async with self.uow() as uow:
            table_id = await uow.tables.find_quick_play(caller.player_id, key)
            if table_id is None:
                return None
            record, table = await self._load(uow, table_id)
            await self._times_of(uow, record, table)
        if record.options.preset != preset:
            raise IdempotencyKeyReused(f"idempotency key {shown(key)} was already used for another quick play")
        return self._snapshot(caller, record, table, replayed=True)

    async def _quick_join(self, caller: Caller, table_id: str, key: str, preset: str) -> TableSnapshot | None:
        """Take the first free seat of the open quick play table ``table_id`` (and start the match when it was the
        last one); ``None`` when the table has no seat for the caller any more."""
        player = caller.player_id

        def command(_record: TableRecord, table: Table) -> Applied:
            joined = commands.join(table, player)
            if any(seat.empty for seat in joined.table.seats):
                return joined
            started = commands.start(joined.table)  # the last seat taken: no need to wait for the autofill
            return Applied(started.table, (*joined.entries, *started.entries))

        def intent(_before: Table, entry: Entry) -> bool:
            return isinstance(entry, SeatJoined) and entry.player_id == player

        async def remember(uow: UnitOfWork, record: TableRecord) -> None:
            await uow.tables.add_quick_play(player, key, record.id, self.clock())

        try:
            return await self._mutate(caller, table_id, key, None, intent, command, also=remember)
        except TableRefused as refused:
            if refused.reason is not TableRefusal.ALREADY_SEATED:
                return None  # full, started or over since it was listed: the next table
        except AlreadyStored:
            pass  # a concurrent retry with this key seated the caller first
        else:  # pragma: no cover - _mutate returns or raises
            return None
        # Already seated here (or by a concurrent retry): remember the key if nobody did, and answer with the table.
        try:
            async with self.uow() as uow:
                await uow.tables.add_quick_play(player, key, table_id, self.clock())
                await uow.commit()
        except AlreadyStored:
            pass
        return await self._quick_answer(caller, key, preset)

    async def _quick_open(self, caller: Caller, options: TableOptions, key: str) -> TableSnapshot:
        """Open a quick play table with the caller at seat 0 (filled and started at once when it does not wait)."""
        player = caller.player_id
        await self.limiter.hit("create", player)
        table_id = str(uuid.uuid5(_TABLE_IDS, f"quick-play\n{player}\n{key}"))
        now = self.clock()
        record = TableRecord(table_id, options, self.seeds(), player, now)
        table = new_table(options, record.seed)
        seated = commands.join(table, player, 0)
        after, entries = seated.table, seated.entries
        if options.autofill_seconds == 0:
            filled = autofill(after)
            bots = immediate_bots(filled.table)
            after, entries = bots.table, (*entries, *filled.entries, *bots.entries)
        try:
            async with self.uow() as uow:
                await uow.tables.add_table(record)
                await uow.tables.add_quick_play(player, key, table_id, now)
                appended, times = await self._append(uow, record, table, after, entries, now, key, player)
                await uow.commit()
        except AlreadyStored:
            # A concurrent retry with this key opened the table (or took the key) first.
            answered = await self._quick_answer(caller, key, options.preset)
            if answered is None:  # pragma: no cover - the key or the table is stored with its row
                raise
            return answered
        record = appended.record
        self._remember(record, after, times)
        self._publish(appended)
        return self._snapshot(caller, record, after)

    # -- work due by time -------------------------------------------------------------------------------------
    async def run_due(self, table_id: str, now: datetime | None = None) -> bool:
        """Do the work due at table ``table_id`` by ``now`` (default: the clock): quick play's autofill, the timeout
        action for people past their turn clock, an away seat's bot turn, one paced bot move (see
        ``golf.app.tables.clocks.due_work``). It is stored through the same append at the version read as every
        mutation, without an idempotency key, and its entries are written at ``now``: when another process (or a
        player) appended first, the table is read again and what is still due is done, so due work is stored
        exactly once. With nothing due, the table's due time is written again and any lease on it ends. Returns
        whether anything was stored."""
        for attempt in range(RACE_ATTEMPTS):
            when = self.clock() if now is None else now
            try:
                async with self.uow() as uow:
                    # Work found on the table as this process last wrote it is appended at that version (the store
                    # refuses it if the table moved on meanwhile: then it is read again); "nothing due" is only
                    # ever decided on a fresh read.
                    cached = self._tables.get(table_id) if attempt == 0 else None
                    record, table = cached if cached is not None else await self._load(uow, table_id)
                    work, times = await self._due(uow, record, table, when)
                    if not work.entries and cached is not None:
                        record, table = await self._load(uow, table_id)
                        work, times = await self._due(uow, record, table, when)
                    if not work.entries:
                        due = None if times is None else due_at(table, times.awaited_since, times.last_at)
                        await uow.tables.release_due(table_id, table.version, due)
                        await uow.commit()
                        return False
                    appended, after_times = await self._append(uow, record, table, work.table, work.entries, when, None)
                    await uow.commit()
            except TableChanged:
                self._tables.pop(table_id, None)  # a player (or another process) got there first: read again
                continue
            self._remember(appended.record, work.table, after_times)
            self._publish(appended)
            return True
        raise Conflict(f"table {shown(table_id)} changed too often while its due work was tried; retry")

    async def _due(
        self, uow: UnitOfWork, record: TableRecord, table: Table, when: datetime
    ) -> tuple[Applied, ClockTimes | None]:
        """The work due at ``table`` by ``when``, and the table's clock times (``None``: it has no clock)."""
        times = await self._times_of(uow, record, table)
        if times is None:  # no clock: only bot moves left over by a request's bot budget
            work = immediate_bots(table) if table.status is TableStatus.PLAYING else Applied(table, ())
        else:
            work = due_work(table, times.awaited_since, times.last_at, when)
        return work, times

    # -- who may --------------------------------------------------------------------------------------------
    @staticmethod
    def _check_creator(caller: Caller, record: TableRecord, what: str) -> None:
        if caller.player_id != record.owner_id:
            raise PermissionDenied(f"only the table's creator may {what}")

    @staticmethod
    def _own_seat(caller: Caller, table: Table, seat: int | None) -> int:
        own = table.seat_of(caller.player_id)
        if own is None:
            raise PermissionDenied("only a seated player acts at a table; spectators watch")
        if seat is not None and seat != own:
            raise PermissionDenied(f"a player acts only for their own seat ({own}), not seat {seat}")
        return own

    @staticmethod
    def _check_visible(caller: Caller, record: TableRecord, table: Table, join_code: str | None) -> None:
        if record.listed or caller.player_id == record.owner_id or table.seat_of(caller.player_id) is not None:
            return
        if join_code is not None and record.options.code_matches(join_code):
            return
        raise NotFound(f"no table {shown(record.id)}")

    @asynccontextmanager
    async def _codes_tried(self, caller: Caller, join_code: str | None, address: str | None) -> AsyncIterator[None]:
        """Around a use of ``join_code``: refused at once while the caller or address is over its wrong-code
        limit; a ``NotFound`` inside (no table this code opens) counts one wrong code."""
        if not join_code:
            yield
            return
        self.codes.check(caller.player_id, address)
        try:
            yield
        except NotFound:
            await self.codes.wrong(caller.player_id, address)  # RateLimited in its place once a window is full
            raise

    # -- one mutation ---------------------------------------------------------------------------------------
    async def _mutate(
        self,
        caller: Caller,
        table_id: str,
        key: str,
        expected_version: int | None,
        intent: Intent,
        command: Command,
        also: Also | None = None,
        join_code: str | None = None,
    ) -> TableSnapshot:
        def visible_command(record: TableRecord, table: Table) -> Applied:
            # A private table is NotFound to whoever may not see it, whatever they ask of it: no refusal (a 403 for
            # acting without a seat, say) tells a stranger that the table exists.
            self._check_visible(caller, record, table, join_code)
            return command(record, table)

        for _ in range(RACE_ATTEMPTS):
            try:
                async with self.uow() as uow:
                    return await self._try(uow, caller, table_id, key, expected_version, intent, visible_command, also)
            except TableChanged as lost:
                self._tables.pop(table_id, None)  # another writer (or replica) got there first
                if lost.key_taken:
                    async with self.uow() as uow:
                        stored = await self._stored(uow, caller, table_id, key, intent)
                    if stored is not None:
                        return stored
                # Run the command again on a fresh read; with an expected version the fresh read refuses it.
        raise Conflict(f"table {shown(table_id)} changed too often while this request was tried; retry")

    async def _try(
        self,
        uow: UnitOfWork,
        caller: Caller,
        table_id: str,
        key: str,
        expected_version: int | None,
        intent: Intent,
        command: Command,
        also: Also | None = None,
    ) -> TableSnapshot:
        applied: Applied | None = None
        loaded = self._tables.get(table_id)
        if loaded is not None and expected_version in (None, loaded[1].version):
            try:
                applied = command(*loaded)
            except AppError:
                applied = None  # decided on a fresh read below
        if applied is None or loaded is None:
            loaded = await self._load(uow, table_id)
            record, table = loaded
            if expected_version is not None and expected_version != table.version:
                stored = await self._stored(uow, caller, table_id, key, intent)
                if stored is not None:
                    return stored
                self._check_visible(caller, record, table, None)
                raise StaleTableVersion(
                    f"the table is at version {table.version}, not {expected_version}",
                    self._snapshot(caller, record, table),
                )
            try:
                applied = command(record, table)
            except AppError as refused:
                stored = await self._stored(uow, caller, table_id, key, intent)
                if stored is not None:
                    return stored
                self._attach_current(refused, caller, record, table)
                raise
        record, table = loaded
        # Bots act as soon as their turn comes, in the same append: no reply ever waits on a bot's turn. (A table
        # that paces its bots leaves them pending: they fall due one by one, see ``run_due``.)
        bots = immediate_bots(applied.table)
        final = bots.table
        now = self.clock()
        entries = (*applied.entries, *bots.entries)
        appended, times = await self._append(uow, record, table, final, entries, now, key, caller.player_id)
        record = appended.record
        if also is not None:
            await also(uow, record)
        await uow.commit()
        self._remember(record, final, times)
        self._publish(appended)
        return self._snapshot(caller, record, final)

    def _attach_current(self, refused: AppError, caller: Caller, record: TableRecord, table: Table) -> None:
        """A refusal at the table carries the table as the caller sees it (the wire's ``Error.table``), unless the
        caller may not see the table."""
        if isinstance(refused, TableRefused | TableMoveRefused):
            try:
                self._check_visible(caller, record, table, None)
            except NotFound:
                return
            refused.current = self._snapshot(caller, record, table)

    async def _append(
        self,
        uow: UnitOfWork,
        record: TableRecord,
        before: Table,
        after: Table,
        entries: tuple[Entry, ...],
        now: datetime,
        key: str | None,
        player_id: str | None = None,
    ) -> tuple[Appended, ClockTimes | None]:
        """Append ``entries`` (they took ``before`` to ``after``) at ``now`` under ``player_id``'s ``key`` (keys are
        each player's own: another's same key is another command), with the table's next due
        time, and tell the observers; the caller commits. The one place a table's due time is decided. Returns
        what was appended (with the record after it) and the clock times after it (for the cache and the
        publishers, once committed)."""
        times = await self._times_after(uow, record, before, after, now)
        if times is not None:
            due = due_at(after, times.awaited_since, times.last_at)
        else:  # no clock: due only when bot moves are left over by the bot budget, and then at once
            due = now if after.status is TableStatus.PLAYING and pending_bot_seat(after) is not None else None
        version = await uow.tables.append(
            record.id, before.version, entries, after.status, now, key, due_at=due, player_id=player_id
        )
        assert version == after.version
        record = replace(record, version=after.version, status=after.status)
        appended = Appended(record, before, after, entries, now)
        await self._observe(uow, appended)
        return appended, times

    async def _times_of(self, uow: UnitOfWork, record: TableRecord, table: Table) -> ClockTimes | None:
        """The clock times of ``table`` (``None`` for a table without a clock): cached, else read from its log."""
        if not record.options.clocked:
            return None
        cached = self._clock_times.get(record.id)
        if cached is not None and cached.version == table.version:
            return cached
        written = await uow.tables.entry_times(record.id, {table.wait_from, table.version} - {0})
        written[0] = record.created_at
        times = ClockTimes(table.version, written[table.wait_from], written[table.version])
        self._clock_times[record.id] = times  # read from committed entries: facts that never change
        return times

    async def _times_after(
        self, uow: UnitOfWork, record: TableRecord, before: Table, after: Table, now: datetime
    ) -> ClockTimes | None:
        """The clock times once ``after`` is appended at ``now`` on ``before``: the latest entry is written now, and
        so is the entry that began the wait, unless the wait began before (then ``before`` tells when)."""
        if not record.options.clocked:
            return None
        if after.wait_from > before.version:
            return ClockTimes(after.version, now, now)
        earlier = await self._times_of(uow, record, before)
        assert earlier is not None
        return ClockTimes(after.version, earlier.awaited_since, now)

    async def _observe(self, uow: UnitOfWork, appended: Appended) -> None:
        for observer in self.observers:
            await observer(uow, appended)

    def _publish(self, appended: Appended) -> None:
        for publish in self.publishers:
            publish(appended)

    async def _stored(
        self, uow: UnitOfWork, caller: Caller, table_id: str, key: str, intent: Intent
    ) -> TableSnapshot | None:
        """The table as the command the caller stored under ``key`` left it, or None when the caller never used the
        key here (another player's same key is theirs, not this one); a key used for another command is
        ``IdempotencyKeyReused``."""
        command = await uow.tables.find_command(table_id, caller.player_id, key)
        if not command:
            return None
        record = await uow.tables.get_table(table_id)
        assert record is not None
        first, last = command[0], command[-1]
        log = await uow.tables.get_entries(table_id, through_seq=first.seq - 1)
        before = replay(record.options, record.seed, (e.entry for e in log))
        if not intent(before, first.entry):
            raise IdempotencyKeyReused(f"idempotency key {shown(key)} was already used for another command")
        after = before
        for logged in command:
            after = apply_entry(after, logged.entry)
        assert after.version == last.seq
        at = replace(record, version=after.version, status=after.status)
        times = None
        if record.options.clocked:  # the clocks as they stood after the command, from the log's own times
            written = {e.seq: e.created_at for e in (*log, *command)} | {0: record.created_at}
            times = ClockTimes(after.version, written[after.wait_from], written[after.version])
        return self._snapshot(caller, at, after, replayed=True, times=times)

    # -- reading and caching ---------------------------------------------------------------------------------
    async def _load(self, uow: UnitOfWork, table_id: str) -> tuple[TableRecord, Table]:
        record = await uow.tables.get_table(table_id)
        if record is None:
            raise NotFound(f"no table {shown(table_id)}")
        return await self._catch_up(uow, record)

    async def _catch_up(self, uow: UnitOfWork, record: TableRecord) -> tuple[TableRecord, Table]:
        """The table at ``record``'s version: the cached table when it is there, the cached table with the entries
        written since (by another process) when it is behind, else a replay of the whole log."""
        cached = self._tables.get(record.id)
        if cached is not None and cached[1].version == record.version:
            table = cached[1]
        elif cached is not None and cached[1].version < record.version:
            table = cached[1]
            for logged in await uow.tables.get_entries(record.id, table.version, record.version):
                table = apply_entry(table, logged.entry)
        else:
            loaded = await uow.tables.load_table(record.id)
            if loaded is None:  # pragma: no cover - a table is never deleted
                raise NotFound(f"no table {shown(record.id)}")
            record, table = loaded
        if table.version != record.version:  # pragma: no cover - a log with a gap fails in the store
            raise Conflict(f"table {shown(record.id)} could not be read at one version; retry")
        self._remember(record, table)
        return record, table

    def _remember(self, record: TableRecord, table: Table, times: ClockTimes | None = None) -> None:
        self._tables[record.id] = (record, table)
        self._tables.move_to_end(record.id)
        if times is not None:
            self._clock_times[record.id] = times
        if len(self._tables) > self.cache_size:
            gone, _ = self._tables.popitem(last=False)
            self._clock_times.pop(gone, None)

    def _snapshot(
        self,
        caller: Caller,
        record: TableRecord,
        table: Table,
        replayed: bool = False,
        times: ClockTimes | None = None,
    ) -> TableSnapshot:
        """``table`` as ``caller`` sees it; its turn deadline from ``times``, else from the cached clock times when
        they are this version's (a table without a clock has none)."""
        seat = table.seat_of(caller.player_id)
        code = record.join_code if caller.player_id == record.owner_id else None
        if times is None:
            cached = self._clock_times.get(record.id)
            times = cached if cached is not None and cached.version == table.version else None
        deadline = None if times is None else turn_deadline(table, times.awaited_since, times.last_at)
        view = view_for(table, seat)
        return TableSnapshot(record.id, record.owner_id, record.created_at, view, seat, code, replayed, deadline)


__all__ = [
    "JOIN_CODE_ALPHABET",
    "QUICK_PLAY_SEATS",
    "QUICK_PLAY_TURN_SECONDS",
    "AppendObserver",
    "Appended",
    "ClockTimes",
    "Publisher",
    "StaleTableVersion",
    "TableService",
    "TableSnapshot",
    "secure_join_code",
]
