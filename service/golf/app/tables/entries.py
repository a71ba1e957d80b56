"""The entries of a table's append-only log. A table is a pure function of its options, its match seed and these
entries (``golf.app.tables.state.replay``); each accepted entry raises the table's version by one.

Entries record facts, never choices still to make: a join names the seat it took, a bot's move is stored as the
move it chose, a timeout as the move made for the seat, so replaying never runs a bot or looks at a clock.
"""

from __future__ import annotations

from dataclasses import dataclass

from golf.engine.cardgolf.moves import Move


@dataclass(frozen=True, slots=True)
class SeatJoined:
    """Player ``player_id`` took the free seat ``seat`` (before the start)."""

    seat: int
    player_id: str


@dataclass(frozen=True, slots=True)
class BotAdded:
    """The bot ``kind`` (a level, ``greedy``, or a level and a personality, ``strong+racer``) took the free seat
    ``seat`` (before the start)."""

    seat: int
    kind: str


@dataclass(frozen=True, slots=True)
class TableStarted:
    """Every seat was filled and the first hole was dealt."""


@dataclass(frozen=True, slots=True)
class SeatMoved:
    """``seat`` (a person or a bot) made ``move``, one of its legal moves at the time."""

    seat: int
    move: Move


@dataclass(frozen=True, slots=True)
class SeatTimedOut:
    """The turn clock ran out for the person at ``seat`` and ``move`` was made for them: the table's timeout action
    (a safe default move, ``golf.app.tables.clocks.timeout_move``), or, while the seat is away, the move a greedy
    bot chose from the seat's view. One of the seat's legal moves at the time."""

    seat: int
    move: Move


@dataclass(frozen=True, slots=True)
class SeatLeft:
    """Before the start: whoever sat at ``seat`` (a person or a bot) left, and the seat is free again."""

    seat: int


@dataclass(frozen=True, slots=True)
class SeatResigned:
    """After the start: the player at ``seat`` resigned; a ``greedy`` bot plays the seat from then on, or the match
    ends when no person is left at the table."""

    seat: int


Entry = SeatJoined | BotAdded | TableStarted | SeatMoved | SeatTimedOut | SeatLeft | SeatResigned
"""Any entry of a table's log."""
