"""Exports of finished solitaire games and card Golf matches (``ExportRecords``): each whole, enough to check it
without the service (``golf verify``).

What is exported: the lead row of each finished game (``records`` kind ``game``) and match (kind ``match``), oldest
first by (finish time, row id), filtered by the request. Who may export what:

- any signed-in caller may export every finished game and match, except
- a private table's match (one joined with a code), which only a player seated at it may export;
- another player's solitaire game while its deal is in play (``golf.app.reveals``: a ranked game on it in progress,
  or it may still be dealt fresh): its seed would show a stock someone may still be playing. It is exported once
  its deal is out of play; a player's own games are exported at once;
- with ``private_issuers`` (portals that keep their players private), a game or match of such a portal's player,
  which only the players of that portal and the people who played in it may export.

Nothing of an unfinished game or match is ever exported: the index lists finished ones only, and each record is
checked again when it is loaded (a game still in progress, a table not over, is left out).

The export streams: the index is read a page at a time (a keyset on (finish time, id), each page in a short
transaction of its own) and the records of a page are loaded a few at a time, each chunk in its own short unit of
work that ends before they are handed on, so no transaction is held while a slow client reads, and at most one
page of index rows and one chunk of records is in memory.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Protocol

from golf.app.errors import InvalidArgument
from golf.app.identity import Caller
from golf.app.players import ME
from golf.app.ports import Clock, UnitOfWork, UnitOfWorkFactory
from golf.app.record_queries import check_player
from golf.app.records import DealRecord, GameRecord, MoveRecord
from golf.app.reveals import CLOSE_GRACE, shown_to
from golf.app.tables.entries import SeatJoined
from golf.app.tables.options import TableOptions
from golf.app.tables.records import LoggedEntry, TableRecord, TableRecordError, decode_options, encode_options
from golf.app.tables.state import Table, replay
from golf.app.tables.status import TableStatus
from golf.app.tables.views import match_commitment

FORMAT = "golf.record/1"
"""The format of a record; a change a reader of this version could misread gets a new number."""
GAME, MATCH = "game", "match"
"""The kinds of ``records`` rows exported: a solitaire game, a card Golf match."""
DEFAULT_MAX, MAX_RECORDS = 1000, 100_000
INDEX_PAGE = 200
"""Index rows read per query."""
LOAD_CHUNK = 20
"""Records loaded per unit of work (a match's log can hold thousands of entries)."""


@dataclass(frozen=True, slots=True)
class ExportQuery:
    """What to export, for whom: make it with :meth:`build`, which checks it."""

    caller_id: str
    caller_issuer: str = ""
    since: datetime | None = None
    """Inclusive lower bound of the finish time."""
    until: datetime | None = None
    """Exclusive upper bound of the finish time."""
    player_id: str | None = None
    """Only games of this player, and matches where this player held a seat."""
    preset: str | None = None
    kind: str | None = None
    """``GAME``, ``MATCH`` or ``None`` for both."""
    max: int = DEFAULT_MAX
    private_issuers: tuple[str, ...] = ()
    """Portals whose players' records only their own portal's players (and their fellow players) may export."""
    as_of: datetime | None = None
    """When the export began, set by the exporter: the time the reveal rule is judged at."""

    @property
    def shown_closed_before(self) -> datetime:
        """Another player's game is exported when its deal closed before this (``golf.app.reveals``) and no
        ranked game on it is in progress."""
        assert self.as_of is not None, "the exporter sets as_of"
        return self.as_of - CLOSE_GRACE

    @classmethod
    def build(
        cls,
        caller_id: str,
        caller_issuer: str = "",
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        player_id: str | None = None,
        preset: str | None = None,
        kind: str | None = None,
        max_records: int = 0,
    ) -> ExportQuery:
        """The query, with ``player_id`` ``"me"`` made the caller and ``max_records`` 0 made the default; raises
        ``InvalidArgument`` for a maximum out of 1 to 100,000 or a kind that is not exported."""
        if max_records == 0:
            max_records = DEFAULT_MAX
        if not 1 <= max_records <= MAX_RECORDS:
            raise InvalidArgument("max", f"max must be 1 to {MAX_RECORDS} (0 for {DEFAULT_MAX})")
        if kind not in (None, GAME, MATCH):
            raise InvalidArgument("family", "only solitaire games and card Golf matches are exported")
        player = caller_id if player_id == ME else (player_id or None)
        return cls(caller_id, caller_issuer, since, until, player, preset or None, kind, max_records)


@dataclass(frozen=True, slots=True)
class IndexedRecord:
    """A lead row of ``records``: which game or match, and when it started and finished."""

    id: int
    kind: str
    record_id: str
    started_at: datetime
    finished_at: datetime


class RecordIndex(Protocol):
    """The finished games and matches an export lists (``golf.adapters.db.record_index.SqlRecordIndex``)."""

    async def page(self, query: ExportQuery, after: tuple[datetime, int] | None, limit: int) -> Sequence[IndexedRecord]:
        """Up to ``limit`` lead rows of kind ``game`` or ``match`` that match ``query`` and that its caller may
        export (the rules of this module), ordered by (finish time, id), strictly after the keyset ``after``. Each
        call is a short transaction of its own."""
        ...


@dataclass(frozen=True, slots=True)
class GameExport:
    """A finished solitaire game: its row, its deal and its whole log (undone entries too), in order."""

    index: IndexedRecord
    game: GameRecord
    deal: DealRecord
    log: tuple[MoveRecord, ...]


@dataclass(frozen=True, slots=True)
class SeatExport:
    """A seat of a finished match: who sat there, its points per hole, its total and its place (1 is first;
    seats that tie share a place)."""

    seat: int
    player_id: str | None
    display_name: str
    bot: str | None
    """The bot that played the seat at the end (a bot's seat, a resigned or away player's)."""
    hole_points: tuple[int, ...]
    total: int
    place: int


@dataclass(frozen=True, slots=True)
class MatchExport:
    """A finished match: the stored table, the table its log makes, the log, the seats and the commitment."""

    index: IndexedRecord
    record: TableRecord
    table: Table
    log: tuple[LoggedEntry, ...]
    seats: tuple[SeatExport, ...]
    commitment: str


Exported = GameExport | MatchExport


def table_options_text(options: TableOptions) -> str:
    """A match record's ``table_options``: the stored options (``golf.app.tables.records`` format, its ``v``) less
    the rules (the record's ``rules``) and the join code (a code opens another table once the match is over), with
    ``listed`` and ``holes``. Compact JSON, sorted keys."""
    data = json.loads(encode_options(options))
    del data["rules"], data["join_code"]
    data.update(listed=options.listed, holes=options.holes)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def options_from_record(table_options: str, rules: str) -> TableOptions:
    """The options a match record's ``table_options`` and ``rules`` describe (a private table's without its code),
    validated; raises ``TableRecordError`` (a ``ValueError``) for anything else."""
    try:
        data = json.loads(table_options)
        rules_data = json.loads(rules)
    except ValueError:
        raise TableRecordError("table options or rules: not JSON") from None
    if not isinstance(data, dict) or not isinstance(rules_data, dict):
        raise TableRecordError("table options and rules must be JSON objects")
    listed, holes = data.pop("listed", None), data.pop("holes", None)
    if not isinstance(listed, bool) or type(holes) is not int:
        raise TableRecordError("table options: listed (true or false) and holes (a number) are required")
    options = decode_options(json.dumps({**data, "rules": rules_data, "join_code": None}))
    if options.holes != holes:
        raise TableRecordError(f"table options: holes {holes} but the rules say {options.holes}")
    return options


def places(totals: Sequence[int]) -> tuple[int, ...]:
    """Each seat's place by total points, lowest first: 1 + the seats with fewer points (ties share a place). A
    match's places are its sheet's (``ScoreSheet.places``), which put a seat that won outright first."""
    return tuple(1 + sum(other < mine for other in totals) for mine in totals)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Exporter:
    """Streams an export (see the module's docstring). ``private_issuers``: the portals that keep their players
    private (``GOLF_PRIVATE_ISSUERS``)."""

    def __init__(
        self,
        uow: UnitOfWorkFactory,
        index: RecordIndex,
        private_issuers: Sequence[str] = (),
        page_size: int = INDEX_PAGE,
        chunk_size: int = LOAD_CHUNK,
        clock: Clock = _utc_now,
    ) -> None:
        self.uow = uow
        self.clock = clock
        self.index = index
        self.private_issuers = tuple(private_issuers)
        self.page_size = page_size
        self.chunk_size = chunk_size

    async def open(self, query: ExportQuery) -> AsyncIterator[Exported]:
        """The export of ``query`` (:meth:`export`), its player checked first: ``NotFound`` for a ``player_id``
        that the caller may not know of, as ``ListHistory`` answers it (``check_player``), before any record."""
        if query.player_id is not None:
            caller = Caller(query.caller_id, query.caller_issuer)
            async with self.uow() as uow:
                await check_player(uow, caller, query.player_id, frozenset(self.private_issuers))
        return self.export(query)

    async def export(self, query: ExportQuery) -> AsyncIterator[Exported]:
        """The records of ``query``, oldest first, at most ``query.max``. Storage errors propagate (the transports
        end the stream with them)."""
        query = replace(query, private_issuers=self.private_issuers, as_of=self.clock())
        names: dict[str, str] = {}  # display names, for this export only (a player may rename)
        sent = 0
        after: tuple[datetime, int] | None = None
        while sent < query.max:
            limit = min(self.page_size, query.max - sent)
            rows = list(await self.index.page(query, after, limit))
            if not rows:
                return
            after = (rows[-1].finished_at, rows[-1].id)
            for start in range(0, len(rows), self.chunk_size):
                for item in await self._load(query, rows[start : start + self.chunk_size], names):
                    yield item
                    sent += 1
                    if sent >= query.max:
                        return
            if len(rows) < limit:
                return

    async def _load(self, query: ExportQuery, rows: Sequence[IndexedRecord], names: dict[str, str]) -> list[Exported]:
        """The records of ``rows``: read in one unit of work, made (matches replayed) after it ended, so no
        transaction waits on the work. One that turns out unfinished or not the caller's to see is left out (the
        index already leaves those out: this is the second check)."""
        read: list[GameExport | _StoredMatch] = []
        async with self.uow() as uow:
            for row in rows:
                found = await (_game(uow, row, query) if row.kind == GAME else _stored_match(uow, row, names))
                if found is not None:
                    read.append(found)
        if len(names) > _NAMES_KEPT:
            names.clear()
        out: list[Exported] = []
        for item in read:
            made = item if isinstance(item, GameExport) else _match(item, query.caller_id)
            if made is not None:
                out.append(made)
        return out


_NAMES_KEPT = 10_000
"""Display names an export remembers at most (then it reads them again)."""


@dataclass(frozen=True, slots=True)
class _StoredMatch:
    """A finished table as read: the record, its log and its players' display names."""

    index: IndexedRecord
    record: TableRecord
    log: tuple[LoggedEntry, ...]
    names: dict[str, str]


async def _game(uow: UnitOfWork, row: IndexedRecord, query: ExportQuery) -> GameExport | None:
    game = await uow.games.get_game(row.record_id)
    assert query.as_of is not None
    if game is None or game.status == "in_progress" or not await shown_to(uow, query.caller_id, game, query.as_of):
        return None  # unfinished, or another player's on a deal still in play
    deal = await uow.deals.get_deal(game.deal_id)
    if deal is None:
        return None
    log = await uow.games.get_moves(game.id)
    return GameExport(row, game, deal, tuple(sorted(log, key=lambda m: m.seq)))


async def _stored_match(uow: UnitOfWork, row: IndexedRecord, names: dict[str, str]) -> _StoredMatch | None:
    record = await uow.tables.get_table(row.record_id)
    if record is None or record.status is not TableStatus.OVER:
        return None
    log = tuple(await uow.tables.get_entries(record.id))
    players = {logged.entry.player_id for logged in log if isinstance(logged.entry, SeatJoined)}
    for player_id in sorted(players - set(names)):
        player = await uow.players.get_player(player_id)
        names[player_id] = player.display_name if player is not None else ""
    return _StoredMatch(row, record, log, {p: names.get(p, "") for p in players})


def _match(stored: _StoredMatch, caller_id: str) -> MatchExport | None:
    """The match its log makes, if it is over and the caller may have it."""
    record = stored.record
    table = replay(record.options, record.seed, (logged.entry for logged in stored.log))
    if table.status is not TableStatus.OVER:
        return None
    if record.join_code is not None and table.seat_of(caller_id) is None:
        return None  # a private table's match: its seated players' only
    totals = table.sheet.totals
    placed = table.sheet.places  # places(totals), but a seat that won outright (four alike) comes first
    seats = tuple(
        SeatExport(
            seat=s,
            player_id=seat.player_id,
            display_name=stored.names.get(seat.player_id, "") if seat.player_id is not None else "",
            bot=seat.bot,
            hole_points=tuple(points[s] for points in table.sheet.holes),
            total=totals[s],
            place=placed[s],
        )
        for s, seat in enumerate(table.seats)
    )
    commitment = match_commitment(record.options, record.seed)
    return MatchExport(stored.index, record, table, stored.log, seats, commitment)


__all__ = [
    "DEFAULT_MAX",
    "FORMAT",
    "GAME",
    "MATCH",
    "MAX_RECORDS",
    "ExportQuery",
    "Exported",
    "Exporter",
    "GameExport",
    "IndexedRecord",
    "MatchExport",
    "RecordIndex",
    "SeatExport",
    "options_from_record",
    "places",
    "table_options_text",
]
