"""A live table: its seats, the hole being played, the score sheet of the match. A :class:`Table` is a pure function
of its options, its match seed and its log (:func:`replay`); :func:`apply_entry` is the one place an entry
changes a table, so a command and a replay of the same entry can never disagree.

Holes chain by themselves: the move that ends a hole scores it on the sheet and deals the next one (the deal of
hole ``k`` comes from the match seed, ``golf.engine.cardgolf.match.deal_hole``) until the match is over: every hole
played, or a seat won outright (``golf.engine.cardgolf.match.match_over``).

Turn clocks keep no time here, only what the log says: ``Table.wait_from`` is the version of the entry that began
the wait for the awaited seats (a turn, or a hole's setup), ``Seat.missed`` the turns a person's clock finished for
them in a row and ``Seat.away`` whether a bot plays their turns until they act again
(``golf.app.tables.clocks`` turns these and the entries' times into deadlines).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from golf.app.errors import InvalidArgument
from golf.app.tables.entries import (
    BotAdded,
    Entry,
    SeatJoined,
    SeatLeft,
    SeatMoved,
    SeatResigned,
    SeatTimedOut,
    TableStarted,
)
from golf.app.tables.errors import TableMoveRefused, TableRefusal, TableRefused
from golf.app.tables.options import TableOptions
from golf.app.tables.status import MatchEnd, TableStatus
from golf.engine.cardgolf.bots import BOT_NAMES, is_bot_name
from golf.engine.cardgolf.match import ScoreSheet, deal_hole, match_over
from golf.engine.cardgolf.moves import IllegalMove, Move, Refusal, Reveal, UsePower
from golf.engine.cardgolf.outcome import HoleResult, hole_result
from golf.engine.cardgolf.state import HoleState, Phase

RESIGNED_SEAT_BOT = "greedy"
"""The level of the bot that takes over the seat of a player who resigns."""
AWAY_SEAT_BOT = "greedy"
"""The level of the bot that makes an away player's moves (``golf.app.tables.clocks``)."""


@dataclass(frozen=True, slots=True)
class Seat:
    """One seat: empty, a person (``player_id``), or a bot (``bot``). A person who resigned keeps ``player_id``
    (the score sheet stays theirs) and a bot plays on for them."""

    player_id: str | None = None
    bot: str | None = None
    resigned: bool = False
    missed: int = 0
    """A person's turns in a row that the turn clock finished for them (``SeatTimedOut``); their own move resets
    it."""
    away: bool = False
    """The person missed ``missed_turns_limit`` turns in a row at a table whose action is ``bot``: a greedy bot
    makes their moves (after a short grace) until they make one themselves."""

    @property
    def empty(self) -> bool:
        """Nobody sits here."""
        return self.player_id is None and self.bot is None

    @property
    def human(self) -> bool:
        """A person plays this seat."""
        return self.player_id is not None and self.bot is None


@dataclass(frozen=True, slots=True)
class Table:
    """The whole state of a table, hidden cards and seed included: only :func:`golf.app.tables.views.view_for`
    may turn it into something a client sees."""

    options: TableOptions
    seed: str
    seats: tuple[Seat, ...]
    sheet: ScoreSheet
    status: TableStatus = TableStatus.SEATING
    version: int = 0
    """Entries accepted so far (the length of the log)."""
    hole: HoleState | None = None
    """The hole being played (``None`` before the start and once the match is over)."""
    last_hole: HoleState | None = None
    """The final position of the last hole played (every card revealed), for the end-of-hole screen."""
    results: tuple[HoleResult, ...] = ()
    """Each hole's result with its breakdowns; the sheet holds their points."""
    end: MatchEnd | None = None
    wait_from: int = 0
    """The version whose entry began the present wait: the start, the entry that dealt the hole in play (its setup
    clock runs for every seat not ready), or the move that ended the last turn; 0 (the table's creation) while
    seating. A move in the middle of a turn (a draw, a discard before the flip) does not restart it."""

    @property
    def hole_index(self) -> int:
        """0-based index of the hole being played (or of the next one)."""
        return len(self.sheet.holes)

    def seat_of(self, player_id: str) -> int | None:
        """The seat ``player_id`` holds (also after resigning), if any."""
        return next((s for s, seat in enumerate(self.seats) if seat.player_id == player_id), None)

    def awaiting(self) -> tuple[int, ...]:
        """The seats whose move the table waits for: during a hole's setup every seat not ready (they choose their
        start cards in any order), then the seat whose turn it is."""
        hole = self.hole
        if self.status is not TableStatus.PLAYING or hole is None or hole.over:
            return ()
        if hole.phase is Phase.SETUP:
            return tuple(s for s in range(hole.players) if not hole.ready[s])
        return (hole.turn,)


def new_table(options: TableOptions, seed: str) -> Table:
    """An empty table (version 0). ``seed`` is the match seed every hole is dealt from (the service draws it with
    ``secrets``); raises ``InvalidArgument`` for options that cannot make a match or an empty seed."""
    options.validate()
    if not seed:
        raise InvalidArgument("seed", "the match seed must not be empty")
    return Table(
        options=options,
        seed=seed,
        seats=tuple(Seat() for _ in range(options.seats)),
        sheet=ScoreSheet(options.seats),
    )


def replay(options: TableOptions, seed: str, log: Iterable[Entry]) -> Table:
    """The table after ``log``, rebuilt from nothing: the same seats, cards, hole and score sheet as the table that
    accepted those entries. Raises what :func:`apply_entry` raises if the log was not made by this module."""
    table = new_table(options, seed)
    for entry in log:
        table = apply_entry(table, entry)
    return table


def apply_entry(table: Table, entry: Entry) -> Table:
    """The table after ``entry`` (version + 1); raises ``TableRefused``, ``TableMoveRefused`` or
    ``InvalidArgument`` and leaves ``table`` as it was when the entry does not fit the table's state."""
    if isinstance(entry, SeatJoined | BotAdded):
        _check_seating(table)
        seat = _free_seat(table, entry.seat)
        if isinstance(entry, SeatJoined):
            if not entry.player_id:
                raise InvalidArgument("playerId", "a player id must not be empty")
            if table.seat_of(entry.player_id) is not None:
                raise TableRefused(TableRefusal.ALREADY_SEATED, "the player already holds a seat at this table")
            taken = Seat(player_id=entry.player_id)
        else:
            if not is_bot_name(entry.kind):
                raise InvalidArgument("kind", f"unknown bot; choose one of {', '.join(BOT_NAMES)} (+ a personality)")
            taken = Seat(bot=entry.kind)
        return _with_seat(table, seat, taken, version=table.version + 1)
    if isinstance(entry, SeatLeft):
        _check_seating(table)
        seat = _seat_index(table, entry.seat)
        if table.seats[seat].empty:
            raise TableRefused(TableRefusal.SEAT_EMPTY, f"seat {seat} is empty")
        return _with_seat(table, seat, Seat(), version=table.version + 1)
    if isinstance(entry, TableStarted):
        _check_seating(table)
        empty = [s for s, seat in enumerate(table.seats) if seat.empty]
        if empty:
            raise TableRefused(TableRefusal.SEATS_EMPTY, f"seats {empty} are empty: fill them (or add bots) first")
        hole = deal_hole(table.options.rules, table.options.seats, table.seed, 0)
        version = table.version + 1
        return replace(table, status=TableStatus.PLAYING, hole=hole, version=version, wait_from=version)
    if isinstance(entry, SeatResigned):
        _check_playing(table)
        seat = _seat_index(table, entry.seat)
        current = table.seats[seat]
        if not current.human:
            raise TableRefused(TableRefusal.BOT_SEAT, f"a bot plays seat {seat}; there is nobody to resign")
        table = _with_seat(table, seat, replace(current, bot=RESIGNED_SEAT_BOT, resigned=True, away=False))
        if not any(s.human for s in table.seats):
            table = replace(table, status=TableStatus.OVER, end=MatchEnd.ABANDONED, hole=None)
        return replace(table, version=table.version + 1)
    return _apply_move(table, entry)


def _apply_move(table: Table, entry: SeatMoved | SeatTimedOut) -> Table:
    _check_playing(table)
    seat = _seat_index(table, entry.seat)
    current = table.seats[seat]
    if isinstance(entry, SeatTimedOut) and not current.human:
        raise TableRefused(TableRefusal.BOT_SEAT, f"a bot plays seat {seat}: no clock runs for it")
    hole = table.hole
    assert hole is not None
    hole = hole.apply(seat, checked_move(hole, seat, entry.move))
    version = table.version + 1
    # The seat's turn is over unless it still holds a drawn card, owes the flip after a discard, or is in the middle
    # of a power (choosing a card, a second power); the setup "turn" is the one reveal.
    turn_over = not hole.mid_turn
    table = replace(table, hole=hole, version=version)
    if turn_over and hole.phase is not Phase.SETUP:
        table = replace(table, wait_from=version)  # the next turn's clock (or the next hole's setup clock) starts
    if current.human:
        table = _with_seat(table, seat, _counted(table.options, current, entry, turn_over))
    if not hole.over:
        return table
    result = hole_result(hole)
    sheet = table.sheet.add(result)
    table = replace(table, sheet=sheet, results=(*table.results, result), last_hole=hole)
    rules = table.options.rules
    if match_over(rules, sheet):
        return replace(table, status=TableStatus.OVER, end=MatchEnd.COMPLETED, hole=None)
    return replace(table, hole=deal_hole(rules, table.options.seats, table.seed, len(sheet.holes)))


def _counted(options: TableOptions, seat: Seat, entry: SeatMoved | SeatTimedOut, turn_over: bool) -> Seat:
    """A person's seat after ``entry``: their own move resets the missed turns and brings them back from away; a
    timeout that finishes their turn counts one missed turn (a turn finished in several timed-out moves is one)."""
    if isinstance(entry, SeatMoved):
        return replace(seat, missed=0, away=False) if seat.missed or seat.away else seat
    if not turn_over:
        return seat
    missed = seat.missed + 1
    away = seat.away or (options.missed_action == "bot" and missed >= options.missed_turns_limit)
    return replace(seat, missed=missed, away=away)


def checked_move(hole: HoleState, seat: int, move: Move) -> Move:
    """``move`` when it is one of ``seat``'s legal moves (a reveal may name its positions in any order); otherwise
    raise ``TableMoveRefused`` with the engine's reason. The engine accepts a few moves it does not list (a power's
    target fields it ignores, a reveal's positions out of order); the table takes only listed moves, so what is
    stored is what clients were offered."""
    if isinstance(move, Reveal):
        move = Reveal(tuple(sorted(move.positions)))
    legal = hole.legal_moves(seat)
    if move in legal:
        return move
    try:
        hole.apply(seat, move)
    except IllegalMove as err:
        raise TableMoveRefused(err) from None
    reason = Refusal.BAD_TARGET if isinstance(move, UsePower) else Refusal.WRONG_PHASE
    raise TableMoveRefused(IllegalMove(reason, f"{move.code} is not one of seat {seat}'s legal moves now"))


def _check_seating(table: Table) -> None:
    if table.status is TableStatus.PLAYING:
        raise TableRefused(TableRefusal.ALREADY_STARTED, "the match has started: seats no longer change")
    if table.status is TableStatus.OVER:
        raise TableRefused(TableRefusal.MATCH_OVER, "the match is over")


def _check_playing(table: Table) -> None:
    if table.status is TableStatus.SEATING:
        raise TableRefused(TableRefusal.NOT_STARTED, "the match has not started")
    if table.status is TableStatus.OVER:
        raise TableRefused(TableRefusal.MATCH_OVER, "the match is over")


def _seat_index(table: Table, seat: int) -> int:
    if not 0 <= seat < len(table.seats):
        raise InvalidArgument("seat", f"the table has seats 0 to {len(table.seats) - 1}")
    return seat


def _free_seat(table: Table, seat: int) -> int:
    seat = _seat_index(table, seat)
    if not table.seats[seat].empty:
        raise TableRefused(TableRefusal.SEAT_TAKEN, f"seat {seat} is taken")
    return seat


def _with_seat(table: Table, seat: int, value: Seat, version: int | None = None) -> Table:
    seats = tuple(value if s == seat else old for s, old in enumerate(table.seats))
    return replace(table, seats=seats, version=table.version if version is None else version)
