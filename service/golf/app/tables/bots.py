"""Bot turns: every bot seat whose move the table awaits plays, from its own seat's view only, until a person
must act or the match ends. The moves are returned as entries for the caller to store; replaying them never
runs a bot again.

A bot is made afresh for each move with a seed drawn from the match seed and the index of the entry it is about
to write, so the same log always yields the same bot moves (on any process, after any restart) and no bot keeps
state in memory between moves.
"""

from __future__ import annotations

import hashlib

from golf.app.tables.commands import Applied
from golf.app.tables.entries import Entry, SeatMoved
from golf.app.tables.state import Table, apply_entry
from golf.engine.cardgolf.bots import make_bot
from golf.engine.cardgolf.view import view


def bot_seed(match_seed: str, index: int) -> int:
    """The seed of the bot writing entry ``index`` (0-based) of the match ``match_seed``. Hashed, so nothing a
    bot could observe of its randomness says anything about the deal."""
    digest = hashlib.sha256(f"golf-table-bot-v1:{match_seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def pending_bot_seat(table: Table) -> int | None:
    """The bot seat that moves next, if the table awaits a bot (during a hole's setup the lowest bot seat not yet
    ready, even while people also still choose their start cards)."""
    return next((s for s in table.awaiting() if table.seats[s].bot is not None), None)


def play_bots(table: Table, max_moves: int | None = None) -> Applied:
    """Play every pending bot move (at most ``max_moves``) and return the table with the entries written. Each bot
    chooses from ``view(hole, its seat)``, never the full state."""
    entries: list[Entry] = []
    while max_moves is None or len(entries) < max_moves:
        seat = pending_bot_seat(table)
        if seat is None:
            break
        kind = table.seats[seat].bot
        hole = table.hole
        assert kind is not None and hole is not None
        bot = make_bot(kind, bot_seed(table.seed, table.version))
        entry = SeatMoved(seat, bot.choose(view(hole, seat)))
        table = apply_entry(table, entry)
        entries.append(entry)
    return Applied(table, tuple(entries))
