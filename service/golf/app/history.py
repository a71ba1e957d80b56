"""What a player's history holds: one ``PlayedRecord`` per finished solitaire game, round or card Golf match."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import Enum

from golf.app.records import Unranked


class RecordKind(Enum):
    GAME = "game"
    ROUND = "round"
    MATCH = "match"


class Family(Enum):
    SOLITAIRE = "solitaire"
    CARD_GOLF = "card_golf"

    @property
    def kinds(self) -> tuple[RecordKind, ...]:
        if self is Family.SOLITAIRE:
            return (RecordKind.GAME, RecordKind.ROUND)
        return (RecordKind.MATCH,)


class Result(Enum):
    """A solitaire game is won when its columns are cleared; a round when its total is par or better; a match when
    the player alone has the lowest total (drawn when they share it)."""

    WON = "won"
    LOST = "lost"
    DRAWN = "drawn"


@dataclass(frozen=True, slots=True)
class PlayedRecord:
    """One player's finished game, round or match, as their history shows it."""

    player_id: str
    issuer: str
    kind: RecordKind
    record_id: str
    lead: bool
    """One record per game or match is the lead (what an export lists once)."""
    preset: str
    result: Result
    score: int
    holes: int
    moves: int
    hints: int
    undos: int
    duration_ms: int
    started_at: datetime
    finished_at: datetime
    rated: bool
    """Counts for the boards: a scored game (``unranked`` None), a round of such games, a rated match."""
    par: int | None = None
    place: int | None = None
    players: int | None = None
    deal_id: str | None = None
    id: int = 0
    """The row's number, in commit order per player (0 before it is stored)."""
    unranked: Unranked | None = None
    """Why a game or round is not ``rated`` (None for a match, and for rows stored before reasons were)."""


@dataclass(frozen=True, slots=True)
class HistoryFilter:
    """ListHistory's filters; None means any."""

    family: Family | None = None
    preset: str | None = None
    result: Result | None = None
    finished_after: datetime | None = None
    """Inclusive."""
    finished_before: datetime | None = None


def duration_ms(start: datetime, end: datetime) -> int:
    """Whole milliseconds from ``start`` to ``end`` (never negative)."""
    delta = end - start
    return max(0, delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000)


@dataclass(frozen=True, slots=True)
class DealStats:
    """Players' finished games on a solitaire deal, summed."""

    deal_id: str
    preset: str
    plays: int
    wins: int
    score_sum: int
    duration_ms_sum: int


@dataclass(frozen=True, slots=True)
class BoardScope:
    """Whose entries a board shows: every issuer but ``hidden`` ones, or ``only`` one issuer."""

    hidden: tuple[str, ...] = ()
    only: str | None = None
