"""Where a table stands and why its match ended: a leaf, so the records a store returns (``records``), the ports
and the read model (``read_model``) name a table's status without importing the table itself (``state``)."""

from __future__ import annotations

from enum import Enum


class TableStatus(Enum):
    """Where a table stands."""

    SEATING = "seating"
    """Seats are being filled; nothing is dealt."""
    PLAYING = "playing"
    OVER = "over"


class MatchEnd(Enum):
    """Why a match ended."""

    COMPLETED = "completed"
    """Every hole was played, or a seat won the match outright (four alike under ``four_alike_wins_match``: the
    sheet's ``won_by``)."""
    ABANDONED = "abandoned"
    """The last person at the table resigned; the hole in play is not scored."""
