"""The live card Golf table use cases over the pure table aggregate (the other modules of ``golf.app.tables``):
creating, finding and listing tables, and the commands at a table. Each command is one mutation through the table
writer (``golf.app.tables.writer``: one append at the version read, under the request's idempotency key); quick play
(``golf.app.tables.quick_play``) and the work due by time (``golf.app.tables.due``) write through it too.

Who may do what (``golf.app.tables.access``):

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

import secrets
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from golf.app.errors import Conflict, IdempotencyKeyReused, InvalidArgument, NotFound, PermissionDenied
from golf.app.idempotency import check_key, id_from_key
from golf.app.identity import Caller
from golf.app.ports import AlreadyStored, Clock, RateLimiter, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.tables import commands
from golf.app.tables.access import check_creator, check_visible, own_seat
from golf.app.tables.code_guard import JoinCodeGuard
from golf.app.tables.commands import Applied
from golf.app.tables.due import run_due
from golf.app.tables.entries import BotAdded, Entry, SeatJoined, SeatLeft, SeatMoved, SeatResigned, TableStarted
from golf.app.tables.options import DEFAULT_MISSED_TURNS, DEFAULT_PRESET, TableOptions
from golf.app.tables.quick_play import QuickPlay
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.records import TableRecord
from golf.app.tables.state import Table, new_table, replay
from golf.app.tables.status import TableStatus
from golf.app.tables.views import view_for
from golf.app.tables.writer import TABLE_IDS, Appended, AppendObserver, ClockTimes, Publisher, TableWriter
from golf.engine.cardgolf.moves import Move, Reveal

DEFAULT_LIST_SIZE = 20
MAX_LIST_SIZE = 100
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


def secure_join_code() -> str:
    """A fresh private table's join code, drawn with ``secrets``."""
    return "".join(secrets.choice(JOIN_CODE_ALPHABET) for _ in range(JOIN_CODE_LENGTH))


def secure_seed() -> str:
    """A fresh match seed, drawn with ``secrets``; never sent to a client."""
    return secrets.token_hex(16)


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
    writer: TableWriter = field(init=False)
    """Every write to a table's log, and the cache of tables (sharing ``observers`` and ``publishers``)."""
    codes: JoinCodeGuard = field(init=False)
    """Wrong join codes per player and address (shared with the table events' watch, which takes codes too)."""
    quick_play: QuickPlay = field(init=False)
    """Seats the caller at an open quick play table, or opens one: ``await tables.quick_play(caller, ...)``."""

    def __post_init__(self) -> None:
        self.writer = TableWriter(self.uow, self.clock, self.cache_size, self.observers, self.publishers)
        self.codes = JoinCodeGuard(self.limiter)
        self.quick_play = QuickPlay(self.writer, self.limiter, self.seeds)

    async def run_due(self, table_id: str, now: datetime | None = None) -> bool:
        """Do the work due at table ``table_id`` by ``now`` (default: the clock); whether anything was stored
        (``golf.app.tables.due.run_due``)."""
        return await run_due(self.writer, table_id, now)

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
        check_key(idempotency_key)
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
        table_id = self.ids() if idempotency_key is None else id_from_key(TABLE_IDS, caller.player_id, idempotency_key)
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
                        appended, times = await self.writer.append(
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
            self.writer.remember(record, final, times)
            if appended is not None:
                self.writer.publish(appended)
            return self.writer.snapshot(caller, record, final)
        raise Conflict("no free join code was found; retry")

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
        return self.writer.snapshot(caller, record, table, replayed=True)

    async def get(
        self, caller: Caller, table_id: str, join_code: str | None = None, address: str | None = None
    ) -> TableSnapshot:
        """The table as ``caller`` sees it: their seat's view when seated, a spectator's otherwise (see the module
        docstring for private tables). A wrong ``join_code`` counts against the caller and ``address``."""
        async with self._codes_tried(caller, join_code, address):
            async with self.uow() as uow:
                record, table = await self.writer.load(uow, table_id)
                await self.writer.times_of(uow, record, table)  # the turn deadline's times (cached)
            check_visible(caller, record, table, join_code)
        return self.writer.snapshot(caller, record, table)

    async def find_by_code(self, caller: Caller, join_code: str, address: str | None = None) -> TableSnapshot:
        """The open private table ``join_code`` opens, as ``caller`` sees it (``NotFound`` for no such code, which
        counts against the caller and ``address``)."""
        async with self._codes_tried(caller, join_code, address), self.uow() as uow:
            record = await uow.tables.find_by_join_code(join_code)
            if record is None:
                raise NotFound("no open table has this join code")
            record, table = await self.writer.load(uow, record.id)
            await self.writer.times_of(uow, record, table)
        return self.writer.snapshot(caller, record, table)

    async def list_open(self, preset: str | None = None, limit: int = 0) -> list[TableSnapshot]:
        """Listed tables still seating players (of ``preset`` if given), newest first, as spectators see them."""
        if limit < 0 or limit > MAX_LIST_SIZE:
            raise InvalidArgument("pageSize", f"pageSize must be 0 to {MAX_LIST_SIZE}")
        async with self.uow() as uow:
            records = await uow.tables.list_open_tables(limit or DEFAULT_LIST_SIZE, preset or None)
            loaded = [await self.writer.catch_up(uow, record) for record in records]
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
        check_key(idempotency_key)
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

        return await self.writer.mutate(caller, table_id, idempotency_key, None, intent, command, join_code=join_code)

    async def add_bot(
        self, caller: Caller, table_id: str, kind: str, idempotency_key: str, seat: int | None = None
    ) -> TableSnapshot:
        """The creator seats a bot of level ``kind`` at ``seat`` (default: the first free one)."""
        check_key(idempotency_key)

        def command(record: TableRecord, table: Table) -> Applied:
            check_creator(caller, record, "add bots")
            return commands.add_bot(table, kind, seat)

        def intent(_before: Table, entry: Entry) -> bool:
            return isinstance(entry, BotAdded) and entry.kind == kind and seat in (None, entry.seat)

        return await self.writer.mutate(caller, table_id, idempotency_key, None, intent, command)

    async def start(self, caller: Caller, table_id: str, idempotency_key: str) -> TableSnapshot:
        """The creator starts the match once every seat is filled; bots play until a person's move is awaited."""
        check_key(idempotency_key)

        def command(record: TableRecord, table: Table) -> Applied:
            check_creator(caller, record, "start the match")
            return commands.start(table)

        def intent(_before: Table, entry: Entry) -> bool:
            return isinstance(entry, TableStarted)

        return await self.writer.mutate(caller, table_id, idempotency_key, None, intent, command)

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
        check_key(idempotency_key)
        player = caller.player_id
        wanted = Reveal(tuple(sorted(move.positions))) if isinstance(move, Reveal) else move

        def command(_record: TableRecord, table: Table) -> Applied:
            return commands.act(table, own_seat(caller, table, seat), move)

        def intent(before: Table, entry: Entry) -> bool:
            return (
                isinstance(entry, SeatMoved) and before.seats[entry.seat].player_id == player and entry.move == wanted
            )

        return await self.writer.mutate(caller, table_id, idempotency_key, expected_version, intent, command)

    async def leave(
        self, caller: Caller, table_id: str, idempotency_key: str, seat: int | None = None
    ) -> TableSnapshot:
        """Leave the table: before the start the seat is free again, after it the player resigns. The creator may
        name a bot's ``seat`` to take the bot out before the start."""
        check_key(idempotency_key)
        player = caller.player_id

        def command(record: TableRecord, table: Table) -> Applied:
            own = table.seat_of(player)
            if seat is not None and seat != own:
                bot_seat = 0 <= seat < len(table.seats) and table.seats[seat].bot is not None
                if not bot_seat or table.status is not TableStatus.SEATING:
                    raise PermissionDenied("a player leaves only their own seat")
                check_creator(caller, record, "take a bot out of its seat")
                return commands.leave(table, seat)
            return commands.leave(table, own_seat(caller, table, seat))

        def intent(before: Table, entry: Entry) -> bool:
            if not isinstance(entry, SeatLeft | SeatResigned):
                return False
            if seat is not None and entry.seat != seat:
                return False
            return seat is not None or before.seats[entry.seat].player_id == player

        return await self.writer.mutate(caller, table_id, idempotency_key, None, intent, command)

    async def resign(self, caller: Caller, table_id: str, idempotency_key: str) -> TableSnapshot:
        """The caller gives up their seat in the match: a bot plays on for it (or the match ends when nobody else
        at the table is a person)."""
        check_key(idempotency_key)
        player = caller.player_id

        def command(_record: TableRecord, table: Table) -> Applied:
            return commands.resign(table, own_seat(caller, table, None))

        def intent(before: Table, entry: Entry) -> bool:
            return isinstance(entry, SeatResigned) and before.seats[entry.seat].player_id == player

        return await self.writer.mutate(caller, table_id, idempotency_key, None, intent, command)

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


__all__ = ["JOIN_CODE_ALPHABET", "JOIN_CODE_LENGTH", "TableService", "secure_join_code", "secure_seed"]
