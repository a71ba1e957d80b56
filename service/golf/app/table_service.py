"""Live card Golf tables: the use cases over the pure table aggregate (``golf.app.tables``) and its store.

Every mutation is one unit of work: read the table (from this process's cache, else the store), run the pure
command, let every bot whose turn has come play at once (``play_bots``), and append the command's entries and the
bots' entries in ONE append at the version read, under the request's idempotency key. Of two writers at one
version the store keeps exactly one; the loser reads again and runs its command again, unless the client named
the version it saw (``expected_version``): then it is told its view is stale. A retry with a used key answers with
the table as that command left it (``replayed``), without writing anything.

Who may do what:

| command | who |
| --- | --- |
| create | any signed-in player (rate limited as ``create``); sits at seat 0 unless told not to |
| join | any player; a private table asks for its join code |
| add a bot, start | the table's creator |
| act, resign | the seated player, for their own seat only |
| leave | the seated player (before the start it frees the seat, after it resigns); the creator may also take a bot
  out of a seat before the start |
| get | anyone for a listed table (a spectator's view unless seated); a private table only its creator, its seated
  players, or someone giving its join code; others are told it does not exist |
"""

from __future__ import annotations

import secrets
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from golf.app.errors import AppError, Conflict, IdempotencyKeyReused, InvalidArgument, NotFound, PermissionDenied
from golf.app.identity import Caller
from golf.app.ports import AlreadyStored, Clock, RateLimiter, UnitOfWork, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.tables import commands
from golf.app.tables.bots import play_bots
from golf.app.tables.commands import Applied
from golf.app.tables.entries import BotAdded, Entry, SeatJoined, SeatLeft, SeatMoved, SeatResigned, TableStarted
from golf.app.tables.errors import TableChanged
from golf.app.tables.options import DEFAULT_PRESET, TableOptions
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
JOIN_CODE_LENGTH = 6
"""23^6 is about 148 million codes: guessing one of the few open private tables is hopeless at any rate limit."""
_TABLE_IDS = uuid.UUID("6f1c3a52-5d8e-4f0b-9a57-2b7c9e1d4a60")
"""The namespace of table ids made from (creator, idempotency key), so a retried create finds its table."""


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

    def __init__(self, message: str, current: TableView) -> None:
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
Publisher = Callable[[str, int], None]
"""Told after a commit that table ``id`` reached version ``n`` (live events; must not block or raise)."""

Intent = Callable[[Table, Entry], bool]
"""Whether a command's stored first entry (on the table as it was before it) is what a retried request asks."""
Command = Callable[[TableRecord, Table], Applied]
"""A table command bound to its request: raises an ``AppError`` (refusal) or returns the entries to store."""


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
    """Told after every commit which version a table reached."""
    # The tables this process last read or wrote. A mutation goes ahead on a cached table without reading it: if
    # another writer (or replica) moved the table on, the store refuses the append at the stale version and the
    # command runs again on a fresh read. Refusals are only ever decided on a fresh read.
    _tables: OrderedDict[str, tuple[TableRecord, Table]] = field(default_factory=OrderedDict)

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
    ) -> TableSnapshot:
        """Open a table of ``preset`` with the rule ``rules`` changed, ``seats`` seats and ``holes`` holes; listed,
        or ``private`` behind a fresh join code. The creator sits at seat 0 unless ``take_seat`` is false.

        With ``idempotency_key`` the table's id is made from the creator and the key, so a retry finds the table
        the first request made (``replayed``); the same key with other options is ``IdempotencyKeyReused``."""
        if idempotency_key is not None:
            _check_key(idempotency_key)
        plain = TableOptions.build(preset, rules, seats, holes)  # refuses bad options before counting the call
        await self.limiter.hit("create", caller.player_id)
        table_id = self.ids() if idempotency_key is None else self._table_id(caller, idempotency_key)
        for _ in range(CODE_ATTEMPTS):
            options = replace(plain, join_code=self.join_codes()) if private else plain
            options.validate()
            now = self.clock()
            record = TableRecord(table_id, options, self.seeds(), caller.player_id, now)
            table = new_table(options, record.seed)
            applied = commands.join(table, caller.player_id, 0, options.join_code) if take_seat else None
            try:
                async with self.uow() as uow:
                    await uow.tables.add_table(record)
                    if applied is not None:
                        await uow.tables.append(
                            table_id, 0, applied.entries, applied.table.status, now, idempotency_key
                        )
                        done = replace(record, version=applied.table.version, status=applied.table.status)
                        await self._observe(uow, Appended(done, table, applied.table, applied.entries, now))
                    await uow.commit()
            except AlreadyStored as taken:
                if "join_code" in taken.constraint:
                    continue  # another open table holds the code: draw another
                if idempotency_key is None:
                    raise
                return await self._created(caller, table_id, plain, take_seat)
            final = applied.table if applied is not None else table
            record = replace(record, version=final.version, status=final.status)
            self._remember(record, final)
            self._publish(record.id, final.version)
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

    async def get(self, caller: Caller, table_id: str, join_code: str | None = None) -> TableSnapshot:
        """The table as ``caller`` sees it: their seat's view when seated, a spectator's otherwise (see the module
        docstring for private tables)."""
        async with self.uow() as uow:
            record, table = await self._load(uow, table_id)
        self._check_visible(caller, record, table, join_code)
        return self._snapshot(caller, record, table)

    async def find_by_code(self, caller: Caller, join_code: str) -> TableSnapshot:
        """The open private table ``join_code`` opens, as ``caller`` sees it (``NotFound`` for no such code)."""
        async with self.uow() as uow:
            record = await uow.tables.find_by_join_code(join_code)
            if record is None:
                raise NotFound("no open table has this join code")
            record, table = await self._load(uow, record.id)
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
    ) -> TableSnapshot:
        """Take ``seat`` (default: the first free one) at the table ``table_id``, or at the open private table
        ``join_code`` opens; a private table asks for its code either way."""
        _check_key(idempotency_key)
        if table_id is None:
            if not join_code:
                raise InvalidArgument("tableId", "give a table id or a join code")
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

        return await self._mutate(caller, table_id, idempotency_key, None, intent, command)

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

    # -- one mutation ---------------------------------------------------------------------------------------
    async def _mutate(
        self,
        caller: Caller,
        table_id: str,
        key: str,
        expected_version: int | None,
        intent: Intent,
        command: Command,
    ) -> TableSnapshot:
        for _ in range(RACE_ATTEMPTS):
            try:
                async with self.uow() as uow:
                    return await self._try(uow, caller, table_id, key, expected_version, intent, command)
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
                    self._snapshot(caller, record, table).view,
                )
            try:
                applied = command(record, table)
            except AppError:
                stored = await self._stored(uow, caller, table_id, key, intent)
                if stored is not None:
                    return stored
                raise
        record, table = loaded
        # Bots act as soon as their turn comes, in the same append: no reply ever waits on a bot's turn.
        bots = play_bots(applied.table)
        final = bots.table
        now = self.clock()
        entries = (*applied.entries, *bots.entries)
        version = await uow.tables.append(table_id, table.version, entries, final.status, now, key)
        assert version == final.version
        record = replace(record, version=final.version, status=final.status)
        await self._observe(uow, Appended(record, table, final, entries, now))
        await uow.commit()
        self._remember(record, final)
        self._publish(table_id, final.version)
        return self._snapshot(caller, record, final)

    async def _observe(self, uow: UnitOfWork, appended: Appended) -> None:
        for observer in self.observers:
            await observer(uow, appended)

    def _publish(self, table_id: str, version: int) -> None:
        for publish in self.publishers:
            publish(table_id, version)

    async def _stored(
        self, uow: UnitOfWork, caller: Caller, table_id: str, key: str, intent: Intent
    ) -> TableSnapshot | None:
        """The table as the command stored under ``key`` left it, or None when the key is unused; a key used for
        another command is ``IdempotencyKeyReused``."""
        command = await uow.tables.find_command(table_id, key)
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
        return self._snapshot(caller, at, after, replayed=True)

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

    def _remember(self, record: TableRecord, table: Table) -> None:
        self._tables[record.id] = (record, table)
        self._tables.move_to_end(record.id)
        if len(self._tables) > self.cache_size:
            self._tables.popitem(last=False)

    @staticmethod
    def _snapshot(caller: Caller, record: TableRecord, table: Table, replayed: bool = False) -> TableSnapshot:
        seat = table.seat_of(caller.player_id)
        code = record.join_code if caller.player_id == record.owner_id else None
        return TableSnapshot(record.id, record.owner_id, record.created_at, view_for(table, seat), seat, code, replayed)


__all__ = [
    "JOIN_CODE_ALPHABET",
    "AppendObserver",
    "Appended",
    "Publisher",
    "StaleTableVersion",
    "TableService",
    "TableSnapshot",
    "secure_join_code",
]
