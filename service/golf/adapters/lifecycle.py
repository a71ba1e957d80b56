"""A server process's life: Ctrl-C and SIGTERM, starting both transports and the background work, and stopping them
gracefully (requests in flight finish) within a bound. ``golf.bootstrap.serve`` builds what runs here."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass
from multiprocessing import resource_tracker
from typing import Any

import grpc
import uvicorn
from grpc_health.v1 import _async as health_async
from grpc_health.v1 import health_pb2

from golf.adapters.health import LIVENESS, Readiness

log = logging.getLogger("golf")

Background = Callable[[], Coroutine[Any, Any, None]]
"""Work a server process runs beside its transports for as long as it serves (a loop that returns only when
cancelled): started once both transports are up, cancelled when the server stops."""

STOP_MARGIN_SECONDS = 15.0
"""How long past its drain and grace periods a stopping server may take before it is ended the hard way."""


class HttpServer(uvicorn.Server):
    """Uvicorn without its own signal handlers: ``run`` stops both transports together."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def stop_signals() -> asyncio.Event:
    """An event set by SIGTERM or Ctrl-C (SIGINT) from now on, for the rest of the process; call it first thing in
    the running event loop, before any thread or process starts (see ``take_interrupts``)."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    take_interrupts(loop, stopping.set)
    for sig in (signal.SIGTERM, signal.SIGINT):  # SIGINT: should it reach a thread that does not block it
        loop.add_signal_handler(sig, stopping.set)
    return stopping


def take_interrupts(loop: asyncio.AbstractEventLoop, on_interrupt: Callable[[], None]) -> None:
    """Ctrl-C (SIGINT) calls ``on_interrupt`` in the event loop, from a thread that waits for it, for the rest of
    the process; no ``KeyboardInterrupt`` is raised anywhere.

    SIGINT is blocked in the calling thread, so in every thread and process started from it after this: the
    solver's worker processes (a terminal sends Ctrl-C to the whole process group, and each worker would die of
    it with a ``KeyboardInterrupt`` traceback; the server stops them itself) and gRPC's and uvicorn's threads.
    Call it before any of them start.
    """
    # multiprocessing's resource tracker unblocks SIGINT in the thread that starts it (CPython 3.11); the solver's
    # pools start it when they are made: start it first, so that it is running and leaves the mask alone.
    resource_tracker.ensure_running()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})

    def wait() -> None:
        while True:
            signal.sigwait({signal.SIGINT})
            try:
                loop.call_soon_threadsafe(on_interrupt)
            except RuntimeError:  # the loop has closed: the server has stopped already
                return

    threading.Thread(target=wait, name="sigint", daemon=True).start()


def exit_if_stuck(seconds: float) -> None:
    """A stop that has not ended ``seconds`` from now ends the process: a stuck thread must not keep a pod (or a
    terminal) waiting for ever. Every acknowledged move is already committed, so nothing is lost."""

    def watch() -> None:
        time.sleep(seconds)
        log.error("the server did not stop within %.0f s; exiting now", seconds)
        logging.shutdown()
        os._exit(1)

    threading.Thread(target=watch, name="stop-watchdog", daemon=True).start()


def _report_stopped(task: asyncio.Task[None]) -> None:
    """Background work ends only when the server stops: any other end is logged, with its error."""
    if not task.cancelled() and task.exception() is not None:
        log.error("background work %s failed", task.get_name(), exc_info=task.exception())
    elif not task.cancelled():
        log.error("background work %s ended while the server was serving", task.get_name())


@dataclass
class Served:
    """What ``run`` starts, serves and stops, with the settings of its stop."""

    grpc_server: grpc.aio.Server
    health: health_async.HealthServicer
    readiness: Readiness
    http: HttpServer
    background: dict[str, Background]
    """The process's background work by name; each ending early is logged (``_report_stopped``)."""
    refill: Background | None
    """The deal pool's refill, if the pool is on."""
    release: Callable[[], Awaitable[None]]
    """Frees what the transports and the background work used (solver processes, rate limiter, database), once
    they have stopped."""
    where: str
    """The log's "serving ..." line: the addresses of both transports."""
    readiness_interval: float
    drain_seconds: float
    grace_seconds: float


async def run(served: Served, stopping: asyncio.Event) -> None:
    """Serve both transports and the background work until ``stopping`` is set (or the HTTP server ends), then
    finish requests in flight and stop."""
    await served.grpc_server.start()
    await served.health.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)
    readiness = served.readiness
    await readiness.check()  # SERVING for "" and the service only once the database and schema are ready
    watch_task = asyncio.create_task(readiness.watch(served.readiness_interval))
    http = served.http
    http_task = asyncio.create_task(http.serve())
    refill_task = asyncio.create_task(served.refill()) if served.refill is not None else None
    background_tasks = [asyncio.create_task(work(), name=name) for name, work in served.background.items()]
    for task in background_tasks:
        task.add_done_callback(_report_stopped)
    log.info("serving %s", served.where)
    stop_wait = asyncio.create_task(stopping.wait())
    await asyncio.wait({http_task, stop_wait}, return_when=asyncio.FIRST_COMPLETED)

    log.info("shutting down: finishing requests in flight")
    exit_if_stuck(served.drain_seconds + served.grace_seconds + STOP_MARGIN_SECONDS)
    await readiness.stop()  # /readyz 503 and gRPC health NOT_SERVING before requests in flight finish
    watch_task.cancel()
    http.should_exit = True
    # gRPC cancels calls it has received but not yet handed to a handler when stop() begins; keep serving a
    # moment so calls sent before the signal are taken up (load balancers see NOT_SERVING meanwhile).
    await asyncio.sleep(min(served.drain_seconds, served.grace_seconds))
    if refill_task is not None:
        refill_task.cancel()
    for task in background_tasks:
        task.cancel()
    await asyncio.gather(served.grpc_server.stop(served.grace_seconds), http_task, return_exceptions=True)
    await asyncio.gather(*background_tasks, return_exceptions=True)  # before the database they use goes
    await served.release()
    stop_wait.cancel()
    log.info("stopped")
