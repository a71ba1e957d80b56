"""What a viewer (a seat, or ``None`` for a spectator) sees of a table. Every hole position shown passes through
the engine's one observation function (``golf.engine.cardgolf.view``); the seed, the stock's order and the
face-down cards the viewer may not know never appear, and the join code is left to the host's own screens."""

from __future__ import annotations

from dataclasses import dataclass

from golf.app.errors import InvalidArgument
from golf.app.tables.state import MatchEnd, Table, TableStatus
from golf.engine.cardgolf.match import ScoreSheet
from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.outcome import HoleResult
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.view import SeatView, view


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """Who sits at a seat: a person (``player_id``), a bot (``bot``: its level), both once a person resigned and a
    bot plays on for them, or nobody."""

    seat: int
    player_id: str | None
    bot: str | None
    resigned: bool


@dataclass(frozen=True, slots=True)
class TableView:
    """A table as ``viewer`` sees it."""

    viewer: int | None
    version: int
    preset: str
    rules: GolfRules
    holes: int
    listed: bool
    status: TableStatus
    end: MatchEnd | None
    seats: tuple[SeatInfo, ...]
    hole_number: int | None
    """1-based number of the hole in play (``None`` before the start and once the match is over)."""
    awaiting: tuple[int, ...]
    """The seats whose move the table waits for (several during a hole's setup)."""
    hole: SeatView | None
    """The hole in play as the viewer's seat (or a spectator) sees it."""
    last_hole: SeatView | None
    """The last finished hole, every card revealed, with its result."""
    sheet: ScoreSheet
    results: tuple[HoleResult, ...]
    legal_moves: tuple[Move, ...]
    """What the viewer may send to ``act`` now: empty for spectators, bot seats and when it is not its move."""


def view_for(table: Table, viewer: int | None) -> TableView:
    """The view of ``table`` for seat ``viewer`` (``None``: a spectator). Raises ``InvalidArgument`` for a seat the
    table does not have."""
    if viewer is not None and not 0 <= viewer < len(table.seats):
        raise InvalidArgument("seat", f"the table has seats 0 to {len(table.seats) - 1}")
    hole = view(table.hole, viewer) if table.hole is not None else None
    last = view(table.last_hole, viewer) if table.last_hole is not None else None
    legal: tuple[Move, ...] = ()
    if hole is not None and viewer is not None and table.seats[viewer].human:
        legal = hole.legal_moves
    options = table.options
    return TableView(
        viewer=viewer,
        version=table.version,
        preset=options.preset,
        rules=options.rules,
        holes=options.holes,
        listed=options.listed,
        status=table.status,
        end=table.end,
        seats=tuple(SeatInfo(s, seat.player_id, seat.bot, seat.resigned) for s, seat in enumerate(table.seats)),
        hole_number=table.hole_index + 1 if table.hole is not None else None,
        awaiting=table.awaiting(),
        hole=hole,
        last_hole=last,
        sheet=table.sheet,
        results=table.results,
        legal_moves=legal,
    )
