"""Live tables of card Golf: seats for people and bots, a match of holes, an append-only log, per-viewer views.

Pure: no storage, no clock, no transport. A table is a function of (options, match seed, log):

- ``options``: :class:`TableOptions`; ``entries``: what a log holds; ``state``: :class:`Table`, :func:`replay`;
- ``commands``: join, add_bot, start, act, leave, resign (each returns the new table and the entries to store);
- ``bots``: :func:`play_bots`, the bot turns as entries; ``views``: :func:`view_for`, all a client may see.
"""

from golf.app.tables.bots import bot_seed, pending_bot_seat, play_bots
from golf.app.tables.commands import Applied, act, add_bot, join, leave, resign, start
from golf.app.tables.entries import BotAdded, Entry, SeatJoined, SeatLeft, SeatMoved, SeatResigned, TableStarted
from golf.app.tables.errors import TableMoveRefused, TableRefusal, TableRefused
from golf.app.tables.options import MAX_HOLES, MAX_SEATS, MIN_HOLES, MIN_SEATS, TableOptions
from golf.app.tables.state import (
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
    "bot_seed",
    "join",
    "leave",
    "new_table",
    "pending_bot_seat",
    "play_bots",
    "replay",
    "resign",
    "start",
    "view_for",
]
