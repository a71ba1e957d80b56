"""Faults between the service and PostgreSQL, for the tests: an asyncio TCP proxy that can refuse, cut or stall
connections, or end them as a terminated backend does, and helpers that make real faults on a test's own database.

The proxy runs in the test's event loop (the in-process driver tests). The machine's PostgreSQL itself is never
touched beyond the databases (and roles) the tests create.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct

import psycopg

from tests.conftest import ADMIN_URL


def fatal_message(code: str = "57P01", text: str = "terminating connection due to administrator command") -> bytes:
    """A PostgreSQL ErrorResponse of severity FATAL, as a backend sends before it closes its connection."""
    fields = b"".join(kind + value.encode() + b"\0" for kind, value in ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", code)))
    body = fields + b"M" + text.encode() + b"\0\0"
    return b"E" + struct.pack("!i", len(body) + 4) + body


class FaultProxy:
    """Forwards 127.0.0.1:``port`` to ``target`` until told to fail.

    ``refuse``: nothing listens on the port any more (new connections are refused) and open ones are closed.
    ``cut``: open connections are closed; new ones are taken. ``stall``: nothing is forwarded any more, either way,
    on open or new connections (a network or server that stopped answering). ``end_idle``: each open connection
    gets a backend's FATAL message and then nothing (the socket stays open, as in the moment between a terminated
    backend's last message and its socket's end). ``heal``: forward again (and listen again on the same port).
    """

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._stalled = False
        self._moving: asyncio.Event = asyncio.Event()
        self._moving.set()
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        pair = (writer, up_writer)
        self._pairs.add(pair)
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.get_running_loop().create_task(self._pump(src, dst, pair))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pump(
        self,
        src: asyncio.StreamReader,
        dst: asyncio.StreamWriter,
        pair: tuple[asyncio.StreamWriter, asyncio.StreamWriter],
    ) -> None:
        try:
            while data := await src.read(65536):
                await self._moving.wait()  # stalled: held here (what a stalled peer would never get)
                if pair not in self._pairs:
                    return
                dst.write(data)
                await dst.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            self._close(pair)

    def _close(self, pair: tuple[asyncio.StreamWriter, asyncio.StreamWriter]) -> None:
        if pair in self._pairs:
            self._pairs.discard(pair)
            for writer in pair:
                with contextlib.suppress(Exception):
                    writer.close()

    def cut(self) -> None:
        for pair in list(self._pairs):
            self._close(pair)

    async def refuse(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
        self.cut()

    def stall(self) -> None:
        self._moving.clear()

    def end_idle(self) -> None:
        """Each open connection gets a FATAL message and then nothing; its upstream backend is closed."""
        for client, upstream in list(self._pairs):
            client.write(fatal_message())
            upstream.close()
            self._pairs.discard((client, upstream))  # the pumps stop forwarding; the client's socket stays open

    async def heal(self) -> None:
        self._moving.set()
        if self._server is None:
            await self.start()  # the same port

    async def close(self) -> None:
        await self.refuse()
        self._moving.set()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


def admin(sql: str, database: str | None = None) -> None:
    """Run ``sql`` as the test server's administrator (in ``database``, else the administrator's own)."""
    url = ADMIN_URL if database is None else f"{ADMIN_URL.rsplit('/', 1)[0]}/{database}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.encode())  # the tests' own statements, on their own databases


def terminate_backends(database: str) -> None:
    """``pg_terminate_backend`` of every connection to ``database`` (the test's own) but the administrator's, waiting
    (up to 5 s) until their backends are gone."""
    admin(
        f"SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = '{database}' "
        "AND pid <> pg_backend_pid()"
    )


def database_of(url: str) -> str:
    """The database name of a test database URL (``golf_test_<hex>``: only those are faulted)."""
    name = url.rsplit("/", 1)[1]
    assert name.startswith(("golf_test_", "golf_e2e_")), f"not a test's own database: {name}"
    return name
