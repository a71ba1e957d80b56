"""Liveness and readiness, shared by HTTP (``/healthz``, ``/readyz``) and the gRPC health service.

* Live: the process serves requests at all. HTTP ``/healthz`` answers 200; the gRPC health service answers
  SERVING for the service name ``liveness``. Neither depends on the database, so a database outage never makes
  Kubernetes restart healthy pods.
* Ready: the database answers and its schema is at the newest migration this code knows (or newer: a
  pre-upgrade migration Job of the next release may already have run; migrations are backward compatible, see
  docs/operations.md). HTTP ``/readyz`` answers 200 or 503; the gRPC health status of ``""`` and
  ``golf.v1.SolitaireService`` follows it (SERVING / NOT_SERVING), re-checked every ``interval`` seconds.
* Stopping: on SIGTERM both say not ready at once, before the requests in flight are finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from alembic.script import ScriptDirectory
from grpc_health.v1 import _async as health_async
from grpc_health.v1 import health_pb2

from golf.adapters.db.migrate import alembic_config
from golf.adapters.db.repository import Database
from golf.app.errors import StorageUnavailable

log = logging.getLogger("golf.health")
LIVENESS = "liveness"
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING


@dataclass(frozen=True)
class Verdict:
    ready: bool
    checks: dict[str, str]
    """Each check and what it found: ``ok`` or why not."""


def schema_revisions(url: str) -> tuple[set[str], set[str]]:
    """The heads of the migration scripts, and every revision they know (read once, from disk)."""
    script = ScriptDirectory.from_config(alembic_config(url))
    return set(script.get_heads()), {rev.revision for rev in script.walk_revisions()}


class Readiness:
    """Checks the database and its schema; keeps the gRPC health status in step."""

    def __init__(
        self,
        database: Database,
        health: health_async.HealthServicer | None,
        services: tuple[str, ...],
        timeout: float = 2.0,
        on_change: Callable[[bool], None] | None = None,
    ) -> None:
        self.database = database
        self.health = health
        self.services = services
        self.timeout = timeout
        self.heads, self.known = schema_revisions(database.url)
        self.stopping = False
        self.last: Verdict | None = None
        self._on_change = on_change
        self._lock = asyncio.Lock()

    async def _current_revisions(self) -> set[str]:
        async with self.database() as uow:
            try:
                rows = await uow.tx.fetchall("SELECT version_num FROM alembic_version")
            except Exception as err:
                if "alembic_version" not in str(err):  # the database failed, not the query
                    raise
                raise LookupError("no alembic_version table: run `golf migrate`") from err
        return {str(r["version_num"]) for r in rows}

    async def _check(self) -> Verdict:
        if self.stopping:
            return Verdict(False, {"shutdown": "stopping"})
        checks: dict[str, str] = {}
        try:
            current = await asyncio.wait_for(self._current_revisions(), self.timeout)
            checks["database"] = "ok"
        except TimeoutError:
            return Verdict(False, {"database": f"no answer in {self.timeout:g} s"})
        except LookupError as err:
            return Verdict(False, {"database": "ok", "migrations": str(err)})
        except StorageUnavailable as err:
            return Verdict(False, {"database": f"unreachable: {err.reason}"[:300]})
        except Exception as err:
            return Verdict(False, {"database": f"{type(err).__name__}: {err}"[:300]})
        if current == self.heads or (current and not current <= self.known):
            # At head, or at a revision this code does not know: a newer release migrated ahead of us.
            checks["migrations"] = "ok"
            return Verdict(True, checks)
        checks["migrations"] = f"at {sorted(current) or 'nothing'}, head is {sorted(self.heads)}: run `golf migrate`"
        return Verdict(False, checks)

    async def check(self) -> Verdict:
        """Check now, record the verdict and bring the gRPC health status in line with it."""
        async with self._lock:
            verdict = await self._check()
            changed = self.last is None or self.last.ready != verdict.ready
            self.last = verdict
            if changed:
                if not verdict.ready and not self.stopping:
                    log.warning("not ready: %s", verdict.checks)
                elif verdict.ready:
                    log.info("ready")
                await self._publish(verdict.ready)
            return verdict

    async def _publish(self, ready: bool) -> None:
        if self._on_change is not None:
            self._on_change(ready)
        if self.health is None or self.stopping:
            return
        for name in self.services:
            await self.health.set(name, SERVING if ready else NOT_SERVING)

    async def watch(self, interval: float) -> None:
        """Re-check every ``interval`` seconds until cancelled."""
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(Exception):
                await self.check()

    async def stop(self) -> None:
        """Not ready from now on: HTTP ``/readyz`` answers 503 and every gRPC health status NOT_SERVING."""
        self.stopping = True
        self.last = Verdict(False, {"shutdown": "stopping"})
        if self._on_change is not None:
            self._on_change(False)
        if self.health is not None:
            await self.health.enter_graceful_shutdown()
