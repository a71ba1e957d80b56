"""Live tables of card Golf: seats for people and bots, a match of holes, an append-only log, per-viewer views.

Pure: no storage, no clock, no transport. A table is a function of (options, match seed, log):

- ``options``: :class:`TableOptions`; ``entries``: what a log holds; ``state``: :class:`Table`, :func:`replay`;
- ``commands``: join, add_bot, start, act, leave, resign (each returns the new table and the entries to store);
- ``bots``: :func:`play_bots`, the bot turns as entries; ``views``: :func:`view_for`, all a client may see;
- ``clocks``: what falls due by time (turn clocks, paced bots, away seats, quick play's autofill): :func:`due_at`,
  :func:`due_work`, :func:`turn_deadline`, the timeout action :func:`timeout_move`.
"""

from golf.app.tables.bots import bot_seed, immediate_bots, pending_bot_seat, play_bots
from golf.app.tables.clocks import (
    AUTOFILL_BOT,
    AWAY_GRACE_SECONDS,
    autofill,
    away_grace,
    due_at,
    due_work,
    timeout_move,
    turn_deadline,
)
from golf.app.tables.commands import Applied, act, add_bot, join, leave, resign, start
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
from golf.app.tables.options import MAX_HOLES, MAX_SEATS, MIN_HOLES, MIN_SEATS, TableOptions
from golf.app.tables.state import (
    AWAY_SEAT_BOT,
    RESIGNED_SEAT_BOT,
    MatchEnd,
    Seat,
    Table,
    TableStatus,
    apply_entry,
    new_table,
    replay,
)
from golf.app.tables.views import SeatInfo, TableView, view_for

__all__ = [
    "AUTOFILL_BOT",
    "AWAY_GRACE_SECONDS",
    "AWAY_SEAT_BOT",
    "MAX_HOLES",
    "MAX_SEATS",
    "MIN_HOLES",
    "MIN_SEATS",
    "RESIGNED_SEAT_BOT",
    "Applied",
    "BotAdded",
    "Entry",
    "MatchEnd",
    "Seat",
    "SeatInfo",
    "SeatJoined",
    "SeatLeft",
    "SeatMoved",
    "SeatResigned",
    "SeatTimedOut",
    "Table",
    "TableMoveRefused",
    "TableOptions",
    "TableRefusal",
    "TableRefused",
    "TableStarted",
    "TableStatus",
    "TableView",
    "act",
    "add_bot",
    "apply_entry",
    "autofill",
    "away_grace",
    "bot_seed",
    "due_at",
    "due_work",
    "immediate_bots",
    "join",
    "leave",
    "new_table",
    "pending_bot_seat",
    "play_bots",
    "replay",
    "resign",
    "start",
    "timeout_move",
    "turn_deadline",
    "view_for",
]
