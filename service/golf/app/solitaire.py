"""Solitaire use cases: create and read deals and games, play moves safely under retries and races."""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

from golf.app.errors import (
    Conflict,
    IdempotencyKeyReused,
    InvalidArgument,
    MoveRefused,
    NotFound,
    StaleVersion,
)
from golf.app.ports import Clock, DuplicateMove, UnitOfWork, UnitOfWorkFactory
from golf.app.records import DealRecord, GameRecord, GameSnapshot, MoveRecord, replay_line
from golf.engine.shuffle import ALGORITHM, commitment, new_seed
from golf.engine.solitaire.moves import Draw, IllegalMove, Move, PlayColumn, parse_move
from golf.engine.solitaire.rules import PRESET_VERSION, PRESETS, SolitaireRules
from golf.engine.solitaire.state import Layout, State, Status

PYSOL_ALGORITHM = "pysolfc"
MAX_SEED_LENGTH = 128
MAX_KEY_LENGTH = 128
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
_RACE_ATTEMPTS = 5
RULE_FIELDS = frozenset(f.name for f in fields(SolitaireRules))


def resolve_rules(preset: str, overrides: dict[str, Any]) -> tuple[str, SolitaireRules]:
    """The preset's rules with ``overrides`` applied, and the preset name to record ("custom" if changed)."""
    name = preset or "standard"
    base = PRESETS.get(name)
    if base is None:
        raise InvalidArgument("preset", f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}")
    unknown = set(overrides) - RULE_FIELDS
    if unknown:
        raise InvalidArgument("rules", f"unknown rule option(s): {', '.join(sorted(unknown))}")
    rules = replace(base, **overrides)
    try:
        rules.validate()
    except ValueError as err:
        field_name, _, _ = str(err).partition(":")
        raise InvalidArgument(f"rules.{field_name}", str(err)) from None
    return (name if rules == base else "custom"), rules


def same_intent(asked: Move, code: str) -> bool:
    """Whether a retried request asks for the move stored under its idempotency key."""
    made = parse_move(code)
    if isinstance(asked, Draw):
        return isinstance(made, Draw) and asked.card in (None, made.card)
    return isinstance(made, PlayColumn) and asked.column == made.column and asked.card in (None, made.card)


def _encode_token(game: GameRecord) -> str:
    raw = json.dumps([game.created_at.isoformat(), game.id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str) -> tuple[datetime, str]:
    try:
        when, game_id = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        return datetime.fromisoformat(when), str(game_id)
    except (ValueError, TypeError, binascii.Error):
        raise InvalidArgument("pageToken", "not a page token from this service") from None


@dataclass
class SolitaireService:
    """The solitaire use cases. Deals never change once made, so they are cached by id."""

    uow: UnitOfWorkFactory
    clock: Clock
    deal_cache_size: int = 4096
    state_cache_size: int = 4096
    _deals: OrderedDict[str, DealRecord] = field(default_factory=OrderedDict)
    # Positions by game id, tagged with the version they belong to: a hit saves replaying the move line. The
    # database stays the source of truth; an entry is used only when its version matches the stored game.
    _states: OrderedDict[str, tuple[int, State]] = field(default_factory=OrderedDict)

    # -- deals ---------------------------------------------------------------------------------------------
    async def create_deal(
        self,
        preset: str = "",
        overrides: dict[str, Any] | None = None,
        seed: str | None = None,
        pysol_number: int | None = None,
    ) -> DealRecord:
        """Make and store a deal from a preset, optional rule overrides and an optional seed or PySolFC number."""
        deal = self._new_deal(preset, overrides or {}, seed, pysol_number)
        async with self.uow() as uow:
            await uow.repo.add_deal(deal)
            await uow.commit()
        self._remember(deal)
        return deal

    def _new_deal(
        self, preset: str, overrides: dict[str, Any], seed: str | None, pysol_number: int | None
    ) -> DealRecord:
        name, rules = resolve_rules(preset, overrides)
        if pysol_number is not None:
            if seed is not None:
                raise InvalidArgument("seed", "give either seed or pysolDealNumber, not both")
            if not rules.is_pysol_layout():
                raise InvalidArgument("pysolDealNumber", "PySolFC deals need 1 deck in 7 columns of 5")
            try:
                layout = Layout.from_pysol(pysol_number)
            except ValueError as err:
                raise InvalidArgument("pysolDealNumber", str(err)) from None
            seed, algorithm = f"pysol:{pysol_number}", PYSOL_ALGORITHM
        else:
            if seed is None:
                seed = new_seed()
            elif not 1 <= len(seed) <= MAX_SEED_LENGTH:
                raise InvalidArgument("seed", f"seed must be 1 to {MAX_SEED_LENGTH} characters")
            layout, algorithm = Layout.from_seed(rules, seed), ALGORITHM
        return DealRecord(
            id=str(uuid.uuid4()),
            preset=name,
            preset_version=PRESET_VERSION,
            rules=rules,
            seed=seed,
            algorithm=algorithm,
            commitment=commitment(algorithm, seed, rules.canonical()),
            layout=layout,
            created_at=self.clock(),
            pysol_number=pysol_number,
        )

    async def get_deal(self, deal_id: str) -> DealRecord:
        async with self.uow() as uow:
            return await self._deal(uow, deal_id)

    async def _deal(self, uow: UnitOfWork, deal_id: str) -> DealRecord:
        cached = self._deals.get(deal_id)
        if cached is not None:
            self._deals.move_to_end(deal_id)
            return cached
        deal = await uow.repo.get_deal(deal_id)
        if deal is None:
            raise NotFound(f"no deal {deal_id!r}")
        self._remember(deal)
        return deal

    def _remember(self, deal: DealRecord) -> None:
        self._deals[deal.id] = deal
        if len(self._deals) > self.deal_cache_size:
            self._deals.popitem(last=False)

    # -- games ---------------------------------------------------------------------------------------------
    async def create_game(
        self, deal_id: str = "", preset: str = "", overrides: dict[str, Any] | None = None
    ) -> GameSnapshot:
        """Start a game on ``deal_id``, or on a new deal from ``preset`` and ``overrides``."""
        now = self.clock()
        async with self.uow() as uow:
            if deal_id:
                if preset or overrides:
                    raise InvalidArgument("dealId", "give either dealId or preset/rules, not both")
                deal = await self._deal(uow, deal_id)
            else:
                deal = self._new_deal(preset, overrides or {}, None, None)
                await uow.repo.add_deal(deal)
            state = State.initial(deal.rules, deal.layout)
            game = GameRecord(
                id=str(uuid.uuid4()),
                deal_id=deal.id,
                version=0,
                status=state.status.value,
                score=state.score,
                line=[],
                created_at=now,
                updated_at=now,
            )
            await uow.repo.add_game(game)
            await uow.commit()
        self._remember(deal)
        return GameSnapshot(game, deal, state, now)

    async def get_game(self, game_id: str) -> GameSnapshot:
        async with self.uow() as uow:
            return await self._snapshot(uow, game_id)

    async def _snapshot(self, uow: UnitOfWork, game_id: str) -> GameSnapshot:
        game = await uow.repo.get_game(game_id)
        if game is None:
            raise NotFound(f"no game {game_id!r}")
        deal = await self._deal(uow, game.deal_id)
        return GameSnapshot(game, deal, self._state(game, deal), self.clock())

    def _state(self, game: GameRecord, deal: DealRecord) -> State:
        cached = self._states.get(game.id)
        if cached is not None and cached[0] == game.version:
            self._states.move_to_end(game.id)
            return cached[1]
        state = replay_line(deal, game.line)
        self._remember_state(game.id, game.version, state)
        return state

    def _remember_state(self, game_id: str, version: int, state: State) -> None:
        self._states[game_id] = (version, state)
        self._states.move_to_end(game_id)
        if len(self._states) > self.state_cache_size:
            self._states.popitem(last=False)

    async def list_games(self, page_size: int = 0, page_token: str = "") -> tuple[list[GameSnapshot], str]:
        """Games newest first, a page at a time; the token is empty on the last page."""
        if page_size < 0 or page_size > MAX_PAGE_SIZE:
            raise InvalidArgument("pageSize", f"pageSize must be 0 to {MAX_PAGE_SIZE}")
        size = page_size or DEFAULT_PAGE_SIZE
        after = _decode_token(page_token) if page_token else None
        async with self.uow() as uow:
            games = await uow.repo.list_games(size + 1, after)
            deals = await uow.repo.get_deals({g.deal_id for g in games} - set(self._deals))
        for deal in deals.values():
            self._remember(deal)
        now = self.clock()
        page = games[:size]
        snaps = []
        for g in page:
            deal = self._deals.get(g.deal_id) or deals[g.deal_id]
            snaps.append(GameSnapshot(g, deal, self._state(g, deal), now))
        return snaps, (_encode_token(page[-1]) if len(games) > size else "")

    # -- moves ---------------------------------------------------------------------------------------------
    async def play_move(
        self, game_id: str, move: Move, idempotency_key: str, expected_version: int | None = None
    ) -> GameSnapshot:
        """Validate, store and apply one move; the move is committed before this returns.

        A retry with the same idempotency key gets the stored result. Races between writers are settled by the
        database's unique (game, seq) constraint: the loser reloads and tries again.
        """
        if not idempotency_key or len(idempotency_key) > MAX_KEY_LENGTH:
            raise InvalidArgument("idempotencyKey", f"idempotencyKey must be 1 to {MAX_KEY_LENGTH} characters")
        for _ in range(_RACE_ATTEMPTS):
            try:
                async with self.uow() as uow:
                    return await self._try_move(uow, game_id, move, idempotency_key, expected_version)
            except DuplicateMove as dup:
                if dup.key_taken:
                    async with self.uow() as uow:
                        stored = await self._stored_result(uow, game_id, move, idempotency_key)
                    assert stored is not None
                    return stored
            except _LostRace:
                pass
        raise Conflict(f"game {game_id!r} changed too often while this move was tried; retry")

    async def _try_move(
        self, uow: UnitOfWork, game_id: str, move: Move, key: str, expected_version: int | None
    ) -> GameSnapshot:
        snap = await self._snapshot(uow, game_id)
        game, state = snap.game, snap.state
        if expected_version is not None and expected_version != game.version:
            stored = await self._stored_result(uow, game_id, move, key)
            if stored is not None:
                return stored
            raise StaleVersion(f"the game is at version {game.version}, not {expected_version}", snap)
        try:
            made = state.check(move)
        except IllegalMove as illegal:
            stored = await self._stored_result(uow, game_id, move, key)
            if stored is not None:
                return stored
            raise MoveRefused(illegal, snap) from None
        after = state.apply(made)
        now = self.clock()
        old_version = game.version
        await uow.repo.append_move(MoveRecord(game_id, old_version + 1, made.code, key, now))
        game.version = old_version + 1
        game.line = [*game.line, made.code]
        game.status = after.status.value
        game.score = after.score
        game.updated_at = now
        if after.status is not Status.IN_PROGRESS:
            game.finished_at = now
        if not await uow.repo.save_game(game, old_version):
            raise _LostRace
        await uow.commit()
        self._remember_state(game_id, game.version, after)
        return GameSnapshot(game, snap.deal, after, now, made)

    async def _stored_result(self, uow: UnitOfWork, game_id: str, move: Move, key: str) -> GameSnapshot | None:
        """The result first given for ``key``, rebuilt from the log; None if the key is unused."""
        stored = await uow.repo.find_move(game_id, key)
        if stored is None:
            return None
        if not same_intent(move, stored.code):
            raise IdempotencyKeyReused(f"idempotency key {key!r} was already used for another move in this game")
        game = await uow.repo.get_game(game_id)
        assert game is not None
        deal = await self._deal(uow, game.deal_id)
        log = [m for m in await uow.repo.get_moves(game_id) if m.seq <= stored.seq]
        line = [m.code for m in log]
        state = replay_line(deal, line)
        at = replace(
            game,
            version=stored.seq,
            line=line,
            status=state.status.value,
            score=state.score,
            updated_at=stored.created_at,
            finished_at=stored.created_at if state.status is not Status.IN_PROGRESS else None,
        )
        return GameSnapshot(at, deal, state, stored.created_at, parse_move(stored.code), replayed=True)


class _LostRace(Exception):
    """Another writer saved the game first; the transaction is rolled back and the move tried again."""
