"""The one error table knows every refusal of a live table: each ``TableRefusal`` and each card Golf ``Refusal``
has its row (never INTERNAL / 500), the reasons 27..52 of the contract are all reachable, moves that can never be
right are INVALID_ARGUMENT naming ``move``, and refusals carry the caller's table when the use case knows it."""

from __future__ import annotations

import grpc
import pytest

from golf.api.errors import to_api_error
from golf.api.table_convert import table_to_proto
from golf.app.identity import Caller
from golf.app.tables.errors import TableMoveRefused, TableRefusal, TableRefused
from golf.app.tables.read_model import StaleTableVersion
from golf.app.tables.service import TableService
from golf.engine.cardgolf.moves import DrawDiscard, IllegalMove, Refusal, Reveal, Swap
from golf.v1 import errors_pb2
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore

R = errors_pb2.ErrorReason
ANN, BOB = Caller("player-ann"), Caller("player-bob")
NEVER_RIGHT = {
    Refusal.NO_SUCH_POSITION,
    Refusal.MALFORMED_MOVE,
    Refusal.DUPLICATE_POSITION,
    Refusal.NO_SUCH_SEAT,
    Refusal.WRONG_REVEAL_COUNT,
}
"""Moves wrong from any position of the table (400); every other refusal is wrong only now (409)."""


def _reason_name(refusal: TableRefusal) -> str:
    table_level = refusal in (TableRefusal.ALREADY_STARTED, TableRefusal.NOT_STARTED)
    return "ERROR_REASON_" + ("TABLE_" if table_level else "") + refusal.name


@pytest.mark.parametrize("refusal", list(TableRefusal), ids=lambda r: r.name)
def test_every_table_refusal_has_its_row(refusal: TableRefusal) -> None:
    failure = to_api_error(TableRefused(refusal, "no"))
    assert R.Name(failure.body.reason) == _reason_name(refusal)
    assert (failure.code, failure.http_status) == (grpc.StatusCode.FAILED_PRECONDITION, 409)
    assert failure.body.status == "FAILED_PRECONDITION" and failure.body.message == "no"
    assert not failure.body.HasField("table") and not failure.body.field


@pytest.mark.parametrize("refusal", list(Refusal), ids=lambda r: r.name)
def test_every_move_refusal_has_its_row(refusal: Refusal) -> None:
    failure = to_api_error(TableMoveRefused(IllegalMove(refusal, "no")))
    assert R.Name(failure.body.reason) == "ERROR_REASON_" + refusal.name
    if refusal in NEVER_RIGHT:
        assert (failure.code, failure.http_status, failure.body.field) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            400,
            "move",
        )
    else:
        assert (failure.code, failure.http_status, failure.body.field) == (grpc.StatusCode.FAILED_PRECONDITION, 409, "")


def test_the_table_reasons_of_the_contract_are_all_reachable() -> None:
    made = {to_api_error(TableRefused(r, "")).body.reason for r in TableRefusal}
    made |= {to_api_error(TableMoveRefused(IllegalMove(r, ""))).body.reason for r in Refusal}
    table_reasons = {v.number for v in R.DESCRIPTOR.values if 27 <= v.number <= 52}
    assert table_reasons <= made
    assert R.ERROR_REASON_INTERNAL not in made


@pytest.fixture
def tables() -> TableService:
    return TableService(FakeStore(), FakeClock(), FakeLimiter())


async def test_refusals_and_stale_versions_carry_the_callers_table(tables: TableService) -> None:
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1)
    await tables.join(BOB, "bob", made.table_id)
    # A seat refusal: the table as Bob sees it (without the creator's join code, in his seat).
    with pytest.raises(TableRefused) as full:
        await tables.join(Caller("player-cat"), "cat", made.table_id)
    assert full.value.current is not None and full.value.current.seat is None
    body = to_api_error(full.value).body
    assert body.reason == R.ERROR_REASON_TABLE_FULL and body.table.id == made.table_id
    started = await tables.start(ANN, made.table_id, "start")
    # A move refused by the engine: Ann's own table, with her legal moves to choose from.
    with pytest.raises(TableMoveRefused) as wrong:
        await tables.act(ANN, made.table_id, Swap(0), "swap")
    failure = to_api_error(wrong.value)
    assert failure.body.reason == R.ERROR_REASON_WRONG_PHASE and failure.http_status == 409
    assert failure.body.table == table_to_proto(started) and failure.body.table.legal_moves
    with pytest.raises(TableMoveRefused) as twice:
        await tables.act(ANN, made.table_id, Reveal((1, 1)), "dup")
    failure = to_api_error(twice.value)
    assert failure.body.reason == R.ERROR_REASON_DUPLICATE_POSITION and failure.body.field == "move"
    assert failure.body.table.your_seat == 0
    # A stale version: ABORTED / 409 with the table as it stands.
    moved = await tables.act(ANN, made.table_id, started.view.legal_moves[0], "reveal")
    with pytest.raises(StaleTableVersion) as stale:
        await tables.act(ANN, made.table_id, DrawDiscard(), "late", expected_version=started.version)
    failure = to_api_error(stale.value)
    assert (failure.code, failure.http_status) == (grpc.StatusCode.ABORTED, 409)
    assert failure.body.reason == R.ERROR_REASON_STALE_VERSION
    assert failure.body.table == table_to_proto(moved) and failure.body.table.version == moved.version


async def test_a_stranger_refused_at_a_private_table_is_not_shown_it(tables: TableService) -> None:
    made = await tables.create_table(ANN, "six-card", seats=2, private=True)
    await tables.join(BOB, "bob", made.table_id, join_code=made.join_code)
    with pytest.raises(TableRefused) as full:
        await tables.join(Caller("player-cat"), "cat", made.table_id, join_code=made.join_code)
    # The code opened the table to the stranger's join, but the refusal does not hold the table for them.
    assert full.value.current is None
    assert not to_api_error(full.value).body.HasField("table")
