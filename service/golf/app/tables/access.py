"""Who may do what at a live table (the table of rules is in ``golf.app.tables.service``'s docstring). Pure: the
use cases ask these before running a command, and a private table is ``NotFound`` to whoever may not see it."""

from __future__ import annotations

from golf.app.errors import NotFound, PermissionDenied
from golf.app.identity import Caller
from golf.app.quoting import shown
from golf.app.tables.records import TableRecord
from golf.app.tables.state import Table


def check_creator(caller: Caller, record: TableRecord, what: str) -> None:
    """Only the table's creator may do ``what``."""
    if caller.player_id != record.owner_id:
        raise PermissionDenied(f"only the table's creator may {what}")


def own_seat(caller: Caller, table: Table, seat: int | None) -> int:
    """The caller's own seat, which ``seat`` (if given) must be: a player acts only for their own seat."""
    own = table.seat_of(caller.player_id)
    if own is None:
        raise PermissionDenied("only a seated player acts at a table; spectators watch")
    if seat is not None and seat != own:
        raise PermissionDenied(f"a player acts only for their own seat ({own}), not seat {seat}")
    return own


def check_visible(caller: Caller, record: TableRecord, table: Table, join_code: str | None) -> None:
    """Anyone sees a listed table; a private one only its creator, its seated players, or someone giving its join
    code. Others are told it does not exist."""
    if record.listed or caller.player_id == record.owner_id or table.seat_of(caller.player_id) is not None:
        return
    if join_code is not None and record.options.code_matches(join_code):
        return
    raise NotFound(f"no table {shown(record.id)}")
