"""The table clock: a background loop that does the work due at live tables by time (turn clocks, paced bots, away
seats, quick play's autofill), in every server process at once.

Each round claims due tables in one short transaction (``claim_due``: a lease per table for ``lease_seconds``; on
PostgreSQL ``FOR UPDATE SKIP LOCKED``, so processes never wait on each other nor claim the same table while a lease
holds), commits, and then runs each claimed table's work with ``TableService.run_due``, each in a transaction of its
own. Nothing is held while waiting: no transaction, no lock, no connection between rounds. Exactly once comes from
the append at the version read, not from the lease (the lease only spares duplicate work): a process whose lease
ran out, or a player who moved meanwhile, makes the other writer lose its append and read again. A process that
dies leaves its leases to run out, and another process claims those tables then. Every append (the work done, or
a player's move) ends the lease and writes the table's next due time.

Wiring (``golf.bootstrap``)::

    clock = TableClock(services.tables, database)          # owner id: host, pid and a random suffix
    background_work["table-clock"] = clock.run             # a loop that returns only when cancelled

or, outside the background work runner, ``clock.start()`` (a task) and ``await clock.stop()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid

from golf.adapters.db.table_store import MAX_LEASE_OWNER
from golf.app.ports import UnitOfWorkFactory
from golf.app.tables.service import TableService
from golf.app.tables.writer import Appended

log = logging.getLogger("golf.tables.clock")

DEFAULT_INTERVAL = 0.5
"""Seconds between rounds when nothing more is due: how late (at most) due work is done."""
DEFAULT_BATCH = 32
"""Tables claimed a round; a full batch is followed by another round at once."""
DEFAULT_LEASE_SECONDS = 10.0
"""How long a claim holds a table: a process that dies delays its tables' due work by at most this."""
DEFAULT_CONCURRENCY = 4
"""Claimed tables run at once: a backlog must not take every pooled connection from the requests."""


def default_owner_id() -> str:
    """A lease owner id for this process: its host, its pid and a random suffix (a restarted process with the same
    pid is another owner)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"[:MAX_LEASE_OWNER]


class TableClock:
    """Claims due tables and runs their due work, every ``interval`` seconds, until stopped.

    ``service`` does the work (``run_due``) and gives the time (its ``clock``); ``database`` makes the units of work
    the claims run in (the same database as the service's). ``owner_id`` names this process in the leases
    (default: :func:`default_owner_id`, at most 64 characters). Each round claims at most ``batch`` tables for
    ``lease_seconds`` and runs at most ``concurrency`` of them at once."""

    def __init__(
        self,
        service: TableService,
        database: UnitOfWorkFactory,
        owner_id: str | None = None,
        *,
        interval: float = DEFAULT_INTERVAL,
        batch: int = DEFAULT_BATCH,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        if interval <= 0 or batch <= 0 or lease_seconds <= 0 or concurrency <= 0:
            raise ValueError("interval, batch, lease_seconds and concurrency must be positive")
        self.service = service
        self.database = database
        self.owner_id = owner_id or default_owner_id()
        if len(self.owner_id) > MAX_LEASE_OWNER:
            raise ValueError(f"a lease owner id has at most {MAX_LEASE_OWNER} characters")
        self.interval = interval
        self.batch = batch
        self.lease_seconds = lease_seconds
        self._running = asyncio.Semaphore(concurrency)
        self._task: asyncio.Task[None] | None = None
        self._poked = asyncio.Event()

    def poke(self, appended: Appended | None = None) -> None:
        """Look for due work now rather than at the next round: a table of this process was just written and may be
        due soon (a paced bot's next move, bot moves left over by a request's bot budget). The signature of a
        ``TableService`` publisher, so it can be one; never blocks."""
        self._poked.set()

    async def claim(self) -> list[str]:
        """Claim the tables due now (at most ``batch``), in one short transaction; their ids."""
        async with self.database() as uow:
            ids = await uow.tables.claim_due(self.service.clock(), self.batch, self.owner_id, self.lease_seconds)
            await uow.commit()
        return ids

    async def tick(self) -> int:
        """One round: claim the due tables and run each one's due work (an error at one table is logged and the
        others go on; its lease runs out and it is tried again). Returns how many tables were claimed."""
        ids = await self.claim()
        if ids:
            await asyncio.gather(*(self._run(table_id) for table_id in ids))
        return len(ids)

    async def _run(self, table_id: str) -> None:
        try:
            async with self._running:
                await self.service.run_due(table_id)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("the due work of table %s failed; it is tried again when its lease runs out", table_id)

    async def _pause(self) -> None:
        """Wait until the earliest due time of an unleased table (as the database says, so work another process
        wrote is seen too), at most ``interval``, or until :meth:`poke`: paced bots move on their delay, not on the
        round's period."""
        async with self.database() as uow:
            now = self.service.clock()
            due = await uow.tables.next_due(now)
        wait = self.interval if due is None else min(self.interval, max(0.0, (due - now).total_seconds()))
        if wait <= 0:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._poked.wait(), wait)

    async def run(self) -> None:
        """Run rounds until cancelled: at once again after a full batch, else when the next work falls due (at most
        ``interval`` later, sooner when poked). An error of a round (the database down, say) is logged and the loop
        goes on after ``interval``."""
        while True:
            claimed = 0
            try:
                self._poked.clear()
                claimed = await self.tick()
                if claimed < self.batch:
                    await self._pause()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the table clock's round failed; trying again in %.1f s", self.interval)
                await asyncio.sleep(self.interval)

    def start(self) -> asyncio.Task[None]:
        """Run :meth:`run` in a task of the running loop (once; a second call returns the same task)."""
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.run(), name="table-clock")
        return self._task

    async def stop(self) -> None:
        """Cancel the loop and wait for it to end (a round in flight is cancelled: its transaction rolls back and
        its leases run out)."""
        task, self._task = self._task, None
        if task is None:
            return
        task.cancel()
        await asyncio.wait({task})  # its end, not its CancelledError: a cancelled stop() itself still raises
