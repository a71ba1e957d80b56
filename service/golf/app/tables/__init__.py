"""Live tables of card Golf: seats for people and bots, a match of holes, an append-only log, per-viewer views.

Two halves. The table itself is pure: no storage, no clock, no transport. A table is a function of (options, match
seed, log):

- ``options``: :class:`TableOptions`; ``entries``: what a log holds; ``state``: :class:`Table`, :func:`replay`;
  ``status``: :class:`TableStatus`, :class:`MatchEnd`; ``records``: how a table and its log are stored;
- ``commands``: join, add_bot, start, act, leave, resign (each returns the new table and the entries to store);
- ``bots``: :func:`play_bots`, the bot turns as entries; ``views``: :func:`view_for`, all a client may see, as the
  data of ``read_model`` (:class:`TableView`, ``TableSnapshot``); ``errors``: the refusals; ``access``: who may;
- ``clocks``: what falls due by time (turn clocks, paced bots, away seats, quick play's autofill): :func:`due_at`,
  :func:`due_work`, :func:`turn_deadline`, the timeout action :func:`timeout_move`.

The use cases over the ports (``golf.app.ports``), which import the pure half and are never imported by it (an
import-linter contract in ``pyproject.toml`` keeps it so): ``writer`` (every append to a log: at the version read,
idempotent, with the clocks' times, and the cache of tables), ``service`` (``TableService``: creating, finding
and the commands), ``quick_play``, ``due`` (work due by time), ``events`` (live events for watchers) and
``code_guard`` (wrong join codes, limited). This module exports the pure half only.
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
from golf.app.tables.read_model import SeatInfo, TableView
from golf.app.tables.state import AWAY_SEAT_BOT, RESIGNED_SEAT_BOT, Seat, Table, apply_entry, new_table, replay
from golf.app.tables.status import MatchEnd, TableStatus
from golf.app.tables.views import view_for

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
