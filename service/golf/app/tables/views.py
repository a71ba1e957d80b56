"""What a viewer (a seat, or ``None`` for a spectator) sees of a table. Every hole position shown passes through
the engine's one observation function (``golf.engine.cardgolf.view``); the stock's order and the face-down cards
the viewer may not know never appear, the match seed only once the match is over (its commitment from the start),
and the join code is left to the host's own screens."""

from __future__ import annotations

from golf.app.errors import InvalidArgument
from golf.app.memo import IdentityMemo
from golf.app.tables.options import TableOptions
from golf.app.tables.read_model import SeatInfo, TableView
from golf.app.tables.state import AWAY_SEAT_BOT, Seat, Table
from golf.app.tables.status import TableStatus
from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.state import HoleState
from golf.engine.cardgolf.view import SeatView, view
from golf.engine.shuffle import ALGORITHM, commitment

_COMMITMENTS: IdentityMemo[TableOptions, dict[str, str]] = IdentityMemo(lambda _: {})
"""Commitments by options object, then seed: a table keeps one options object for its life (stored options decode
to one object), so every view of it finds its commitment with a lookup, never a hash of the rules' text."""
_SEEDS_PER_OPTIONS = 1024
"""Tables of the same options object (quick play's) remembered at once; past it the memo starts again."""


def match_commitment(options: TableOptions, seed: str) -> str:
    """The commitment of a match: ``golf.engine.shuffle.commitment`` of ``golf-shuffle-v1``, the match seed and the
    rules' canonical text (``GolfRules.canonical``, which holds the number of holes). Every hole is dealt from this
    seed (``golf.engine.cardgolf.match.deal_hole``), so one commitment covers the match. Computed once per table."""
    made = _COMMITMENTS(options)
    found = made.get(seed)
    if found is None:
        if len(made) >= _SEEDS_PER_OPTIONS:
            made.clear()
        found = made[seed] = commitment(ALGORITHM, seed, options.rules.canonical())
    return found


def view_for(table: Table, viewer: int | None) -> TableView:
    """The view of ``table`` for seat ``viewer`` (``None``: a spectator). Raises ``InvalidArgument`` for a seat the
    table does not have."""
    if viewer is not None and not 0 <= viewer < len(table.seats):
        raise InvalidArgument("seat", f"the table has seats 0 to {len(table.seats) - 1}")
    hole = view(table.hole, viewer) if table.hole is not None else None
    last = _last_hole_view(table.last_hole, viewer) if table.last_hole is not None else None
    legal: tuple[Move, ...] = ()
    if hole is not None and viewer is not None and table.seats[viewer].human:
        legal = hole.legal_moves
    options = table.options
    return TableView(
        viewer=viewer,
        version=table.version,
        preset=options.preset,
        rules=options.rules,
        holes=options.holes,
        listed=options.listed,
        status=table.status,
        end=table.end,
        seats=tuple(_seat_info(s, seat) for s, seat in enumerate(table.seats)),
        hole_number=table.hole_index + 1 if table.hole is not None else None,
        awaiting=table.awaiting(),
        hole=hole,
        last_hole=last,
        sheet=table.sheet,
        results=table.results,
        legal_moves=legal,
        turn_seconds=options.turn_seconds,
        missed_turns_limit=options.missed_turns_limit,
        missed_action=options.missed_action,
        bot_delay_ms=options.bot_delay_ms,
        commitment=match_commitment(options, table.seed),
        # The one place the seed reaches a view: only once the match is over, when the rules reveal it.
        seed=table.seed if table.status is TableStatus.OVER else None,
    )


_LAST_HOLE_VIEWS: IdentityMemo[HoleState, dict[int | None, SeatView]] = IdentityMemo(lambda _: {})
"""The views made of each finished hole (shown until the next one ends), by viewer: one view per viewer per hole,
not one per event."""


def _last_hole_view(hole: HoleState, viewer: int | None) -> SeatView:
    views = _LAST_HOLE_VIEWS(hole)
    found = views.get(viewer)
    if found is None:
        found = views[viewer] = view(hole, viewer)
    return found


def _seat_info(index: int, seat: Seat) -> SeatInfo:
    bot = AWAY_SEAT_BOT if seat.away and seat.bot is None else seat.bot
    return SeatInfo(index, seat.player_id, bot, seat.resigned, seat.away, seat.missed)
