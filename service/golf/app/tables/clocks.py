"""Work that falls due at a table by time alone: turn clocks, paced bots, an away player's bot, quick play's autofill.

Pure, and no clock is read here: the caller passes the times, taken from the log (``LoggedEntry.created_at``), so
a table rebuilt after a restart has the same deadlines:

- ``awaited_since``: when the present wait began, the time of the entry ``Table.wait_from`` names (while the table
  seats players: when it was created);
- ``last_at``: when the table's latest entry was written (the time of entry ``Table.version``).

What is due, and when (:func:`due_at` gives the earliest):

- a paced bot's move (``bot_delay_ms`` > 0): ``bot_delay_ms`` after the latest entry; one bot move at a time;
- a person whose move is awaited past the turn clock: ``turn_seconds`` after ``awaited_since`` (during a hole's
  setup every seat not ready has the same clock, from the hole's deal). The rest of the turn is made for them with
  the timeout action (:func:`timeout_move`), each move a ``SeatTimedOut``. A turn finished so counts one missed turn;
  at ``missed_turns_limit`` missed turns in a row the seat is *away* (action ``bot``) or the player resigns (action
  ``resign``, a ``SeatResigned`` after the timed-out turn);
- an away seat: after a short grace (:func:`away_grace`, counted from the latest entry, never past the turn clock) a
  greedy bot plays the seat's turn from the seat's own view, as ``SeatTimedOut`` entries. Until then the player may
  take the seat back by acting (their own move clears ``away``);
- autofill (quick play): ``autofill_seconds`` after the table was created, greedy bots take every empty seat and the
  match starts. A table with nobody seated waits for a person first (bots do not play a match alone).

Bots, and the timeout action, only ever see their seat's view (``golf.engine.cardgolf.view``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from golf.app.tables.bots import bot_seed, immediate_bots, pending_bot_seat, play_bots
from golf.app.tables.commands import Applied
from golf.app.tables.entries import BotAdded, Entry, SeatResigned, SeatTimedOut, TableStarted
from golf.app.tables.options import TableOptions
from golf.app.tables.state import AWAY_SEAT_BOT, Table, apply_entry
from golf.app.tables.status import TableStatus
from golf.engine.cardgolf.bots import make_bot
from golf.engine.cardgolf.moves import Discard, DrawDiscard, DrawStock, Flip, Move, Pass, Swap
from golf.engine.cardgolf.state import Phase
from golf.engine.cardgolf.view import SeatView, view

AWAY_GRACE_SECONDS = 10
"""The longest an away player's turn waits for them before the bot plays it."""
AUTOFILL_BOT = "greedy"
"""The level of the bots that fill a quick play table's empty seats."""


def away_grace(options: TableOptions) -> timedelta:
    """How long an away seat's turn waits for its player: the turn clock, but at most :data:`AWAY_GRACE_SECONDS`."""
    seconds = AWAY_GRACE_SECONDS if options.turn_seconds is None else min(options.turn_seconds, AWAY_GRACE_SECONDS)
    return timedelta(seconds=seconds)


def timeout_move(seat_view: SeatView) -> Move:
    """The timeout action: a safe default move for the viewing seat, decided from its own view only, always one of
    ``seat_view.legal_moves`` (``ValueError`` when there is none).

    - setup: turn up (or peek at) the first start cards, the first reveal listed (the lowest positions);
    - draw: draw from the stock (from the discard pile if the stock is empty; never a knock or a peek stroke);
    - holding a card: discard it; a card taken from the discard pile must be swapped in, so it replaces the seat's
      face-up card of the highest value that may be swapped (the lowest position of equals), or the first place it
      may swap when there is none;
    - after a discard: pass when the rules allow it, else turn up the first face-down card;
    - after a power that lends a second one: pass; choosing among drawn cards (the 8 of Powers): keep the first
      offered card (the power card itself) at the first place.
    """
    legal = seat_view.legal_moves
    if not legal:
        raise ValueError("the seat has no move to make now")
    seat = seat_view.seat
    assert seat is not None
    phase = seat_view.phase
    if phase is Phase.DRAW:
        if DrawStock() in legal and seat_view.stock_count > 0:
            return DrawStock()
        if DrawDiscard() in legal:
            return DrawDiscard()
    elif phase is Phase.PLACE:
        if Discard() in legal:
            return Discard()
        grid, up = seat_view.grids[seat], seat_view.face_up[seat]
        shown = [(p, card) for p, card in enumerate(grid) if up[p] and card is not None and Swap(p) in legal]
        if shown:
            rules = seat_view.rules
            position, _ = max(shown, key=lambda pc: (rules.card_value(pc[1]), -pc[0]))
            return Swap(position)
        swaps = [m for m in legal if isinstance(m, Swap)]
        if swaps:
            return swaps[0]
    elif phase in (Phase.FLIP, Phase.POWER):  # a power's second use is skipped like a flip
        if Pass() in legal:
            return Pass()
        flips = [m for m in legal if isinstance(m, Flip)]
        if flips:
            return min(flips, key=lambda m: m.position)
    return legal[0]  # setup: the first reveal listed; otherwise a fallback that never happens with today's rules


def _seat_deadline(table: Table, seat: int, awaited_since: datetime, last_at: datetime) -> datetime | None:
    options = table.options
    clock = None if options.turn_seconds is None else awaited_since + timedelta(seconds=options.turn_seconds)
    if table.seats[seat].away:
        grace = last_at + away_grace(options)
        return grace if clock is None else min(grace, clock)
    return clock


def turn_deadline(table: Table, awaited_since: datetime, last_at: datetime | None = None) -> datetime | None:
    """When the table acts for the awaited people if they do not (the timeout action, or an away seat's bot):
    the earliest deadline of the awaited seats a person plays. ``None`` at a table without a turn clock, and when
    no person's move is awaited."""
    if table.options.turn_seconds is None:
        return None
    last = awaited_since if last_at is None else last_at
    deadlines = [
        d
        for s in table.awaiting()
        if table.seats[s].human and (d := _seat_deadline(table, s, awaited_since, last)) is not None
    ]
    return min(deadlines, default=None)


def due_at(table: Table, awaited_since: datetime, last_at: datetime | None = None) -> datetime | None:
    """The earliest time work falls due at ``table`` (see the module docstring), or ``None`` when nothing will
    until someone acts. ``last_at`` defaults to ``awaited_since``."""
    last = awaited_since if last_at is None else last_at
    options = table.options
    if table.status is TableStatus.SEATING:
        if options.autofill_seconds is None or not any(seat.human for seat in table.seats):
            return None
        return awaited_since + timedelta(seconds=options.autofill_seconds)
    if table.status is not TableStatus.PLAYING:
        return None
    times: list[datetime] = []
    if pending_bot_seat(table) is not None:
        times.append(last + timedelta(milliseconds=options.bot_delay_ms))
    for s in table.awaiting():
        if table.seats[s].human and (deadline := _seat_deadline(table, s, awaited_since, last)) is not None:
            times.append(deadline)
    return min(times, default=None)


def autofill(table: Table) -> Applied:
    """Quick play's autofill: a greedy bot in every empty seat, then the start (the first hole is dealt)."""
    entries: list[Entry] = [BotAdded(s, AUTOFILL_BOT) for s, seat in enumerate(table.seats) if seat.empty]
    entries.append(TableStarted())
    for entry in entries:
        table = apply_entry(table, entry)
    return Applied(table, tuple(entries))


def due_work(table: Table, awaited_since: datetime, last_at: datetime, now: datetime) -> Applied:
    """What is due at ``table`` by ``now``, as the entries to append (none when nothing is): autofill; the timed
    out turns of people past their clock; the turns of away seats past their grace; else one paced bot move. Then,
    at a table that does not pace its bots, every bot move that came due with them (as a mutation would)."""
    due = due_at(table, awaited_since, last_at)
    if due is None or due > now:
        return Applied(table, ())
    entries: list[Entry] = []
    if table.status is TableStatus.SEATING:
        filled = autofill(table)
        table, entries = filled.table, list(filled.entries)
    else:
        start = table
        for s in start.awaiting():
            seat = start.seats[s]
            deadline = _seat_deadline(start, s, awaited_since, last_at)
            if not seat.human or deadline is None or deadline > now:
                continue
            if table.status is not TableStatus.PLAYING or s not in table.awaiting():
                continue  # pragma: no cover - a setup reveal never ends the hole, and only setup awaits several seats
            table = _timed_out_turn(table, s, entries, bot=seat.away)
        if not entries and pending_bot_seat(table) is not None:
            # One paced bot move: the next one falls due a delay after it.
            paced = play_bots(table, max_moves=1)
            table, entries = paced.table, list(paced.entries)
    if table.status is TableStatus.PLAYING:
        bots = immediate_bots(table)
        table = bots.table
        entries.extend(bots.entries)
    return Applied(table, tuple(entries))


def _timed_out_turn(table: Table, seat: int, entries: list[Entry], bot: bool) -> Table:
    """Finish ``seat``'s turn for its player (the timeout action, or the away seat's bot), appending the entries;
    then resign the player when the table says so."""
    hole_index = table.hole_index
    while True:
        hole = table.hole
        assert hole is not None
        seen = view(hole, seat)
        chooser = make_bot(AWAY_SEAT_BOT, bot_seed(table.seed, table.version)).choose if bot else timeout_move
        entry = SeatTimedOut(seat, chooser(seen))
        table = apply_entry(table, entry)
        entries.append(entry)
        after = table.hole
        mid_turn = after is not None and after.mid_turn
        if table.status is not TableStatus.PLAYING or table.hole_index != hole_index or not mid_turn:
            break
    options = table.options
    current = table.seats[seat]
    if (
        options.missed_action == "resign"
        and table.status is TableStatus.PLAYING
        and current.human
        and current.missed >= options.missed_turns_limit
    ):
        resigned = SeatResigned(seat)
        table = apply_entry(table, resigned)
        entries.append(resigned)
    return table
