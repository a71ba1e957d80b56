"""The TypeScript client generated from the contract (clients/ts, by ``make gen``) drives the running service from
Node over the Connect protocol on the HTTP port, on both databases: a guest signs in, plays a new solitaire game to
its end (its seed revealed), is refused a missing game (the Connect code and ``golf.v1.Error`` in the details),
creates a card Golf table, adds a bot and watches the table's server stream (the snapshot, then the bot's arrival).
The script is clients/ts/test/drive.mjs; it checks each reply itself and prints what it saw."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.e2e.support import Server

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "clients" / "ts" / "test" / "drive.mjs"
GENERATED = ROOT / "clients" / "ts" / "gen" / "golf" / "v1" / "table_service_pb.js"


def test_the_generated_typescript_client_drives_the_service_from_node(server: Server) -> None:
    node = shutil.which("node")
    assert node, "node is not installed: the TypeScript client's test needs it (as make test's npm install does)"
    assert GENERATED.exists(), "the TypeScript client is not generated: run make gen"
    env = {**os.environ, "GOLF_HTTP_URL": server.http_url}
    done = subprocess.run([node, str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"node exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert lines["player"] and lines["table"], done.stdout
    assert lines["game"].split()[1] == "move" and lines["game"].split()[-1].isdigit(), done.stdout
    finished = lines["finished"].split()
    assert finished[0] in ("WON", "LOST") and finished[1] == "score" and finished[3] == "moves", done.stdout
    assert lines["refused"] == "NotFound NOT_FOUND", done.stdout
    assert lines["snapshot"].startswith("SNAPSHOT seq "), done.stdout
    assert lines["event"].startswith("BOT_ADDED seq "), done.stdout
    assert int(lines["event"].split()[-1]) > int(lines["snapshot"].split()[-1]), done.stdout
    assert done.stdout.splitlines()[-1] == "ok", done.stdout
