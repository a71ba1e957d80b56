"""Queries of the records: a player's history, leaderboard pages with the caller's own rank, deal statistics.

Players of a private portal (an issuer in ``private_issuers``) are on no public board, and their histories are
shown only to themselves and to players of the same issuer. A private table's match (one joined with a code) is in
another player's history only to the people who may see the table itself (``golf.app.tables.access``): its seated
players and its creator; to anyone else it is not there, as the table is not. The card Golf boards are per card
Golf preset (or of all presets): another name is refused.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from enum import Enum
from typing import Any

from golf.app.boards import (
    ALL_PRESETS,
    BoardEntry,
    Period,
    deal_board,
    points_board,
    rating_board,
    rounds_board,
    wins_board,
)
from golf.app.errors import InvalidArgument, NotFound
from golf.app.history import BoardScope, DealStats, HistoryFilter, PlayedRecord
from golf.app.identity import Caller
from golf.app.page_tokens import check_page_size, storable_items
from golf.app.players import ME
from golf.app.ports import Clock, UnitOfWork, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.records import Verdict
from golf.engine.cardgolf.presets import PRESETS as CARD_GOLF_PRESETS
from golf.engine.solitaire.rules import PRESETS as SOLITAIRE_PRESETS

DEFAULT_PRESET = "standard"
CUSTOM_PRESET = "custom"
"""What games under changed rules are recorded as (``golf.app.dealing.resolve_rules``)."""
DEFAULT_MIN_HOLES = 9
DEFAULT_MIN_PLAYS = 10


class BoardKind(Enum):
    DEAL = "deal"
    DAILY_DEAL = "daily_deal"
    ROUNDS = "rounds"
    MATCH_WINS = "match_wins"
    POINTS_PER_HOLE = "points_per_hole"
    RATING = "rating"


@dataclass(frozen=True, slots=True)
class BoardQuery:
    """Which board, whose entries, which page."""

    kind: BoardKind
    deal_id: str = ""
    day: str = ""
    preset: str = ""
    holes: int = 0
    period: Period = Period.ALL_TIME
    min_holes: int = 0
    portal_only: bool = False
    page_size: int = 0
    page_token: str = ""


@dataclass(frozen=True, slots=True)
class Ranked:
    rank: int
    entry: BoardEntry
    display_name: str


@dataclass(frozen=True, slots=True)
class BoardPage:
    entries: list[Ranked]
    next_page_token: str
    caller: Ranked | None
    deal_id: str = ""
    """DAILY_DEAL: the day's deal."""


@dataclass(frozen=True, slots=True)
class DealReport:
    stats: DealStats
    verdict: Verdict | None
    """The solver's verdict on the deal, once it has one."""


# -- page tokens: opaque to clients, bound to what they page ------------------------------------------------------
def _encode(scope: str, key: list[Any]) -> str:
    raw = json.dumps([scope, *key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(token: str, scope: str, size: int) -> list[Any]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, binascii.Error):
        data = None
    if not isinstance(data, list) or len(data) != size + 1 or data[0] != scope or not storable_items(data):
        raise InvalidArgument("pageToken", "not a page token of this list (page tokens go with the same filters)")
    return data[1:]


def _int(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or abs(value) >= 2**63:
        raise InvalidArgument("pageToken", "not a page token of this list (page tokens go with the same filters)")
    return value


def _time(value: Any) -> datetime:
    try:
        at = datetime.fromisoformat(value)
        if at.tzinfo is None:
            raise ValueError("naive")
        return at.astimezone(UTC)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgument("pageToken", "not a page token of this list") from None


def _str(value: Any) -> str:
    if not isinstance(value, str) or len(value) > 64:
        raise InvalidArgument("pageToken", "not a page token of this list")
    return value


def solitaire_preset(preset: str, custom: bool = True) -> str:
    """The solitaire preset a board or list is of: ``preset``, or ``DEFAULT_PRESET`` for none; ``custom`` (games
    under changed rules) where ``custom`` allows it. Raises ``InvalidArgument`` naming ``preset`` for any other
    name (no game is recorded under it)."""
    if not preset:
        return DEFAULT_PRESET
    known = [*SOLITAIRE_PRESETS, *([CUSTOM_PRESET] if custom else [])]
    if preset not in known:
        raise InvalidArgument("preset", f"no solitaire preset {shown(preset)}; choose one of {', '.join(known)}")
    return preset


def card_golf_preset(preset: str) -> str:
    """The presets a card Golf board is of: ``preset``, a card Golf preset, or every preset (``ALL_PRESETS``) for
    none. Raises ``InvalidArgument`` naming ``preset`` for any other name (no board has its matches)."""
    if not preset:
        return ALL_PRESETS
    if preset not in CARD_GOLF_PRESETS:
        known = ", ".join(CARD_GOLF_PRESETS)
        raise InvalidArgument("preset", f"no card Golf preset {shown(preset)}; choose one of {known}, or none for all")
    return preset


async def check_player(uow: UnitOfWork, caller: Caller, player_id: str, private_issuers: frozenset[str]) -> None:
    """Raise ``NotFound`` unless ``player_id`` is the caller or a player the caller may know of: one that exists,
    and is not of a private portal (one of ``private_issuers``) other than the caller's. Histories and exports of
    a player both ask it, so both answer an unknown player alike."""
    if player_id == caller.player_id:
        return
    issuer = await uow.records.player_issuer(player_id)
    if issuer is None or (issuer in private_issuers and issuer != caller.issuer):
        raise NotFound(f"no player {shown(player_id)}")


class RecordQueries:
    def __init__(self, uow: UnitOfWorkFactory, clock: Clock, private_issuers: frozenset[str] = frozenset()) -> None:
        self.uow = uow
        self.clock = clock
        self.private_issuers = private_issuers

    # -- history ------------------------------------------------------------------------------------------------
    async def history(
        self, caller: Caller, player_id: str, query: HistoryFilter, page_size: int, page_token: str
    ) -> tuple[list[PlayedRecord], str]:
        """A page of ``player_id``'s history, newest first, and the next page's token ("" on the last)."""
        size = check_page_size(page_size)
        player = caller.player_id if player_id in (ME, caller.player_id) else player_id
        scope = f"h:{player}"
        before = _int(_decode(page_token, scope, 1)[0]) if page_token else None
        async with self.uow() as uow:
            await check_player(uow, caller, player, self.private_issuers)
            # Another player's history leaves out the private tables' matches the caller may not see.
            viewer = None if player == caller.player_id else caller.player_id
            rows = await uow.records.history(player, query, before, size + 1, viewer)
        more = len(rows) > size
        rows = rows[:size]
        return rows, _encode(scope, [rows[-1].id]) if more else ""

    # -- leaderboards -------------------------------------------------------------------------------------------
    def _scope(self, caller: Caller, portal_only: bool) -> BoardScope:
        if portal_only:
            return BoardScope(only=caller.issuer)
        return BoardScope(hidden=tuple(sorted(self.private_issuers)))

    async def leaderboard(self, caller: Caller, query: BoardQuery) -> BoardPage:
        """A page of a board, ranked, with the caller's own entry when they are on it (in scope). Two statements
        at most: the page (with names and the rank of its first entry), and the caller's standing when the page
        does not hold it."""
        size = check_page_size(query.page_size)
        scope = self._scope(caller, query.portal_only)
        async with self.uow() as uow:
            board, min_qualifier, deal_id = await self._board(uow, query)
            if board is None:
                return BoardPage([], "", None, deal_id)
            token_scope = f"b:{board}:{min_qualifier}:{int(query.portal_only)}"
            after = None
            if query.page_token:
                k1, k2, k3, at, player = _decode(query.page_token, token_scope, 5)
                after = (_int(k1), _int(k2), _int(k3), _time(at), _str(player))
            page = await uow.records.board_page(board, scope, min_qualifier, after, size + 1)
            rows = page.entries[:size]
            first = 1 + page.ahead
            ranked = [Ranked(first + i, e, page.names.get(e.player_id, "")) for i, e in enumerate(rows)]
            own = next((r for r in ranked if r.entry.player_id == caller.player_id), None)
            if own is None:
                standing = await uow.records.board_standing(board, caller.player_id, scope, min_qualifier)
                if standing is not None:
                    entry, name, ahead = standing
                    own = Ranked(ahead + 1, entry, name)
            if (
                not rows
                and after is None
                and query.kind is BoardKind.DEAL
                and not await uow.records.deal_exists(deal_id)
            ):
                raise NotFound(f"no deal {shown(deal_id)}")
        token = ""
        if len(page.entries) > size:
            last = rows[-1]
            token = _encode(token_scope, [last.k1, last.k2, last.k3, last.reached_at.isoformat(), last.player_id])
        return BoardPage(ranked, token, own, deal_id)

    async def _board(self, uow: UnitOfWork, query: BoardQuery) -> tuple[str | None, int, str]:
        """The board's name (None: a daily deal not dealt yet), its minimum qualifier, and the deal it is of."""
        kind = query.kind
        if kind is BoardKind.DEAL:
            if not query.deal_id:
                raise InvalidArgument("dealId", "a deal's board needs dealId")
            return deal_board(query.deal_id), 0, query.deal_id
        if kind is BoardKind.DAILY_DEAL:
            day = query.day or self.clock().date().isoformat()
            try:
                date.fromisoformat(day)
            except ValueError:
                raise InvalidArgument("day", f"day {shown(day)} is not a date (YYYY-MM-DD)") from None
            deal_id = await uow.records.daily_deal(day, solitaire_preset(query.preset, custom=False))
            return (deal_board(deal_id) if deal_id else None), 0, deal_id or ""
        if kind is BoardKind.ROUNDS:
            holes = query.holes or 9
            if holes not in (9, 18):
                raise InvalidArgument("holes", "rounds have 9 or 18 holes")
            return rounds_board(holes, solitaire_preset(query.preset), query.period, self.clock()), 0, ""
        preset = card_golf_preset(query.preset)
        if kind is BoardKind.MATCH_WINS:
            return wins_board(preset), 0, ""
        if kind is BoardKind.POINTS_PER_HOLE:
            return points_board(preset), query.min_holes or DEFAULT_MIN_HOLES, ""
        return rating_board(preset), 0, ""

    # -- deal statistics ----------------------------------------------------------------------------------------
    async def deal_stats(self, deal_id: str) -> DealReport:
        async with self.uow() as uow:
            deal = await uow.deals.get_deal(deal_id)
            if deal is None:
                raise NotFound(f"no deal {shown(deal_id)}")
            stats = await uow.records.deal_stats(deal_id)
        return DealReport(stats or DealStats(deal_id, deal.preset, 0, 0, 0, 0), deal.verdict)

    async def list_deal_stats(
        self, preset: str, hardest: bool, min_plays: int, page_size: int, page_token: str
    ) -> tuple[list[DealReport], str]:
        """Deals of ``preset`` with ``min_plays`` or more, hardest or easiest first (by win rate, then plays)."""
        size = check_page_size(page_size)
        preset = solitaire_preset(preset)
        plays = min_plays or DEFAULT_MIN_PLAYS
        scope = f"d:{preset}:{int(hardest)}:{plays}"
        after = None
        if page_token:
            rate, neg_plays, deal = _decode(page_token, scope, 3)
            after = (_int(rate), _int(neg_plays), _str(deal))
        async with self.uow() as uow:
            rows = await uow.records.list_deal_stats(preset, hardest, plays, after, size + 1)
        more = len(rows) > size
        rows = rows[:size]
        token = ""
        if more:
            stats, rate, _ = rows[-1]
            token = _encode(scope, [rate, -stats.plays, stats.deal_id])
        return [DealReport(s, verdict) for s, _, verdict in rows], token
