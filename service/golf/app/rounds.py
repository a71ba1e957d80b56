"""Rounds: nine (or eighteen) deals for one player, scored like golf against a par."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from golf.app.access import check_owner, check_read
from golf.app.dealing import resolve_rules
from golf.app.errors import InvalidArgument, NotFound, RoundOver
from golf.app.identity import Caller
from golf.app.page_tokens import check_page_size, decode_page_token, encode_page_token
from golf.app.ports import AlreadyStored, Clock, RateLimiter, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.records import GameSnapshot, RoundFilter, RoundRecord
from golf.app.solitaire import SolitaireService
from golf.engine.solitaire.difficulty import Difficulty
from golf.engine.solitaire.state import Status

PAR_PER_HOLE = 5
"""Par is 45 for nine holes (a round of nine deals scored 45 or less is par), so five a hole."""


@dataclass(frozen=True, slots=True)
class RoundSnapshot:
    round: RoundRecord
    holes: list[GameSnapshot]

    @property
    def total(self) -> int:
        return sum(h.state.score for h in self.holes)

    @property
    def finished(self) -> bool:
        return len(self.holes) == self.round.holes and all(h.state.status is not Status.IN_PROGRESS for h in self.holes)


class RoundService:
    def __init__(self, uow: UnitOfWorkFactory, clock: Clock, games: SolitaireService, limiter: RateLimiter) -> None:
        self.uow = uow
        self.clock = clock
        self.games = games
        self.limiter = limiter

    async def create_round(
        self,
        caller: Caller,
        preset: str = "",
        overrides: dict[str, Any] | None = None,
        holes: int = 0,
        par: int | None = None,
        winnable_only: bool = True,
        difficulty: Difficulty | None = None,
    ) -> tuple[RoundSnapshot, GameSnapshot]:
        """A new round of the caller's and the game of its first hole."""
        await self.limiter.hit("create", caller.player_id)
        holes = holes or 9
        if holes not in (9, 18):
            raise InvalidArgument("holes", "a round has 9 or 18 holes")
        if par is not None and not 0 <= par <= 52 * 4 * holes:
            raise InvalidArgument("par", "par must be between 0 and the cards of every hole")
        name, rules = resolve_rules(preset, overrides or {})
        record = RoundRecord(
            id=str(uuid.uuid4()),
            preset=name,
            rules=rules,
            holes=holes,
            par=PAR_PER_HOLE * holes if par is None else par,
            winnable_only=winnable_only,
            difficulty=difficulty.value if difficulty else None,
            created_at=self.clock(),
            owner_id=caller.player_id,
        )
        async with self.uow() as uow:
            await uow.rounds.add_round(record)
            await uow.commit()
        game = await self._start_hole(record, 1)
        return await self._load(record.id), game

    async def get_round(self, caller: Caller, round_id: str) -> RoundSnapshot:
        """The round as its player sees it; another player sees it once it is over."""
        snap = await self._load(round_id)
        check_read(caller, snap.round.owner_id, snap.finished, f"round {shown(round_id)}")
        return snap

    async def list_rounds(
        self, caller: Caller, page_size: int = 0, page_token: str = "", where: RoundFilter | None = None
    ) -> tuple[list[RoundSnapshot], str]:
        """The caller's rounds newest first, a page at a time; the token is empty on the last page."""
        size = check_page_size(page_size)
        after = decode_page_token(page_token) if page_token else None
        async with self.uow() as uow:
            records = await uow.rounds.list_rounds(caller.player_id, size + 1, after, where or RoundFilter())
            page = records[:size]
            holes = [await uow.rounds.round_games(r.id) for r in page]
        snaps = [RoundSnapshot(r, await self.games.snapshots(games)) for r, games in zip(page, holes, strict=True)]
        token = encode_page_token(page[-1].created_at, page[-1].id) if len(records) > size else ""
        return snaps, token

    async def _load(self, round_id: str) -> RoundSnapshot:
        async with self.uow() as uow:
            record = await uow.rounds.get_round(round_id)
            if record is None:
                raise NotFound(f"no round {shown(round_id)}")
            games = await uow.rounds.round_games(round_id)
        return RoundSnapshot(record, await self.games.snapshots(games))

    async def start_next_hole(self, caller: Caller, round_id: str) -> tuple[RoundSnapshot, GameSnapshot]:
        """The next hole's game once the current hole is over; the current one while it is being played."""
        snap = await self._load(round_id)
        check_owner(caller, snap.round.owner_id, snap.finished, f"round {shown(round_id)}")
        current = snap.holes[-1] if snap.holes else None
        if current is not None and current.state.status is Status.IN_PROGRESS:
            return snap, current
        if len(snap.holes) >= snap.round.holes:
            raise RoundOver(f"all {snap.round.holes} holes of round {shown(round_id)} are played")
        await self.limiter.hit("create", caller.player_id)
        game = await self._start_hole(snap.round, len(snap.holes) + 1)
        return await self._load(round_id), game

    async def _start_hole(self, record: RoundRecord, hole: int) -> GameSnapshot:
        overrides = {} if record.preset != "custom" else _fields_of(record)
        preset = record.preset if record.preset != "custom" else ""
        difficulty = Difficulty(record.difficulty) if record.difficulty else None
        try:
            return await self.games.start_game(
                record.owner_id, "", preset, overrides, record.winnable_only, difficulty, round_id=record.id, hole=hole
            )
        except AlreadyStored:
            # Another request started this hole at the same moment: both get that game.
            snap = await self._load(record.id)
            return snap.holes[hole - 1]


def _fields_of(record: RoundRecord) -> dict[str, Any]:
    rules = record.rules
    return {name: getattr(rules, name) for name in rules.__dataclass_fields__}
