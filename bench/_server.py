"""Server side of ``playmove.py``: databases, the ``golf serve`` subprocess, CPU time from /proc."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_TICK = os.sysconf("SC_CLK_TCK")
RATE_LIMITS = (
    "PLAYER",
    "ADDRESS",
    "SOLVER",
    "CREATE",
    "SIGN_IN",
    "SIGN_UP_NETWORK",
    "SIGN_UP_SERVICE",
    "JOIN_CODE_PLAYER",
    "JOIN_CODE_ADDRESS",
)
BENCH_TOKEN_KEY = "golf-bench-token-key-not-a-secret-0123456789abcd"
"""GOLF_TOKEN_KEY of a server started on PostgreSQL (which requires one; with SQLite the server keeps a generated
key beside the database file). 48 characters; the bench's databases are thrown away, so it need not be secret."""


def bench_env(db_url: str) -> dict[str, str]:
    """Settings every server the bench starts gets unless ``--server-env`` says otherwise: rate limits off (32
    clients on 127.0.0.1 are one address, far beyond its default limit), and a token key with PostgreSQL."""
    env = {f"GOLF_RATE_LIMIT_{name}": "" for name in RATE_LIMITS}
    if not db_url.startswith("sqlite"):
        env["GOLF_TOKEN_KEY"] = BENCH_TOKEN_KEY
    return env


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` (all its threads), from /proc/<pid>/stat."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        stat = f.read()
    fields = stat[stat.rindex(b")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def machine_busy_seconds() -> float:
    """CPU seconds all cores of the machine spent busy (user, nice, system, irq, softirq), from /proc/stat."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = (int(x) for x in f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / _TICK


def fsync_ms(directory: str, count: int = 30) -> float:
    """Median time of a 4 KiB write + fsync in ``directory``: what a durable SQLite commit waits for at least."""
    fd, path = tempfile.mkstemp(dir=directory, prefix="golf_bench_fsync_")
    times = []
    try:
        for _ in range(count):
            os.write(fd, b"x" * 4096)
            began = time.perf_counter()
            os.fsync(fd)
            times.append(time.perf_counter() - began)
    finally:
        os.close(fd)
        os.unlink(path)
    times.sort()
    return 1000 * times[len(times) // 2]


def backend_pids(dbname: str) -> list[int]:
    """PostgreSQL backend processes serving ``dbname`` (their titles read 'postgres: user db host ...')."""
    needle = f" {dbname} ".encode()
    pids = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                title = f.read()
        except OSError:
            continue
        if title.startswith(b"postgres: ") and needle in title:
            pids.append(int(entry.name))
    return pids


def total_cpu(pids: list[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += cpu_seconds(pid)
    return total


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening_pid(port: int) -> int | None:
    """The pid of the process with a socket listening on TCP ``port``, if this user can see it."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(parts[9])
    if not inodes:
        return None
    targets = {f"socket:[{i}]" for i in inodes}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            for fd in os.scandir(f"/proc/{entry.name}/fd"):
                with contextlib.suppress(OSError):
                    if os.readlink(fd.path) in targets:
                        return int(entry.name)
    return None


@contextlib.contextmanager
def database(kind: str, pg_url: str) -> Iterator[tuple[str, str]]:
    """A fresh database of ``kind``: yields (plain URL for GOLF_DATABASE_URL, PostgreSQL name or '')."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory(prefix="golf_bench_") as tmp:
            yield f"sqlite:///{tmp}/bench.db", ""
        return
    import psycopg

    name = f"golf_bench_{secrets.token_hex(4)}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        base = pg_url.rsplit("/", 1)[0]
        yield f"{base}/{name}", name
    finally:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def source_tree(rev: str | None) -> Iterator[Path]:
    """The tree the server runs from: this work tree, or ``rev`` exported by ``git archive`` to a temp dir.

    The generated protobuf modules are not in git: an exported tree gets them generated from its own protos, and
    the work tree's compiled solver search when its source is the same.
    """
    if rev is None:
        yield ROOT
        return
    with tempfile.TemporaryDirectory(prefix="golf_bench_src_") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "service", "migrations", "proto"],
            check=True,
            capture_output=True,
        ).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        # As the Makefile generates them: the contract's files, then buf.validate (from proto/vendor, which also
        # holds google.api, whose Python code comes from googleapis-common-protos), then the descriptor set.
        root = Path(tmp) / "proto"
        protos = sorted(str(p.relative_to(tmp)) for p in (root / "golf").rglob("*.proto"))
        gen = [sys.executable, "-m", "grpc_tools.protoc", "-Iproto/vendor"]
        out = ["--python_out=service", "--grpc_python_out=service"]
        subprocess.run([*gen, "-Iproto", *out, *protos], cwd=tmp, check=True)
        if (root / "vendor" / "buf" / "validate" / "validate.proto").exists():
            subprocess.run([*gen, "--python_out=service", "buf/validate/validate.proto"], cwd=tmp, check=True)
        subprocess.run(
            [*gen, "-Iproto", "--include_imports", "--include_source_info",
             "--descriptor_set_out=service/golf/v1/contract.binpb", *protos],
            cwd=tmp,
            check=True,
        )  # fmt: skip
        _copy_compiled_search(Path(tmp))
        yield Path(tmp)


def _copy_compiled_search(tree: Path) -> None:
    """The work tree's compiled solver search into an exported ``tree`` whose ``_search.pyx`` is the same file, so
    that its games' verdicts do not load the machine with the pure Python search (the compiler is not installed)."""
    pyx = Path("service/golf/engine/solitaire/_search.pyx")
    if not (tree / pyx).exists() or (tree / pyx).read_bytes() != (ROOT / pyx).read_bytes():
        return
    for built in (ROOT / pyx.parent).glob("_search.*.so"):
        shutil.copy2(built, tree / pyx.parent / built.name)


@dataclass
class Server:
    process: subprocess.Popen[bytes]
    http_port: int
    grpc_port: int
    log: Path

    @property
    def pid(self) -> int:
        return self.process.pid


def _wait_listening(server: Server, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    pending = {server.http_port, server.grpc_port}
    while pending:
        if server.process.poll() is not None:
            tail = server.log.read_text(errors="replace").splitlines()[-15:]
            raise RuntimeError(f"the server exited ({server.process.returncode}):\n" + "\n".join(tail))
        if time.monotonic() > deadline:
            raise RuntimeError(f"the server did not listen within {timeout:.0f} s; see {server.log}")
        for port in list(pending):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                pending.discard(port)
        time.sleep(0.1)


@contextlib.contextmanager
def golf_server(
    db_url: str, log_level: str, log_dir: Path, src: Path = ROOT, extra_env: dict[str, str] | None = None
) -> Iterator[Server]:
    """Migrate ``db_url``, then run ``golf serve`` from ``src`` on 127.0.0.1 with free ports until the block ends.

    The server gets ``bench_env`` (no rate limits; a token key with PostgreSQL); ``extra_env`` overrides it."""
    env = {**os.environ, "GOLF_DATABASE_URL": db_url, "PYTHONPATH": str(src / "service"), **bench_env(db_url)}
    golf = [sys.executable, "-m", "golf"]
    subprocess.run([*golf, "migrate"], env=env, cwd=src, check=True, capture_output=True)
    http_port, grpc_port = free_port(), free_port()
    env |= {
        "GOLF_HOST": "127.0.0.1",
        "GOLF_HTTP_PORT": str(http_port),
        "GOLF_GRPC_PORT": str(grpc_port),
        "GOLF_LOG_LEVEL": log_level,
        "GOLF_POOL_SIZE": "0",
    }
    env |= extra_env or {}
    log = log_dir / f"server-{http_port}.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([*golf, "serve"], env=env, cwd=src, stdout=out, stderr=subprocess.STDOUT)
    server = Server(process, http_port, grpc_port, log)
    try:
        _wait_listening(server, 60)
        yield server
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()  # only the process this script started
                process.wait()
