"""Bot turns: every bot seat whose move the table awaits plays, from its own seat's view only, until a person
must act or the match ends. The moves are returned as entries for the caller to store; replaying them never
runs a bot again.

A table may pace its bots (``TableOptions.bot_delay_ms``): then a mutation leaves them pending
(:func:`immediate_bots` plays nothing) and each becomes work due at a time, one move at a time
(``golf.app.tables.clocks``).

A bot is made afresh for each move with a seed drawn from the match seed and the index of the entry it is about
to write, so the same log always yields the same bot moves (on any process, after any restart) and no bot keeps
state in memory between moves.
"""

from __future__ import annotations

import hashlib

from golf.app.tables.commands import Applied
from golf.app.tables.entries import Entry, SeatMoved
from golf.app.tables.state import Table, apply_entry
from golf.engine.cardgolf.bots import LEVELS, bot_cost, make_bot
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


BOT_COST = {level.name: level.cost for level in LEVELS}
"""What a move of each bot level costs against :data:`BOT_BUDGET`, roughly in its CPU time (a strong bot simulates
the hole from its view many times); a bot with a personality costs what its level costs (``bot_cost``)."""
BOT_BUDGET = 40
"""The bot work one append may do (the sum of :data:`BOT_COST` of its bot moves; at least one move). A request must
not keep the server busy for a whole match of bots (a table of bots only, or eight strong bots): the moves past
the budget fall due at once and the table clock plays them in appends of their own."""


def play_bots(table: Table, max_moves: int | None = None, budget: int | None = None) -> Applied:
    """Play pending bot moves (at most ``max_moves``, and while their cost stays within ``budget``, at least one)
    and return the table with the entries written. Each bot chooses from ``view(hole, its seat)``, never the full
    state."""
    entries: list[Entry] = []
    spent = 0
    while max_moves is None or len(entries) < max_moves:
        seat = pending_bot_seat(table)
        if seat is None:
            break
        kind = table.seats[seat].bot
        hole = table.hole
        assert kind is not None and hole is not None
        if budget is not None and entries and spent + bot_cost(kind) > budget:
            break
        spent += bot_cost(kind)
        bot = make_bot(kind, bot_seed(table.seed, table.version))
        entry = SeatMoved(seat, bot.choose(view(hole, seat)))
        table = apply_entry(table, entry)
        entries.append(entry)
    return Applied(table, tuple(entries))


def immediate_bots(table: Table) -> Applied:
    """The bot moves a mutation stores with its own entries: the pending ones within :data:`BOT_BUDGET`
    (:func:`play_bots`) at a table whose bots are not paced, none at a table that paces them (they fall due one by
    one, see ``golf.app.tables.clocks.due_work``). Bot moves left over are due at once (``due_at``)."""
    if table.options.bot_delay_ms > 0:
        return Applied(table, ())
    return play_bots(table, budget=BOT_BUDGET)
