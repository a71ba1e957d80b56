"""The steps of a replay, built from a stored log one entry at a time. Pure: no storage, no clock.

Each step is the position right after one log entry, built from the step before (never by replaying the log from
the start again), so a whole replay costs one pass over its log; only the steps of the requested page are kept.
What a step shows is decided later by the one view function of its family (``golf.engine.solitaire.view`` through
``game_to_proto``, ``golf.app.tables.views.view_for``): the states here still hold every hidden card.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from golf.app.records import UNDO, DealRecord, GameRecord, GameSnapshot, MoveRecord, action_moves, shows_stock
from golf.app.tables.clocks import turn_deadline
from golf.app.tables.records import LoggedEntry, TableRecord
from golf.app.tables.state import Table, apply_entry, new_table
from golf.engine.solitaire.state import State, Status


@dataclass(frozen=True, slots=True)
class TableStep:
    """A table right after entry ``index`` of its log (0: the empty table), with when that was and the turn
    deadline a spectator was shown then."""

    index: int
    time: datetime
    table: Table
    turn_deadline: datetime | None


def game_steps(
    game: GameRecord, deal: DealRecord, log: Sequence[MoveRecord], start: int, stop: int
) -> Iterator[GameSnapshot]:
    """The game as it stood at steps ``start`` to ``stop - 1`` (step 0 is the deal; step k follows entry k of the
    log): its row as it was then (version, line, status, score, undos, whether an undo had shown a stock card,
    times) and its position.

    Hints and assisted AutoPlay runs are not entries of the log, so each step carries the game's final counts of
    them (as a stored answer to a retried move does)."""
    # One state per entry in effect: an undo drops the latest, so it costs nothing to step over.
    states = [State.initial(deal.rules, deal.layout)]
    line: list[str] = []
    undos = 0
    seen = False
    if start <= 0 < stop:
        yield _at(game, deal, states[-1], 0, line, undos, seen, game.created_at)
    for k, entry in enumerate(log[: max(stop - 1, 0)], start=1):
        if entry.code == UNDO:
            states.pop()
            undone = line.pop()
            seen = seen or shows_stock(undone)
            undos += 1
        else:
            states.append(states[-1].replay(action_moves(entry.code)))
            line.append(entry.code)
        if k >= start:
            yield _at(game, deal, states[-1], entry.seq, line, undos, seen, entry.created_at)


def _at(
    game: GameRecord,
    deal: DealRecord,
    state: State,
    version: int,
    line: list[str],
    undos: int,
    stock_seen: bool,
    when: datetime,
) -> GameSnapshot:
    over = state.status is not Status.IN_PROGRESS
    row = replace(
        game,
        version=version,
        line=list(line),
        status=state.status.value,
        score=state.score,
        updated_at=when,
        finished_at=when if over else None,
        undos_used=undos,
        stock_seen=stock_seen,
    )
    return GameSnapshot(row, deal, state, when)


def table_steps(
    record: TableRecord, log: Sequence[LoggedEntry], start: int, stop: int
) -> tuple[Table, list[TableStep]]:
    """The table after its whole ``log`` (what decides who may replay it), and the steps ``start`` to
    ``stop - 1`` (step 0 is the empty table, step k follows entry k)."""
    table = new_table(record.options, record.seed)
    times = {0: record.created_at}
    steps: list[TableStep] = []
    if start <= 0 < stop:
        steps.append(_table_step(table, times))
    for k, logged in enumerate(log, start=1):
        table = apply_entry(table, logged.entry)
        times[table.version] = logged.created_at
        if start <= k < stop:
            steps.append(_table_step(table, times))
    return table, steps


def _table_step(table: Table, times: dict[int, datetime]) -> TableStep:
    # The deadline as a reader of the live table was given it: from when the present wait began and when the latest
    # entry was written (``TableWriter.times_of``).
    at = times[table.version]
    return TableStep(table.version, at, table, turn_deadline(table, times[table.wait_from], at))
