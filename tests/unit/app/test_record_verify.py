"""``golf verify``: records of games and matches played to their end (exported over in-memory storage, written as
the REST export writes them) check out; a record changed anywhere that matters fails with a reason that names
it; input that is not records exits 2 with a message, never a traceback."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from google.protobuf import json_format

from golf.adapters.proto_json import to_json
from golf.api.record_convert import record_to_proto
from golf.app.exports import Exporter, ExportQuery
from golf.app.identity import Caller
from golf.bootstrap import Services
from golf.cli import build_parser
from golf.commands.record_checks import CheckFailed, check_record
from golf.engine.shuffle import commitment
from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2
from tests.finished import finish_game, finish_match
from tests.unit.app.fake_index import ListIndex
from tests.unit.app.fakes import FakeStore

Record = rpb.Record


@pytest.fixture
async def records(services: Services, store: FakeStore, ann: Caller, bob: Caller) -> tuple[Record, Record]:
    """A finished solitaire game (with an undo and an AutoPlay run) and a finished two-hole match, as exported."""
    await finish_game(services, ann, "verify-unit")
    await finish_match(services, ann, others=(bob,), holes=2, seed=5)
    items = [i async for i in Exporter(store, ListIndex(store)).export(ExportQuery.build(ann.player_id))]
    game, match = (record_to_proto(i) for i in items)
    assert game.kind == rpb.RECORD_KIND_SOLITAIRE_GAME and match.kind == rpb.RECORD_KIND_CARD_GOLF_MATCH
    return game, match


def changed(record: Record, change: Callable[[Record], None]) -> Record:
    out = Record()
    out.CopyFrom(record)
    change(out)
    return out


def failure(record: Record) -> str:
    with pytest.raises(CheckFailed) as caught:
        check_record(record)
    return str(caught.value)


def recommitted(record: Record) -> None:
    """Make the commitment agree with a changed seed or rules, so the next check is the one that speaks."""
    record.commitment = commitment(record.shuffle_algorithm, record.seed, record.rules)


def test_exported_records_check_out(records: tuple[Record, Record]) -> None:
    game, match = records
    assert check_record(game).startswith("preset=standard status=")
    assert "holes=2 seats=3" in check_record(match)
    assert any(e.code == "U" for e in game.entries) and any(e.code.startswith("A:") for e in game.entries)


def test_a_changed_seed_fails_the_commitment(records: tuple[Record, Record]) -> None:
    for record in records:
        assert "commitment" in failure(changed(record, lambda r: setattr(r, "seed", r.seed + "x")))


def test_a_changed_seed_with_its_commitment_fails_the_replay(records: tuple[Record, Record]) -> None:
    game, match = records

    def reseed(r: Record) -> None:
        r.seed = "another-seed"
        recommitted(r)

    assert "entry 1 " in failure(changed(game, reseed)) or "entry 2 " in failure(changed(game, reseed))
    assert "is refused" in failure(changed(match, reseed)) or "points" in failure(changed(match, reseed))


def test_a_changed_move_fails_naming_its_entry(records: tuple[Record, Record]) -> None:
    game, match = records
    n = next(i for i, e in enumerate(game.entries) if e.code.startswith("T:"))
    wrong = "T:AS" if game.entries[n].code != "T:AS" else "T:2S"
    reason = failure(changed(game, lambda r: setattr(r.entries[n], "code", wrong)))
    assert reason.startswith(f"entry {n + 1} ('{wrong}') is illegal"), reason
    reason = failure(changed(game, lambda r: setattr(r.entries[0], "code", "U")))
    assert reason == "entry 1 ('U') is illegal: there is no move to take back"
    m = next(i for i, e in enumerate(match.entries) if '"move":"swap' in e.code)
    swap = json.loads(match.entries[m].code)
    swap["move"] = "swap 9"
    reason = failure(changed(match, lambda r: setattr(r.entries[m], "code", json.dumps(swap, separators=(",", ":")))))
    assert reason.startswith(f"entry {m + 1} ") and "refused" in reason, reason


def test_a_changed_result_fails(records: tuple[Record, Record]) -> None:
    game, _ = records
    assert failure(changed(game, lambda r: setattr(r, "score", r.score + 1))).startswith("score ")
    other = solitaire_pb2.GAME_STATUS_WON if game.status != solitaire_pb2.GAME_STATUS_WON else 3
    assert failure(changed(game, lambda r: setattr(r, "status", other))).startswith("status ")


def test_a_changed_sheet_fails(records: tuple[Record, Record]) -> None:
    _, match = records

    def more_points(r: Record) -> None:
        r.seats[1].hole_points[0] += 1

    def more_total(r: Record) -> None:
        r.seats[1].total += 1

    def first_place(r: Record) -> None:
        r.seats[1].place = 1 if r.seats[1].place != 1 else 2

    assert "seat 1: points per hole" in failure(changed(match, more_points))
    assert "seat 1: total" in failure(changed(match, more_total))
    assert "seat 1: place" in failure(changed(match, first_place))
    assert "match end" in failure(changed(match, lambda r: setattr(r, "match_end", "abandoned")))
    assert "player" in failure(changed(match, lambda r: setattr(r.seats[0], "player_id", "someone-else")))


def test_a_shortened_or_reordered_log_fails(records: tuple[Record, Record]) -> None:
    game, match = records
    for record in (game, match):
        assert "not over" in failure(changed(record, lambda r: r.entries.pop()))
        assert "sequence number" in failure(changed(record, lambda r: setattr(r.entries[1], "seq", 7)))


def test_changed_rules_fail(records: tuple[Record, Record]) -> None:
    game, match = records

    def shorter(r: Record) -> None:
        r.rules = r.rules.replace('"column_height":5', '"column_height":4')
        recommitted(r)

    def spaced(r: Record) -> None:
        r.rules = r.rules.replace(",", ", ")
        recommitted(r)

    assert "is illegal" in failure(changed(game, shorter))  # another deal: the log's cards are not where it says
    for record in (game, match):
        assert "canonical" in failure(changed(record, spaced))
    assert "format" in failure(changed(game, lambda r: setattr(r, "format", "golf.record/2")))


# -- the command -------------------------------------------------------------------------------------------------
def ndjson(*records: Record) -> str:
    return "".join(to_json(r).decode() + "\n" for r in records)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    parsed = build_parser().parse_args(["verify", *args])  # as ``golf verify`` runs it, without its signal set-up
    code: int = parsed.func(parsed)
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


def test_the_command_checks_each_line(
    records: tuple[Record, Record], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game, match = records
    path = tmp_path / "export.ndjson"
    path.write_text(ndjson(game, match))
    code, lines, err = run(capsys, str(path))
    assert code == 0 and err == ""
    assert lines[0].startswith(f"OK game {game.id} preset=standard") and lines[1].startswith(f"OK match {match.id} ")
    bad = changed(game, lambda r: setattr(r, "score", r.score + 2))
    wrapped = json.dumps({"record": json_format.MessageToDict(match)})
    path.write_text(ndjson(game, bad) + wrapped + "\n\n")
    code, lines, _ = run(capsys, str(path))
    assert code == 1 and len(lines) == 3
    assert (
        lines[0].startswith("OK game")
        and lines[1] == f"FAILED game {bad.id}: score {bad.score} but the log ends with {game.score}"
        and lines[2].startswith("OK match")
    )


def test_an_export_that_ended_with_an_error_fails(
    records: tuple[Record, Record], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "cut.ndjson"
    path.write_text(ndjson(records[0]) + '{"error":{"reason":"ERROR_REASON_UNAVAILABLE","message":"db gone"}}\n')
    code, lines, _ = run(capsys, str(path))
    assert code == 1 and lines[1] == "FAILED export: the export ended with an error (it is incomplete): db gone"


def test_standard_input(
    records: tuple[Record, Record], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(ndjson(*records)))
    code, lines, _ = run(capsys, "-")
    assert code == 0 and len(lines) == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no records"),
        ("not json\n", "line 1: not JSON"),
        ("[1, 2]\n", "line 1: a JSON object (a record) was expected"),
        ('{"format": "golf.record/1", "seats": 3}\n', "line 1: not a record"),
    ],
)
def test_unreadable_input_exits_2(text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.ndjson"
    path.write_text(text)
    code, _, err = run(capsys, str(path))
    assert code == 2 and message in err and "Traceback" not in err
    code, _, err = run(capsys, str(tmp_path / "missing.ndjson"))
    assert code == 2 and "cannot read" in err and "Traceback" not in err
    path.write_bytes(b"\xff\xfe\x00garbage\n")
    code, _, err = run(capsys, str(path))
    assert code == 2 and "not UTF-8" in err
