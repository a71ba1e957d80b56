"""Leaderboards: their names, and each player's entry on them with the keys the board is ordered by.

A board is a name (``deal:<deal id>``, ``rounds:9:standard:all``, ``wins:six-card``, ``rating:*``) and one entry per
player, ordered by ``(k1, k2, k3, reached_at, player_id)`` ascending: the last two make every rank distinct. The
entries are kept up to date in the transaction of the move that changes them (``golf.app.recording``), so reading
a page or a rank is an index range scan, never an aggregate over games.

- Score boards (a deal, the rounds boards): lowest score, then shortest time, then fewest assists (undos, hints
  and AutoPlay runs the solver chose), then the earliest finish. A player's entry is their best.
- ``wins``: most rated match wins, then fewest matches, then the earliest to reach the count.
- ``pph`` (points per hole): lowest average (in thousandths of a point), then most holes; only players with a
  minimum of holes (``qualifier``) are shown.
- ``rating``: highest displayed rating (mu - 3 sigma, in millionths), then most matches. A preset's rating board
  (``rating:six-card``) is a rating of that preset's matches only, as ``wins`` and ``pph`` count them; ``rating:*``
  rates every match. A rating entry also shows the wins, holes and points of its ``wins`` entry.

The card Golf boards (``wins``, ``pph``, ``rating``) exist per card Golf preset and for all of them (``*``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from enum import Enum

ALL_PRESETS = "*"
RATING_PREFIX = "rating:"
RATING_BOARD = f"{RATING_PREFIX}{ALL_PRESETS}"
"""The rating board of every preset's matches."""


class Period(Enum):
    """Which finishes a rounds board counts (UTC weeks start on Monday, ISO weeks)."""

    ALL_TIME = "all"
    WEEK = "week"
    MONTH = "month"


def deal_board(deal_id: str) -> str:
    """Every player's scored game on one solitaire deal (the daily deal's board is its deal's)."""
    return f"deal:{deal_id}"


def period_tag(period: Period, at: datetime) -> str:
    """The part of a rounds board's name that says which week or month ``at`` falls in."""
    if period is Period.WEEK:
        year, week, _ = at.isocalendar()
        return f"w{year}-W{week:02d}"
    if period is Period.MONTH:
        return f"m{at.year}-{at.month:02d}"
    return "all"


def rounds_board(holes: int, preset: str, period: Period, at: datetime) -> str:
    """Each player's best round of ``holes`` of ``preset`` in the ``period`` that holds ``at``."""
    return f"rounds:{holes}:{preset}:{period_tag(period, at)}"


def wins_board(preset: str) -> str:
    return f"wins:{preset}"


def points_board(preset: str) -> str:
    return f"pph:{preset}"


def rating_board(preset: str) -> str:
    """The rating of ``preset``'s matches (``ALL_PRESETS``: of every match, ``RATING_BOARD``)."""
    return f"{RATING_PREFIX}{preset}"


def is_rating_board(board: str) -> bool:
    """Whether ``board`` is a rating board (its entries hold a rating)."""
    return board.startswith(RATING_PREFIX)


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """A player's entry on a board: the keys it is ordered by and what it shows."""

    board: str
    player_id: str
    issuer: str
    """The player's issuer (``golf`` for guests): boards leave out portals that keep their players private."""
    k1: int
    k2: int
    k3: int
    reached_at: datetime
    qualifier: int = 0
    record_id: str | None = None
    score: int = 0
    duration_ms: int = 0
    assists: int = 0
    matches: int = 0
    wins: int = 0
    holes: int = 0
    points: int = 0
    mu: float = 0.0
    sigma: float = 0.0

    @property
    def key(self) -> tuple[int, int, int, datetime, str]:
        """Where the entry stands: a smaller key ranks higher."""
        return (self.k1, self.k2, self.k3, self.reached_at, self.player_id)


def score_entry(
    board: str,
    player_id: str,
    issuer: str,
    score: int,
    duration_ms: int,
    assists: int,
    finished_at: datetime,
    record_id: str,
) -> BoardEntry:
    """An entry of a score board (a deal, rounds): score, then time, then assists."""
    return BoardEntry(
        board,
        player_id,
        issuer,
        score,
        duration_ms,
        assists,
        finished_at,
        record_id=record_id,
        score=score,
        duration_ms=duration_ms,
        assists=assists,
    )


def best(old: BoardEntry | None, new: BoardEntry) -> BoardEntry | None:
    """What a score board should hold after ``new``: ``new`` when it beats ``old`` (None: keep ``old``)."""
    return new if old is None or new.key < old.key else None


def match_entries(
    old_wins: BoardEntry | None,
    old_points: BoardEntry | None,
    board_suffix: str,
    player_id: str,
    issuer: str,
    won: bool,
    holes: int,
    points: int,
    at: datetime,
) -> tuple[BoardEntry, BoardEntry]:
    """A player's ``wins`` and ``pph`` entries (of one preset, or of all) after one more rated match."""
    matches = (old_wins.matches if old_wins else 0) + 1
    wins = (old_wins.wins if old_wins else 0) + won
    total_holes = (old_wins.holes if old_wins else 0) + holes
    total_points = (old_wins.points if old_wins else 0) + points
    # "The earliest to reach the count": the time moves only when the count does.
    wins_at = at if old_wins is None or won else old_wins.reached_at
    wins_entry = BoardEntry(
        wins_board(board_suffix),
        player_id,
        issuer,
        -wins,
        matches,
        0,
        wins_at,
        matches=matches,
        wins=wins,
        holes=total_holes,
        points=total_points,
    )
    per_hole = milli_per_hole(total_points, total_holes)
    points_at = at if old_points is None or old_points.k1 != per_hole else old_points.reached_at
    points_entry = replace(
        wins_entry, board=points_board(board_suffix), k1=per_hole, k2=-total_holes, reached_at=points_at
    )
    return wins_entry, replace(points_entry, qualifier=total_holes)


def milli_per_hole(points: int, holes: int) -> int:
    """Average points per hole in thousandths, rounded half away from zero (0 without holes)."""
    if holes <= 0:
        return 0
    sign = -1 if points < 0 else 1
    return sign * ((abs(points) * 1000 * 2 + holes) // (2 * holes))


def rating_entry(
    old: BoardEntry | None,
    player_id: str,
    issuer: str,
    mu: float,
    sigma: float,
    at: datetime,
    board: str = RATING_BOARD,
    counts: BoardEntry | None = None,
) -> BoardEntry:
    """A player's entry on the rating board ``board`` after a rated match. ``counts``: the player's ``wins`` entry
    of the same presets after the match, whose matches, wins, holes and points the entry shows (both boards count
    the same rated matches; without it the matches are counted here and the rest stay 0)."""
    matches = counts.matches if counts is not None else (old.matches if old else 0) + 1
    return BoardEntry(
        board,
        player_id,
        issuer,
        -round((mu - 3 * sigma) * 1_000_000),
        -matches,
        0,
        at,
        matches=matches,
        wins=counts.wins if counts is not None else 0,
        holes=counts.holes if counts is not None else 0,
        points=counts.points if counts is not None else 0,
        mu=mu,
        sigma=sigma,
    )


@dataclass(frozen=True, slots=True)
class BoardRows:
    """A page of a board: its entries, their players' display names, and how many entries rank above the first."""

    entries: list[BoardEntry]
    names: dict[str, str]
    ahead: int
