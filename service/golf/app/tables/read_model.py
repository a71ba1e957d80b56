"""What a caller is shown of a live table: the view of one seat (or a spectator's), and the snapshot a use case
answers with. Data only: the one function that makes a view from a table is ``golf.app.tables.views.view_for``, and
the use cases (``golf.app.tables.service``) make snapshots. The refusals of ``errors`` carry a snapshot, so this
module imports neither the table (``state``) nor the refusals: it is what they may both name."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from golf.app.errors import AppError
from golf.app.tables.status import MatchEnd, TableStatus
from golf.engine.cardgolf.match import ScoreSheet
from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.outcome import HoleResult
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.view import SeatView


@dataclass(frozen=True, slots=True)
class SeatInfo:
    """Who sits at a seat: a person (``player_id``), a bot (``bot``: its level), both once a person resigned or is
    away and a bot plays for them, or nobody."""

    seat: int
    player_id: str | None
    bot: str | None
    resigned: bool
    away: bool = False
    """The person missed too many turns in a row: a bot (``bot``) plays for them until they act again (they still
    see their legal moves, to take the seat back)."""
    missed: int = 0
    """The person's turns in a row the turn clock finished for them."""


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
    """What the viewer may send to ``act`` now: empty for spectators, bot seats and when it is not its move (an
    away player's seat is still theirs: they see their moves)."""
    turn_seconds: int | None = None
    """The table's turn clock (``None``: none). The deadline itself needs the log's times: see
    ``golf.app.tables.clocks.turn_deadline``."""
    missed_turns_limit: int = 3
    missed_action: str = "bot"
    bot_delay_ms: int = 0
    """How long bots wait before each move (0: they move at once)."""
    commitment: str = ""
    """SHA-256 hex of the shuffle algorithm, the match seed and the rules' canonical text
    (``golf.app.tables.views.match_commitment``), shown from the table's creation."""
    seed: str | None = None
    """The match seed, revealed once the match is over (``None`` until then)."""


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """A table as one caller sees it: the view of their seat (or a spectator's), and what a client may know of
    the table itself. The seed and the full state never leave the service."""

    table_id: str
    owner_id: str
    created_at: datetime
    view: TableView
    seat: int | None
    """The caller's seat (``None``: the caller watches)."""
    join_code: str | None = None
    """A private table's code, shown to its creator only (to pass on to friends)."""
    replayed: bool = False
    """This is the stored answer to an earlier request with the same idempotency key; nothing changed now."""
    turn_deadline: datetime | None = None
    """When the turn clock of the awaited people runs out (or an away seat's grace): the table acts for them then.
    ``None`` at a table without a turn clock and when no person's move is awaited."""

    @property
    def version(self) -> int:
        return self.view.version


class StaleTableVersion(AppError):
    """The client named a version the table is no longer at; ``current`` is the table as the caller sees it now.
    (The solitaire ``StaleVersion`` carries a solitaire snapshot, so tables have their own.)"""

    def __init__(self, message: str, current: TableSnapshot) -> None:
        super().__init__(message)
        self.current = current
