"""PlayMove throughput and latency over REST and gRPC, on SQLite and PostgreSQL, with the server's CPU per move.

For each (transport, database) the script migrates a fresh database, starts ``golf serve`` on 127.0.0.1, runs
``--clients`` concurrent clients in ``--procs`` load-generator processes for a warm-up and then a measured
window, and reads the server's CPU time (utime + stime from /proc) at both ends of the window. Every client
signs in as its own guest before the warm-up and sends its token with each call (``auth`` column: ``guest``;
``none`` when the server has no sign-in, as older revisions). Only validated, stored moves count (see
``_loadgen.py``). The server started here runs without rate limits (``GOLF_RATE_LIMIT_*`` empty; give them with
``--server-env`` to measure them). Give ``--url``/``--grpc`` to measure a server that is already running (on this
machine only) instead. See bench/README.md.

    .venv/bin/python bench/playmove.py                          # both transports, both databases, 10 s each
    .venv/bin/python bench/playmove.py --transport grpc --db sqlite --runs 3 --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import urlopen

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loadgen import AUTH_FAILED, AUTH_GUEST, AUTH_NONE, LoadConfig, WorkerResult, worker_main
from _pyspy_report import breakdown, load
from _server import (
    LOCAL_HOSTS,
    backend_pids,
    cpu_seconds,
    database,
    fsync_ms,
    golf_server,
    listening_pid,
    machine_busy_seconds,
    source_tree,
)

MAX_CLIENTS = 1024
MAX_SECONDS = 600.0
PY_SPY_RATE = 200
DEFAULT_PG_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


@dataclass
class Target:
    """Where the load goes: the server's address, its pid for CPU time, and its PostgreSQL database if any."""

    host: str
    http_port: int
    grpc_port: int
    pid: int | None
    pg_name: str = ""


@dataclass
class Row:
    transport: str
    db: str
    run: str
    auth: str
    """``guest``: every client signed in as its own guest and sent its token; ``none``: the server has no sign-in."""
    clients: int
    moves: int
    seconds: float
    moves_per_s: float
    p50_ms: float
    p99_ms: float
    server_cpu_ms_per_move: float | None
    moves_per_server_core_s: float | None
    server_cpu_util: float | None
    db_cpu_ms_per_move: float | None
    client_cpu_ms_per_move: float | None
    other_cores: float | None
    """Cores kept busy during the window by everything else on the machine: a noise gauge."""
    fsync_ms: float | None
    """Median 4 KiB write + fsync in the temp dir just before the run: SQLite with synchronous=FULL commits
    one move per fsync, on the event loop."""
    games: int
    errors: dict[str, int] = field(default_factory=dict)
    moves_per_statement: float | None = None
    """Moves per statement the server's group commit sent in the window (PostgreSQL; from ``/metrics``)."""


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, max(0, round(q * len(sorted_values) + 0.5) - 1))]


def _safe_cpu(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        return cpu_seconds(pid)
    except OSError:
        return None


def _cpu_map(pids: list[int]) -> dict[int, float]:
    out = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            out[pid] = cpu_seconds(pid)
    return out


def measure(args: argparse.Namespace, transport: str, db: str, target: Target, run: str) -> Row:
    """One warm-up plus one measured window of ``args.clients`` clients against ``target``."""
    disk = fsync_ms(tempfile.gettempdir())
    ctx = mp.get_context("spawn")
    procs = max(1, min(args.procs, args.clients))
    times = ctx.RawArray("d", 2)
    counts = ctx.RawArray("q", procs)
    auth = ctx.RawArray("b", procs)
    go = ctx.Event()
    results: Any = ctx.Queue()
    readies = []
    workers = []
    for i in range(procs):
        share = args.clients // procs + (1 if i < args.clients % procs else 0)
        cfg = LoadConfig(
            transport, target.host, target.http_port, target.grpc_port, share, i * 100_000, args.grpc_channels
        )
        ready = ctx.Event()
        p = ctx.Process(target=worker_main, args=(cfg, i, times, counts, auth, ready, go, results), daemon=True)
        p.start()
        workers.append(p)
        readies.append(ready)
    try:
        for ready in readies:  # set once a worker's clients have signed in (or found no sign-in)
            if not ready.wait(60):
                raise RuntimeError("a load-generator process did not start")
        if AUTH_FAILED in auth[:]:
            go.set()  # times[1] is 0: the workers stop at once and report why signing in failed
            outs = [results.get(timeout=60)[1] for _ in workers]
            why = "; ".join(o.fatal for o in outs if o.fatal)
            if "429" in why or "RESOURCE_EXHAUSTED" in why:
                why += " (the server's GOLF_RATE_LIMIT_SIGN_IN limits sign-ins per address; empty turns it off)"
            raise RuntimeError("load generator failed: " + why)
        modes = set(auth[:])
        auth_mode = "guest" if modes == {AUTH_GUEST} else "none" if modes == {AUTH_NONE} else "mixed"
        now = time.monotonic()
        times[0] = now + args.warmup
        times[1] = times[0] + args.seconds
        go.set()
        time.sleep(max(0.0, times[0] - time.monotonic()))

        grouped_before = _group_commit(target)  # before the CPU readings: a scrape costs the server too
        pg_before = _cpu_map(backend_pids(target.pg_name)) if target.pg_name else {}
        client_before = sum(cpu_seconds(p.pid) for p in workers if p.pid is not None)
        profiler = _start_profiler(args, target.pid, f"{transport}-{db}-{run}")
        server_before = _safe_cpu(target.pid)
        machine_before = machine_busy_seconds()
        start = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= times[1]:
                break
            if args.moves and sum(counts) >= args.moves:
                times[1] = now
                break
            time.sleep(min(0.02, times[1] - now))
        end = time.monotonic()
        machine_after = machine_busy_seconds()
        server_after = _safe_cpu(target.pid)
        client_after = sum(cpu_seconds(p.pid) for p in workers if p.pid is not None)
        pg_after = _cpu_map(backend_pids(target.pg_name)) if target.pg_name else {}
        grouped_after = _group_commit(target)

        outs: list[WorkerResult] = []
        for _ in workers:
            _, out = results.get(timeout=60)
            outs.append(out)
    finally:
        times[1] = 0.0  # stop any worker still running
        go.set()
        for p in workers:
            p.join(10)
            if p.is_alive():
                p.kill()  # only the processes this script started
    fatal = [o.fatal for o in outs if o.fatal]
    if fatal:
        raise RuntimeError("load generator failed: " + "; ".join(fatal))

    latencies: list[float] = []
    errors: Counter[str] = Counter()
    games = 0
    for out in outs:
        latencies.extend(lat for t, lat in zip(out.finished, out.latency, strict=True) if start <= t <= end)
        errors.update(out.errors)
        games += out.games
    latencies.sort()
    moves = len(latencies)
    wall = end - start
    server_cpu = None if server_before is None or server_after is None else server_after - server_before
    db_cpu = sum(cpu - pg_before.get(pid, 0.0) for pid, cpu in pg_after.items()) if target.pg_name else None
    client_cpu = client_after - client_before
    ours = client_cpu + (server_cpu or 0.0) + (db_cpu or 0.0)

    def per_move(cpu: float | None) -> float | None:
        return None if cpu is None or not moves else 1000 * cpu / moves

    row = Row(
        transport=transport,
        db=db,
        run=run,
        auth=auth_mode,
        clients=args.clients,
        moves=moves,
        seconds=round(wall, 3),
        moves_per_s=moves / wall if wall else 0.0,
        p50_ms=1000 * _percentile(latencies, 0.50),
        p99_ms=1000 * _percentile(latencies, 0.99),
        server_cpu_ms_per_move=per_move(server_cpu),
        moves_per_server_core_s=moves / server_cpu if server_cpu else None,
        server_cpu_util=server_cpu / wall if server_cpu is not None and wall else None,
        db_cpu_ms_per_move=per_move(db_cpu),
        client_cpu_ms_per_move=per_move(client_cpu),
        other_cores=max(0.0, (machine_after - machine_before - ours) / wall) if wall else None,
        fsync_ms=disk,
        games=games,
        errors=dict(errors),
        moves_per_statement=_per_statement(grouped_before, grouped_after),
    )
    _finish_profiler(profiler, row, args)
    return row


GROUP_COMMIT = ("golf_db_group_commit_statements_total", "golf_db_group_commit_entries_total")


def _group_commit(target: Target) -> tuple[float, float] | None:
    """The server's group commit counters (statements, entries) from ``/metrics``; None without them (SQLite, or a
    revision before group commit)."""
    try:
        with urlopen(f"http://{target.host}:{target.http_port}/metrics", timeout=10) as resp:
            text = resp.read().decode()
    except OSError:
        return None
    found = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in GROUP_COMMIT:
            found[name] = float(value)
    return (found[GROUP_COMMIT[0]], found[GROUP_COMMIT[1]]) if len(found) == 2 else None


def _per_statement(before: tuple[float, float] | None, after: tuple[float, float] | None) -> float | None:
    if before is None or after is None or after[0] == before[0]:
        return None
    return (after[1] - before[1]) / (after[0] - before[0])


def median_row(rows: list[Row]) -> Row:
    """The median of each figure over several runs of one (transport, db)."""

    def med(name: str) -> Any:
        values = [getattr(r, name) for r in rows if getattr(r, name) is not None]
        return statistics.median(values) if values else None

    errors: Counter[str] = Counter()
    for r in rows:
        errors.update(r.errors)
    return Row(
        transport=rows[0].transport,
        db=rows[0].db,
        run="median",
        auth=rows[0].auth if len({r.auth for r in rows}) == 1 else "mixed",
        clients=rows[0].clients,
        moves=int(med("moves")),
        seconds=med("seconds"),
        moves_per_s=med("moves_per_s"),
        p50_ms=med("p50_ms"),
        p99_ms=med("p99_ms"),
        server_cpu_ms_per_move=med("server_cpu_ms_per_move"),
        moves_per_server_core_s=med("moves_per_server_core_s"),
        server_cpu_util=med("server_cpu_util"),
        db_cpu_ms_per_move=med("db_cpu_ms_per_move"),
        client_cpu_ms_per_move=med("client_cpu_ms_per_move"),
        other_cores=med("other_cores"),
        fsync_ms=med("fsync_ms"),
        games=int(med("games")),
        errors=dict(errors),
        moves_per_statement=med("moves_per_statement"),
    )


COLUMNS = [
    ("transport", "transport", "{}"),
    ("db", "db", "{}"),
    ("run", "run", "{}"),
    ("auth", "auth", "{}"),
    ("clients", "clients", "{}"),
    ("moves", "moves", "{}"),
    ("moves_per_s", "moves/s", "{:.0f}"),
    ("p50_ms", "p50 ms", "{:.1f}"),
    ("p99_ms", "p99 ms", "{:.1f}"),
    ("server_cpu_ms_per_move", "srv CPU ms/move", "{:.3f}"),
    ("moves_per_server_core_s", "moves/srv-core-s", "{:.0f}"),
    ("server_cpu_util", "srv cores", "{:.2f}"),
    ("db_cpu_ms_per_move", "pg CPU ms/move", "{:.3f}"),
    ("client_cpu_ms_per_move", "client CPU ms/move", "{:.3f}"),
    ("other_cores", "other cores", "{:.2f}"),
    ("fsync_ms", "fsync ms", "{:.1f}"),
    ("moves_per_statement", "moves/stmt", "{:.2f}"),
    ("games", "games", "{}"),
    ("errors", "errors", "{}"),
]


def table(rows: list[Row]) -> str:
    def cell(row: Row, name: str, fmt: str) -> str:
        value = getattr(row, name)
        if value is None:
            return "-"
        if name == "errors":
            return str(sum(value.values()))
        return fmt.format(value)

    cells = [[title for _, title, _ in COLUMNS]] + [[cell(r, n, f) for n, _, f in COLUMNS] for r in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = ["  ".join(c.rjust(w) if i > 3 else c.ljust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
             for line in cells]  # fmt: skip
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _check_local(host: str | None, what: str) -> str:
    if host not in LOCAL_HOSTS:
        raise SystemExit(f"{what}: load goes only to this machine (127.0.0.1), not {host!r}")
    return "127.0.0.1" if host == "localhost" else host


Profiler = tuple[subprocess.Popen[bytes], Path]


def _start_profiler(args: argparse.Namespace, pid: int | None, label: str) -> Profiler | None:
    """With ``--py-spy DIR``: sample the server with py-spy for the measured window (it slows the server)."""
    if not args.py_spy or pid is None:
        return None
    exe = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    out = Path(args.py_spy) / f"{label}.txt"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [exe, "record", "-p", str(pid), "-d", str(max(1, round(args.seconds))), "-r", str(PY_SPY_RATE)]
    cmd += ["-f", "raw", "-o", str(out)] + (["--gil"] if args.py_spy_mode == "gil" else [])
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL), out


def _finish_profiler(profiler: Profiler | None, row: Row, args: argparse.Namespace) -> None:
    if profiler is None:
        return
    proc, out = profiler
    try:
        proc.wait(args.seconds + 30)
    except subprocess.TimeoutExpired:
        proc.kill()  # only the process this script started
        proc.wait()
    if out.exists() and row.moves:
        print(f"py-spy ({args.py_spy_mode}) {row.transport}/{row.db}: {out}", file=sys.stderr)
        print(breakdown(load(out), PY_SPY_RATE, row.moves), file=sys.stderr)


_printed: list[Row] = []


def _print_progress(row: Row) -> None:
    """Rows as they come, re-aligned with the rows before; the header once."""
    _printed.append(row)
    lines = table(_printed).splitlines()
    print("\n".join(lines if len(_printed) == 1 else lines[-1:]), flush=True)


def run_combination(args: argparse.Namespace, transport: str, db: str, target: Target) -> list[Row]:
    rows = []
    for n in range(1, args.runs + 1):
        row = measure(args, transport, db, target, str(n))
        rows.append(row)
        limited = sum(v for k, v in row.errors.items() if "HTTP 429" in k or "RESOURCE_EXHAUSTED" in k)
        if limited:
            print(f"note: {limited} calls were rate-limited (HTTP 429 / RESOURCE_EXHAUSTED); the server's "
                  "GOLF_RATE_LIMIT_* settings limit the bench", file=sys.stderr)  # fmt: skip
        if not args.json:
            _print_progress(row)
    if args.runs > 1:
        rows.append(median_row(rows))
        if not args.json:
            _print_progress(rows[-1])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transport", choices=["rest", "grpc", "both"], default="both")
    parser.add_argument("--db", choices=["sqlite", "postgres", "both"], default="both")
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    parser.add_argument("--seconds", type=float, help="measured window per run (default 10; a cap with --moves)")
    parser.add_argument("--moves", type=int, help="end the window after this many moves")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds of load before the window (default 2)")
    parser.add_argument("--runs", type=int, default=1, help="runs per combination; >1 adds a median row")
    parser.add_argument("--procs", type=int, default=1, help="load-generator processes (default 1)")
    parser.add_argument("--grpc-channels", type=int, default=4, help="gRPC channels per process (default 4)")
    parser.add_argument("--url", help="REST base URL of a running server (e.g. http://127.0.0.1:8080)")
    parser.add_argument("--grpc", help="gRPC address of a running server (e.g. 127.0.0.1:50051)")
    parser.add_argument("--server-pid", type=int, help="pid of the running server (default: found from its port)")
    parser.add_argument("--pg-url", default=os.environ.get("GOLF_BENCH_PG_URL", DEFAULT_PG_URL),
                        help="PostgreSQL admin URL to create and drop the bench database")  # fmt: skip
    parser.add_argument("--rev", help="run the server from this git revision (exported) instead of the work tree")
    parser.add_argument("--server-env", action="append", default=[], metavar="GOLF_X=V",
                        help="extra setting for the started server, e.g. GOLF_SQLITE_SYNCHRONOUS=NORMAL")  # fmt: skip
    parser.add_argument("--server-log-level", default="warning", help="GOLF_LOG_LEVEL of the server (default warning)")
    parser.add_argument("--py-spy", metavar="DIR", help="record py-spy samples of the server into DIR (slows it)")
    parser.add_argument("--py-spy-mode", choices=["gil", "all"], default="gil",
                        help="gil: the thread holding the GIL (default); all: every busy thread")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = parser.parse_args(argv)

    if not 1 <= args.clients <= MAX_CLIENTS:
        parser.error(f"--clients must be 1 to {MAX_CLIENTS}")
    if args.seconds is None:
        args.seconds = 10.0 if args.moves is None else 120.0
    if not 0 < args.seconds <= MAX_SECONDS or not 0 <= args.warmup <= 60 or not 1 <= args.runs <= 20:
        parser.error(f"--seconds must be in (0, {MAX_SECONDS:.0f}], --warmup in [0, 60], --runs in [1, 20]")
    if args.moves is not None and args.moves < 1:
        parser.error("--moves must be positive")
    transports = ["rest", "grpc"] if args.transport == "both" else [args.transport]
    dbs = ["sqlite", "postgres"] if args.db == "both" else [args.db]

    extra = dict(kv.split("=", 1) for kv in args.server_env)
    if any(not k.startswith("GOLF_") for k in extra):
        parser.error("--server-env takes GOLF_* settings only")
    rows: list[Row] = []
    if args.url or args.grpc:
        rest = urlsplit(args.url) if args.url else None
        grpc_host, _, grpc_port = (args.grpc or "").rpartition(":")
        if ("rest" in transports and rest is None) or ("grpc" in transports and not args.grpc):
            parser.error("measuring a running server: give --url for REST and --grpc for gRPC (or pick --transport)")
        host = _check_local(rest.hostname, "--url") if rest else _check_local(grpc_host.strip("[]"), "--grpc")
        if args.grpc:
            _check_local(grpc_host.strip("[]"), "--grpc")
        http_port = (rest.port or 80) if rest else 0
        pid = args.server_pid or listening_pid(http_port or int(grpc_port))
        if pid is None:
            print("note: server pid not found (give --server-pid); CPU figures left out", file=sys.stderr)
        target = Target(host, http_port, int(grpc_port or 0), pid)
        label = dbs[0] if len(dbs) == 1 else "?"
        for transport in transports:
            rows += run_combination(args, transport, label, target)
    else:
        with tempfile.TemporaryDirectory(prefix="golf_bench_logs_") as logs, source_tree(args.rev) as src:
            for db in dbs:
                try:
                    with database(db, args.pg_url) as (url, pg_name):
                        for transport in transports:
                            with golf_server(url, args.server_log_level, Path(logs), src, extra) as server:
                                target = Target("127.0.0.1", server.http_port, server.grpc_port, server.pid, pg_name)
                                rows += run_combination(args, transport, db, target)
                except Exception as err:
                    if db != "postgres" or args.db == "postgres":
                        raise
                    print(f"postgres skipped: {type(err).__name__}: {err}", file=sys.stderr)
    if args.json:
        meta = {"cpus": os.cpu_count(), "loadavg_after": os.getloadavg(), "warmup_s": args.warmup}
        print(json.dumps({"meta": meta, "rows": [asdict(r) for r in rows]}, indent=2))
    elif len(rows) > 1:
        print()
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
