"""Group commit on PostgreSQL: statements that are atomic on their own, sent at about the same time by concurrent
requests, stored by one statement and one commit.

A move outside any transaction is one statement (its log entry and its game row). At 32 clients most of a move's
database cost is the round trip itself: the driver's work per statement, a write and a read on the socket, a wake of
the event loop and a commit (a WAL flush) on the server. Here each kind of statement has one writer: a request hands
its arguments over and waits; the writer sends what has gathered as one statement, in one round trip, and hands each
request its own row. While a batch is on its way the next gathers, so batches grow with the load by themselves and a
lone request waits for nobody.

Under load (a statement of the last second stored more than one entry) the writer also lets the next batch gather,
as PostgreSQL's ``commit_delay`` does with ``commit_siblings``: it sends once as many entries wait as the largest
statement of about the last second stored (as many requests as came together), once ``delay / QUIET_STEPS`` passes
with no new entry, or ``delay`` after it began to wait. Clients that wait for their moves stop sending, so the wait
ends soon after the last of them came: a few milliseconds more on a move under load, for several times fewer
statements (each costs the server about as much CPU as the rest of a move). Under light load moves seldom share a
statement, and a lone move never waits.

Each request still gets its answer only once its row is committed, and a row a batch did not store comes back as
None (its condition failed: the game moved on), as the single statement gives. A batch is one statement, so it is
stored whole or not at all: one refused for an entry's values (a unique key taken by a retried move racing its first
try, a value out of range) or rolled back by the server (a deadlock with another replica's batch, which may lock the
same rows in another order) is sent again entry by entry with the single statement, which gives each request its own
outcome. A request cancelled before its batch is sent is left out of it; one cancelled later cannot stop the batch,
as a single statement already sent cannot be stopped either (the stored move is then found by its idempotency key on
a retry).

The writer has a connection of its own, besides the pool's: it never waits for a connection that a unit of work holds
(a unit of work that sends only a grouped statement takes none of the pool). One the server ended while it was idle
(``ended_while_idle``) is replaced and the batch sent on the new one; any other failure of the connection fails the
batch's requests with what ``failure`` makes of it (``StorageUnavailable``), and the next batch connects anew.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg

from golf.app.errors import StorageUnavailable

MAX_BATCH = 64
"""The most entries one statement stores; more wait for the next batch."""
BUSY_SECONDS = 1.0
"""How long after a statement that stored several entries the writer still lets each batch gather."""
QUIET_STEPS = 8
"""A batch is sent once ``delay / QUIET_STEPS`` passes without a new entry."""
_REFUSED = (asyncpg.IntegrityConstraintViolationError, asyncpg.DataError)
"""What an entry's own values can make the statement refuse (a unique key taken, a value out of range, the division
by zero of a failed condition): a batch refused so is sent again entry by entry, and only the entry at fault gets
the error."""
_ALONE = (*_REFUSED, asyncpg.TransactionRollbackError)
"""A batch that fails so is sent again entry by entry: besides ``_REFUSED``, a deadlock or serialization failure,
which one row alone does not meet again."""


def ended_while_idle(err: BaseException) -> bool:
    """Whether asyncpg refused to start a statement, so sent nothing, on a connection the server ended while it sat
    idle (``pg_terminate_backend``, a restart): the server's FATAL message came before the socket closed, and asyncpg
    takes it for an operation still in progress. The statement may go to another connection."""
    return isinstance(err, asyncpg.InternalClientError) and str(err).startswith("cannot switch to state")


@dataclass(frozen=True)
class Grouped:
    """A statement that is atomic by itself, in the two forms the writer sends.

    ``one``: for one entry, with ``?`` placeholders; a row, or none (or a division by zero: it aborted itself) when
    its condition failed. ``many``: the same for several entries, with ``$n`` placeholders: ``$n`` is the array of
    the n-th argument of ``one`` over the entries, in order; it returns a row for each entry it stored, whose column
    ``entry`` is the entry's 1-based position (``unnest(...) WITH ORDINALITY``)."""

    one: str
    many: str


@dataclass(eq=False)
class _Entry:
    args: tuple[Any, ...]
    answer: asyncio.Future[Any]


Failure = Callable[[BaseException, "asyncpg.Connection[Any] | None"], BaseException]
"""The exception a request gets for a statement's failure (``StorageUnavailable`` for a lost connection)."""


class GroupCommit:
    """One writer per ``Grouped`` statement, on one connection of its own (see the module's text)."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[asyncpg.Connection[Any]]],
        numbered: Callable[[str], str],
        failure: Failure,
        delay: float = 0.0,
    ) -> None:
        self._connect = connect
        self.delay = delay
        """The most seconds the writer lets a batch gather under load (see the module's text); 0: never."""
        self._arrived = 0
        """Entries handed over since the writer began: one that did not grow during a quiet step ends the gathering."""
        self._shared_at = float("-inf")
        """``loop.time()`` of the last statement that stored more than one entry (load: batches gather)."""
        self._peak = 0
        """The most entries a statement stored in about the last second: as many requests as came together."""
        self._peak_at = float("-inf")
        """``loop.time()`` when ``_peak`` was set; older than ``BUSY_SECONDS``, the next statement sets it anew."""
        self._numbered = numbered
        self._failure = failure
        self._conn: asyncpg.Connection[Any] | None = None
        self._waiting: dict[Grouped, list[_Entry]] = {}
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._closed = False
        self.batches = 0
        """Statements sent (a batch retried entry by entry counts once), for tests and the bench."""
        self.entries = 0
        """Entries stored or refused through those statements."""

    async def fetchone(self, statement: Grouped, args: Sequence[Any]) -> Any:
        """``statement``'s row for ``args`` once it is committed, or None; raises what the single statement would."""
        if self._closed:
            raise _closing()
        entry = _Entry(tuple(args), asyncio.get_running_loop().create_future())
        self._waiting.setdefault(statement, []).append(entry)
        self._arrived += 1
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write())
        self._wake.set()
        return await entry.answer

    async def close(self) -> None:
        """Stop the writer (entries still waiting are failed) and close its connection."""
        self._closed = True
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.cancel()
            await asyncio.gather(writer, return_exceptions=True)
        self._fail_waiting()
        if self._conn is not None:
            conn, self._conn = self._conn, None
            try:
                await conn.close(timeout=5)
            except Exception:
                conn.terminate()

    async def _write(self) -> None:
        try:
            while True:
                await self._wake.wait()
                if self.delay and asyncio.get_running_loop().time() - self._shared_at < BUSY_SECONDS:
                    await self._gather()
                self._wake.clear()
                while self._waiting:
                    statement, entries = next(iter(self._waiting.items()))
                    batch, rest = entries[:MAX_BATCH], entries[MAX_BATCH:]
                    if rest:
                        self._waiting[statement] = rest
                    else:
                        del self._waiting[statement]
                    batch = [e for e in batch if not e.answer.done()]  # cancelled while waiting: not sent
                    if batch:
                        await self._send(statement, batch)
        finally:
            if self._closed:
                self._fail_waiting()

    async def _gather(self) -> None:
        """Wait while entries keep coming: until as many wait as came together lately, a quiet step passes without a
        new one, or ``delay`` ends."""
        loop = asyncio.get_running_loop()
        end = loop.time() + self.delay
        step = self.delay / QUIET_STEPS
        seen = self._arrived
        enough = min(max(self._peak, 2), MAX_BATCH)
        while (left := end - loop.time()) > 0 and sum(map(len, self._waiting.values())) < enough:
            await asyncio.sleep(min(step, left))
            if self._arrived == seen:
                return
            seen = self._arrived

    async def _send(self, statement: Grouped, batch: list[_Entry], again: bool = False) -> None:
        if not again:
            self.batches += 1
            self.entries += len(batch)
            now = asyncio.get_running_loop().time()
            if len(batch) > 1:
                self._shared_at = now
            if len(batch) >= self._peak or now - self._peak_at > BUSY_SECONDS:
                self._peak, self._peak_at = len(batch), now
        try:
            conn = await self._connection()
            if len(batch) == 1:
                await self._one(conn, statement, batch[0])
                return
            try:
                rows = await conn.fetch(statement.many, *map(list, zip(*(e.args for e in batch), strict=True)))
            except _ALONE:
                for entry in batch:  # nothing of the batch was stored: each entry on its own, for its own outcome
                    await self._one(conn, statement, entry)
                return
        except asyncio.CancelledError:
            self._drop_connection()
            for entry in batch:
                _answer(entry, exception=_closing())
            raise
        except Exception as err:
            if not again and ended_while_idle(err):
                self._drop_connection()
                # Nothing was sent of the statement that failed, nor of those after it: they go on a new connection.
                await self._send(statement, [e for e in batch if not e.answer.done()], again=True)
                return
            failure = self._failure(err, self._conn)
            self._drop_connection()  # whatever it was, the connection's state is not known: the next batch connects
            for entry in batch:
                _answer(entry, exception=failure)
            return
        stored = {row["entry"]: row for row in rows}
        for position, entry in enumerate(batch, 1):
            _answer(entry, stored.get(position))

    async def _one(self, conn: asyncpg.Connection[Any], statement: Grouped, entry: _Entry) -> None:
        try:
            row = await conn.fetchrow(self._numbered(statement.one), *entry.args)
        except asyncpg.DivisionByZeroError:
            row = None
        except _REFUSED as err:
            _answer(entry, exception=self._failure(err, conn))
            return
        _answer(entry, row)

    async def _connection(self) -> asyncpg.Connection[Any]:
        if self._conn is None or self._conn.is_closed():
            self._conn = await self._connect()
        return self._conn

    def _drop_connection(self) -> None:
        """A statement failed or was interrupted: the connection's state is not known, so it is closed (the server
        rolls back whatever it held)."""
        if self._conn is not None:
            self._conn.terminate()
            self._conn = None

    def _fail_waiting(self) -> None:
        waiting, self._waiting = self._waiting, {}
        for entries in waiting.values():
            for entry in entries:
                _answer(entry, exception=_closing())


def _closing() -> StorageUnavailable:
    return StorageUnavailable("the server is closing its database connections")


def _answer(entry: _Entry, row: Any = None, *, exception: BaseException | None = None) -> None:
    if entry.answer.done():  # its request was cancelled
        return
    if exception is None:
        entry.answer.set_result(row)
    else:
        entry.answer.set_exception(exception)
