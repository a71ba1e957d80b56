"""Table commands. Each takes a table and returns the new table with the entries to append to its log (the
caller stores them in the same transaction as the new version), or raises and leaves the table as it was.

Who may call what (the host, the seat's own player) is the use case's business above this module; here a
command only checks what the table itself forbids. Leaving and resigning:

- before the start, :func:`leave` frees the seat (a person's, or a bot's to remove it);
- after the start, :func:`leave` and :func:`resign` both resign: a ``greedy`` bot plays the seat from its own view
  until the match ends (the seat keeps its player id and its score), so the other players' match goes on;
  when the seat was the last one a person played, the match ends at once (``MatchEnd.ABANDONED``): the holes
  played stay on the sheet, the hole in play is not scored.
"""

from __future__ import annotations

from typing import NamedTuple

from golf.app.errors import InvalidArgument, PermissionDenied
from golf.app.tables.entries import BotAdded, Entry, SeatJoined, SeatLeft, SeatMoved, SeatResigned, TableStarted
from golf.app.tables.errors import TableRefusal, TableRefused
from golf.app.tables.state import Table, apply_entry, checked_move
from golf.app.tables.status import TableStatus
from golf.engine.cardgolf.moves import Move


class Applied(NamedTuple):
    """A command's outcome: the new table and the entries that made it (append them to the log in order)."""

    table: Table
    entries: tuple[Entry, ...]


def _one(table: Table, entry: Entry) -> Applied:
    return Applied(apply_entry(table, entry), (entry,))


def _pick_seat(table: Table, seat: int | None) -> int:
    """``seat`` as asked, or the first free seat; the entry's own checks refuse a taken or missing seat."""
    if table.status is TableStatus.SEATING and seat is None:
        free = next((s for s, x in enumerate(table.seats) if x.empty), None)
        if free is None:
            raise TableRefused(TableRefusal.TABLE_FULL, "every seat is taken")
        return free
    return 0 if seat is None else seat


def join(table: Table, player_id: str, seat: int | None = None, join_code: str | None = None) -> Applied:
    """Seat ``player_id`` at ``seat`` (default: the first free seat). A private table asks for its join code
    (``PermissionDenied`` otherwise); a player holds at most one seat."""
    if not player_id:
        raise InvalidArgument("playerId", "a player id must not be empty")
    if not table.options.code_matches(join_code):
        raise PermissionDenied("this table is private: the join code does not match")
    if table.status is TableStatus.SEATING and table.seat_of(player_id) is not None:
        raise TableRefused(TableRefusal.ALREADY_SEATED, "the player already holds a seat at this table")
    return _one(table, SeatJoined(_pick_seat(table, seat), player_id))


def add_bot(table: Table, kind: str, seat: int | None = None) -> Applied:
    """Seat the bot ``kind`` (a level such as ``greedy``, or a level and a personality, ``strong+racer``; see
    ``golf.engine.cardgolf.bots.catalogue``) at ``seat`` (default: the first free)."""
    return _one(table, BotAdded(_pick_seat(table, seat), kind))


def start(table: Table) -> Applied:
    """Start the match and deal the first hole; every seat must be filled (a table has at least two)."""
    return _one(table, TableStarted())


def act(table: Table, seat: int, move: Move) -> Applied:
    """``seat``'s player makes ``move``, which must be one of the seat's legal moves now (``TableMoveRefused``
    with the engine's reason otherwise, e.g. ``NOT_YOUR_TURN``). A bot's seat is refused: bots move through
    ``golf.app.tables.bots.play_bots``. The move that ends a hole also deals the next one."""
    if table.status is TableStatus.PLAYING and 0 <= seat < len(table.seats):
        if not table.seats[seat].human:
            raise TableRefused(TableRefusal.BOT_SEAT, f"a bot plays seat {seat}")
        assert table.hole is not None
        move = checked_move(table.hole, seat, move)  # the stored move is the listed (canonical) one
    return _one(table, SeatMoved(seat, move))


def leave(table: Table, seat: int) -> Applied:
    """Before the start: free ``seat``. After the start: the same as :func:`resign`."""
    if table.status is TableStatus.PLAYING:
        return resign(table, seat)
    return _one(table, SeatLeft(seat))


def resign(table: Table, seat: int) -> Applied:
    """After the start: ``seat``'s player gives up; a ``greedy`` bot plays on for the seat, or the match ends when
    nobody else at the table is a person (see the module's docstring)."""
    return _one(table, SeatResigned(seat))
