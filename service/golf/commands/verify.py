"""``golf verify RECORD``: check exported records (``ExportRecords``) without the service or its database.

RECORD is a file of records, one per line as the REST export writes them (newline-delimited JSON: a ``Record`` in
proto3 JSON per line; a line ``{"record": {...}}``, an ``ExportRecordsResponse``, is read too), or ``-`` for
standard input. Each record is checked (``golf.commands.record_checks``) and gets one line::

    OK game 5d0c... preset=standard status=won score=-3 entries=31
    FAILED match 9a1e...: entry 17 ({"move":"swap 9",...}) is refused: position 9 is not in the grid

A line ``{"error": {...}}`` (an export that ended with a refusal) is reported as a failure: the export is
incomplete. Exit status: 0 when every record checks out, 1 when any fails, 2 when the input cannot be read (no
such file, a line that is not a record, no records at all).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from google.protobuf import json_format

from golf.commands.record_checks import CheckFailed, check_record, describe
from golf.v1 import record_service_pb2 as rpb

OK, FAILED, UNREADABLE = 0, 1, 2


class Unreadable(Exception):
    """Input that is not a file of records."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``verify`` subcommand."""
    parser = sub.add_parser(
        "verify",
        help="check exported game and match records against their seeds and rules",
        description="Check records exported by ExportRecords: each commitment against its seed and rules, the "
        "deal recomputed from the seed, every log entry replayed and legal, and the final score (solitaire) or "
        "points, totals and places (card Golf). Prints one line per record; exits 0 when all pass, 1 when any "
        "fails, 2 when the input cannot be read.",
    )
    parser.add_argument("record", metavar="RECORD", help="a file of records, one JSON record per line; - for stdin")
    parser.set_defaults(func=run)


@contextmanager
def _opened(name: str) -> Iterator[TextIO]:
    if name == "-":
        yield sys.stdin
        return
    try:
        with Path(name).open(encoding="utf-8") as handle:
            yield handle
    except OSError as err:
        raise Unreadable(f"cannot read {name}: {err.strerror or err}") from None


def parse_line(text: str, where: str) -> rpb.Record | str:
    """The record on one line, or the message of an error line (``{"error": {...}}``); raises :class:`Unreadable`
    for anything else."""
    try:
        data = json.loads(text)
    except ValueError:
        raise Unreadable(f"{where}: not JSON") from None
    if not isinstance(data, dict):
        raise Unreadable(f"{where}: a JSON object (a record) was expected")
    if set(data) == {"error"}:
        error = data["error"]
        message = error.get("message", "") if isinstance(error, dict) else str(error)
        return message or "no message"
    if set(data) == {"record"} and isinstance(data["record"], dict):
        data = data["record"]
    record = rpb.Record()
    try:
        json_format.ParseDict(data, record)
    except json_format.ParseError as err:
        if data.get("format") not in (None, "golf.record/1"):
            # A newer format's fields: parse what this version knows, and let the format check name it.
            json_format.ParseDict(data, record, ignore_unknown_fields=True)
            return record
        raise Unreadable(f"{where}: not a record: {err}") from None
    return record


def _records(handle: TextIO, name: str) -> Iterator[rpb.Record | str]:
    """Each record (or error line) of the input, read a line at a time."""
    try:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield parse_line(line, f"{name} line {number}")
    except UnicodeDecodeError:
        raise Unreadable(f"{name}: not UTF-8 text") from None


def verify(handle: TextIO, name: str, out: TextIO) -> int:
    """Check every record of ``handle``, a line each on ``out``; the exit status."""
    seen = failed = 0
    for item in _records(handle, name):
        seen += 1
        if isinstance(item, str):
            failed += 1
            print(f"FAILED export: the export ended with an error (it is incomplete): {item}", file=out)
            continue
        try:
            summary = check_record(item)
        except CheckFailed as err:
            failed += 1
            print(f"FAILED {describe(item)}: {err}", file=out)
        else:
            print(f"OK {describe(item)} {summary}", file=out)
        out.flush()
    if not seen:
        raise Unreadable(f"{name}: no records")
    return FAILED if failed else OK


def run(args: argparse.Namespace) -> int:
    """``golf verify``: see the module's docstring."""
    name = "standard input" if args.record == "-" else args.record
    try:
        with _opened(args.record) as handle:
            return verify(handle, name, sys.stdout)
    except Unreadable as err:
        sys.stdout.flush()
        print(f"golf verify: {err}", file=sys.stderr)
        return UNREADABLE
