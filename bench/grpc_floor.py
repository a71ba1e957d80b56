"""What a unary gRPC call costs the server before any of the service's code: the floor under a PlayMove over gRPC.

A server process answers one generic method with a fixed reply (the size of a PlayMove answer) after an optional
wait (``--delay-ms``, standing in for a move's database round trip, so that calls arrive at a PlayMove's rate and
not all at once); grpc.aio on uvloop as ``golf serve`` runs it, or the sync server with a thread pool. This process
runs ``--clients`` concurrent grpc.aio callers over 4 channels and reads the server's CPU time (utime + stime from
/proc) around the measured window: server CPU per call, and calls per server core-second. See bench/README.md.

    .venv/bin/python bench/grpc_floor.py --server both --delay-ms 20 --runs 3
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from concurrent import futures
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _server import cpu_seconds, free_port

METHOD = "/bench.Floor/Call"


def serve(kind: str, port: int, delay: float, reply_bytes: int, threads: int) -> None:
    reply = b"x" * reply_bytes
    if kind == "aio":
        import uvloop

        async def call_async(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
            context.invocation_metadata()
            if delay:
                await asyncio.sleep(delay)
            return reply

        async def main() -> None:
            server = grpc.aio.server()
            handler = grpc.unary_unary_rpc_method_handler(call_async)
            server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Floor", {"Call": handler}),))
            server.add_insecure_port(f"127.0.0.1:{port}")
            await server.start()
            print("ready", flush=True)
            await server.wait_for_termination()

        uvloop.run(main())
        return

    def call_sync(request: bytes, context: grpc.ServicerContext) -> bytes:
        context.invocation_metadata()
        if delay:
            time.sleep(delay)
        return reply

    server = grpc.server(futures.ThreadPoolExecutor(threads))
    handlers = {"Call": grpc.unary_unary_rpc_method_handler(call_sync)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Floor", handlers),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    print("ready", flush=True)
    server.wait_for_termination()


async def load(port: int, pid: int, clients: int, seconds: float, warmup: float) -> tuple[float, float]:
    """(calls per second, server CPU seconds per call) over the measured window."""
    channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _ in range(4)]
    done = 0
    stop = False

    async def client(i: int) -> None:
        nonlocal done
        call = channels[i % len(channels)].unary_unary(METHOD, request_serializer=None, response_deserializer=None)
        while not stop:
            await call(b"r" * 64, metadata=(("authorization", "Bearer bench"),))
            done += 1

    tasks = [asyncio.create_task(client(i)) for i in range(clients)]
    await asyncio.sleep(warmup)
    calls0, cpu0, t0 = done, cpu_seconds(pid), time.monotonic()
    await asyncio.sleep(seconds)
    calls1, cpu1, t1 = done, cpu_seconds(pid), time.monotonic()
    stop = True
    await asyncio.gather(*tasks)
    for channel in channels:
        await channel.close(None)
    calls = calls1 - calls0
    return calls / (t1 - t0), (cpu1 - cpu0) / calls


def run_once(args: argparse.Namespace, kind: str) -> tuple[float, float]:
    port = free_port()
    cmd = [sys.executable, __file__, "--serve", kind, "--port", str(port), "--delay-ms", str(args.delay_ms)]
    cmd += ["--reply-bytes", str(args.reply_bytes), "--threads", str(args.threads)]
    server = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready"
        import uvloop

        return uvloop.run(load(port, server.pid, args.clients, args.seconds, args.warmup))
    finally:
        server.terminate()  # only the server this script started
        server.wait(10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", choices=["aio", "sync", "both"], default="both")
    parser.add_argument("--delay-ms", type=float, default=20.0, help="wait in the handler (default 20)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent callers (default 32)")
    parser.add_argument("--seconds", type=float, default=5.0, help="measured window (default 5)")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--runs", type=int, default=3, help="runs per server, interleaved; medians (default 3)")
    parser.add_argument("--reply-bytes", type=int, default=1500, help="size of the reply (default 1500)")
    parser.add_argument("--threads", type=int, default=40, help="the sync server's thread pool (default 40)")
    parser.add_argument("--serve", choices=["aio", "sync"], help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not 1 <= args.clients <= 1024 or not 0 < args.seconds <= 600 or not 1 <= args.runs <= 20:
        parser.error("--clients 1..1024, --seconds up to 600, --runs 1..20")
    if args.serve:
        serve(args.serve, args.port, args.delay_ms / 1000, args.reply_bytes, args.threads)
        return 0
    kinds = ["aio", "sync"] if args.server == "both" else [args.server]
    results: dict[str, list[tuple[float, float]]] = {k: [] for k in kinds}
    print(f"{'server':6}  {'run':6}  {'calls/s':>8}  {'srv CPU ms/call':>15}  {'calls/srv-core-s':>16}")
    for n in range(1, args.runs + 1):
        for kind in kinds:
            rate, cpu = run_once(args, kind)
            results[kind].append((rate, cpu))
            print(f"{kind:6}  {n:<6}  {rate:8.0f}  {cpu * 1000:15.3f}  {1 / cpu:16.0f}", flush=True)
    for kind, rows in results.items():
        rate, cpu = statistics.median(r for r, _ in rows), statistics.median(c for _, c in rows)
        print(f"{kind:6}  {'median':6}  {rate:8.0f}  {cpu * 1000:15.3f}  {1 / cpu:16.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
