"""Two ``golf serve`` processes on one PostgreSQL database play one match of card Golf, and one of them is killed
mid-hole.

Ann plays through replica A, Bob through replica B, a paced bot sits in the third seat, and a spectator watches
through replica B's Server-Sent Events. Replica B's catch-up timer is set to a minute, so the spectator sees Ann's
moves (made through A) only if A's ``NOTIFY`` reaches B's ``LISTEN``: each must arrive well within that minute. Then
A is killed with SIGKILL while the hole is being played (its table clock may hold the table's lease): Ann goes on
through B, B's clock takes over the bot's paced moves (at once, or when A's lease runs out), and the match is
played to its end. The spectator's stream never reconnects and sees every event once, in order, with no gap.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.protobuf import duration_pb2

from golf.v1 import card_golf_pb2 as cg
from tests.e2e.support import Rest, Server, migrate
from tests.e2e.tables import Tables

OWN_SERVER = True
"""A server and database of this module's own (tests/e2e/conftest.py):
it kills its server."""

NOTIFY_BOUND = 20.0
"""Seconds within which a move made through one replica must reach a watcher of the other: far below the watcher's
catch-up period (60 s), so only a notification can explain it; far above any delivery time, so load cannot fail it."""


@dataclass
class Watcher:
    """A spectator's SSE stream read in a thread: each event's ``seq`` and when it arrived."""

    url: str
    token: str
    events: list[dict[str, Any]] = field(default_factory=list)
    arrived: dict[int, float] = field(default_factory=dict)
    heartbeats: int = 0
    ended: str = ""
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Watcher:
        self._thread = threading.Thread(target=self._read, name="watcher", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        headers = {"authorization": f"Bearer {self.token}", "accept": "text/event-stream"}
        try:
            with (
                httpx.Client(timeout=httpx.Timeout(10, read=120)) as client,
                client.stream("GET", self.url, headers=headers) as reply,
            ):
                assert reply.status_code == 200, reply.status_code
                kind = ""
                for line in reply.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith("event:"):
                        kind = line.split(":", 1)[1].strip()
                    elif line.startswith("data:") and kind == "heartbeat":
                        self.heartbeats += 1
                    elif line.startswith("data:") and kind == "error":
                        self.ended = line
                        return
                    elif line.startswith("data:"):
                        event = json.loads(line.split(":", 1)[1])
                        self.arrived.setdefault(int(event["seq"]), time.monotonic())
                        self.events.append(event)
            self.ended = self.ended or "closed by the server"
        except Exception as err:  # reported by the test through ``ended``
            self.ended = f"{type(err).__name__}: {err}"

    def wait_for(self, seq: int, timeout: float) -> float:
        """Seconds until the event ``seq`` had arrived (fails after ``timeout``)."""
        began = time.monotonic()
        while seq not in self.arrived:
            assert not self.ended, f"the stream ended: {self.ended}"
            assert time.monotonic() - began < timeout, f"event {seq} did not arrive within {timeout} s"
            time.sleep(0.02)
        return max(0.0, self.arrived[seq] - began)

    def stop(self) -> None:
        self._stop.set()


def _kill(server: Server) -> None:
    """SIGKILL our own server process (by its PID): no drain, no goodbye, its leases left behind."""
    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait(30)
    server.proc = None
    server._log.close()


@pytest.fixture
def replicas(postgres_url: str, tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    migrate(postgres_url)
    a = Server(postgres_url, tmp_path / "a", extra_env={"GOLF_EVENT_HEARTBEAT_SECONDS": "2"})
    b = Server(postgres_url, tmp_path / "b", extra_env={"GOLF_EVENT_CATCH_UP_SECONDS": "60"})
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a.start()
    b.start()
    try:
        yield a, b
    finally:
        for server in (a, b):
            server.terminate()


def _table(reply: Any) -> cg.Table:
    table = reply.expect_ok().table
    assert isinstance(table, cg.Table)
    return table


def _play_one(player: Tables, table_id: str) -> cg.Table | None:
    """``player`` makes its first legal move if its seat is awaited; the table after it (None: nothing to do)."""
    table = _table(player.get(table_id))
    if table.status != cg.TABLE_STATUS_PLAYING or not table.legal_moves:
        return None
    return _table(player.act(table_id, table.legal_moves[0], expected_version=table.version))


def test_a_match_across_two_replicas_survives_one_killed_mid_hole(replicas: tuple[Server, Server]) -> None:
    a, b = replicas
    ann_a, bob_b, cat_b = Rest(a.http_url), Rest(b.http_url), Rest(b.http_url)
    ann, bob = Tables(ann_a), Tables(bob_b)
    made = _table(ann.create(seats=3, holes=2, bot_delay=duration_pb2.Duration(nanos=300_000_000)))
    _table(bob.join(made.id))
    _table(ann.add_bot(made.id, cg.BOT_LEVEL_GREEDY))
    watcher = Watcher(f"{b.http_url}/v1/tables/{made.id}/events", cat_b.token).start()
    started = _table(ann.start(made.id))
    watcher.wait_for(started.version, NOTIFY_BOUND)  # the start, through A, seen through B

    # Both replicas serve the match: every move Ann makes through A reaches B's watcher by notification.
    through_a = 0
    while through_a < 4:
        moved = _play_one(ann, made.id)
        if moved is not None:
            through_a += 1
            assert watcher.wait_for(moved.version, NOTIFY_BOUND) < NOTIFY_BOUND
        _play_one(bob, made.id)
        time.sleep(0.05)  # let the paced bot move (its clock may run in either replica)
    hole = _table(bob.get(made.id)).hole_number

    # A dies mid-hole; Ann goes on through B, and B's clock plays the bot (after A's lease, if A held one).
    assert _table(bob.get(made.id)).status == cg.TABLE_STATUS_PLAYING
    _kill(a)
    ann_b = Rest(b.http_url, as_=ann_a)
    ann = Tables(ann_b)
    deadline = time.monotonic() + 180
    final = _table(bob.get(made.id))
    while final.status == cg.TABLE_STATUS_PLAYING:
        assert time.monotonic() < deadline, "the match did not end within 3 minutes"
        if _play_one(ann, made.id) is None and _play_one(bob, made.id) is None:
            time.sleep(0.1)  # the bot's turn: B's clock plays it
        final = _table(bob.get(made.id))
    assert final.status == cg.TABLE_STATUS_OVER and final.match_end == cg.MATCH_END_COMPLETED
    assert len(final.score_sheet.holes) == 2 and hole >= 1

    # The spectator's one stream saw every event once, in order, with no gap, ending at the match's last event.
    watcher.wait_for(final.version, NOTIFY_BOUND)
    seqs = [int(e["seq"]) for e in watcher.events]
    assert seqs == list(range(seqs[0], final.version + 1)), "events lost, repeated or out of order"
    assert watcher.events[-1]["table"]["status"] == "TABLE_STATUS_OVER"
    kinds = {e["kind"] for e in watcher.events}
    assert "TABLE_EVENT_KIND_MOVED" in kinds
    watcher.stop()
    for client in (ann_a, ann_b, bob_b, cat_b):
        client.close()
