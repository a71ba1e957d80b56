"""Solitaire use cases: deals and games; moves, undo and AutoPlay as entries of the append-only log; hints.

Every change to a game is one log entry written in one transaction with the game row. A retry with the same
idempotency key gets the stored result; races between writers are settled by the database's unique
(game, seq) constraint: the loser reloads and tries again (``golf.app.idempotency``).
"""

from __future__ import annotations

import asyncio
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from golf.app.access import check_owner, check_read
from golf.app.dealing import Dealer
from golf.app.errors import (
    Conflict,
    IdempotencyKeyReused,
    InvalidArgument,
    MoveRefused,
    NotFound,
    StaleVersion,
)
from golf.app.idempotency import RACE_ATTEMPTS, check_key, until_stored
from golf.app.identity import Caller
from golf.app.page_tokens import check_page_size, decode_page_token, encode_page_token
from golf.app.ports import AlreadyStored, Clock, DuplicateMove, RateLimiter, Solver, UnitOfWork, UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.recording import RecordKeeper
from golf.app.records import (
    AUTOPLAY,
    UNDO,
    DealRecord,
    GameFilter,
    GameRecord,
    GameSnapshot,
    HintRecord,
    Intent,
    MoveRecord,
    action_moves,
    autoplay_code,
    effective,
    replay_line,
    same_intent,
    shows_stock,
)
from golf.app.reveals import check_shown, closed
from golf.engine.solitaire.autoplay import AutoRun
from golf.engine.solitaire.difficulty import Difficulty
from golf.engine.solitaire.moves import IllegalMove, Move, Refusal, parse_move
from golf.engine.solitaire.state import State, Status


@dataclass(frozen=True, slots=True)
class _Change:
    """What one log entry does: its code, the state after it, and the new line of entries in effect."""

    code: str
    after: State
    line: list[str]
    made: tuple[Move, ...]
    undo_of: int | None = None
    shows_stock: bool = False
    """An undo that takes back a stock draw: the player has seen a stock card (``GameRecord.stock_seen``)."""
    assisted: bool = False
    """The change was chosen by the solver (an assisted AutoPlay run)."""


Plan = Callable[[UnitOfWork, GameSnapshot], Awaitable[_Change]]


@dataclass
class SolitaireService:
    """The solitaire use cases. Deals never change once made (but for the solver's verdict), so they are cached."""

    uow: UnitOfWorkFactory
    clock: Clock
    dealer: Dealer
    solver: Solver
    limiter: RateLimiter
    solver_budget: int = 2_000_000
    records: RecordKeeper = field(default_factory=RecordKeeper)
    """Writes a finished game's records (history, boards, deal statistics) in the move's transaction."""
    deal_cache_size: int = 4096
    state_cache_size: int = 4096
    _deals: OrderedDict[str, DealRecord] = field(default_factory=OrderedDict)
    # The game rows this process last read or wrote, with their positions. A hit saves replaying the line, and
    # on the hot path it saves reading the row: a change built on a stale entry is refused by the database's
    # unique (game, seq) index and retried from a fresh read, so the database stays the source of truth.
    _games: OrderedDict[str, tuple[GameRecord, State]] = field(default_factory=OrderedDict)
    _verdicts: dict[str, asyncio.Task[DealRecord]] = field(default_factory=dict)

    # -- deals ---------------------------------------------------------------------------------------------
    async def create_deal(
        self,
        caller: Caller,
        preset: str = "",
        overrides: dict[str, Any] | None = None,
        seed: str | None = None,
        pysol_number: int | None = None,
        winnable_only: bool = False,
        difficulty: Difficulty | None = None,
    ) -> DealRecord:
        """Make and store a deal from a preset and rule overrides: from a seed or PySolFC number, or winnable."""
        await self.limiter.hit("create", caller.player_id)
        if winnable_only or difficulty is not None:
            if seed is not None or pysol_number is not None:
                raise InvalidArgument("winnableOnly", "winnable deals are dealt by the server, without seed or number")
            deal = await self.dealer.winnable(preset, overrides or {}, difficulty, caller.player_id)
        else:
            deal = self.dealer.plain(preset, overrides or {}, seed, pysol_number)
            async with self.uow() as uow:
                await uow.deals.add_deal(deal)
                await uow.commit()
        self._remember_deal(deal)
        return deal

    async def get_deal(self, deal_id: str) -> DealRecord:
        """A deal's public layout, readable by anyone signed in (it shows no hidden card)."""
        async with self.uow() as uow:
            return await self._deal(uow, deal_id)

    async def _deal(self, uow: UnitOfWork, deal_id: str) -> DealRecord:
        cached = self._deals.get(deal_id)
        if cached is not None:
            self._deals.move_to_end(deal_id)
            return cached
        deal = await uow.deals.get_deal(deal_id)
        if deal is None:
            raise NotFound(f"no deal {shown(deal_id)}")
        self._remember_deal(deal)
        return deal

    def _remember_deal(self, deal: DealRecord) -> None:
        self._deals[deal.id] = deal
        self._deals.move_to_end(deal.id)
        if len(self._deals) > self.deal_cache_size:
            self._deals.popitem(last=False)

    # -- games ---------------------------------------------------------------------------------------------
    async def create_game(
        self,
        caller: Caller,
        deal_id: str = "",
        preset: str = "",
        overrides: dict[str, Any] | None = None,
        winnable_only: bool = True,
        difficulty: Difficulty | None = None,
    ) -> GameSnapshot:
        """Start a game on ``deal_id``, or on a new deal (winnable unless asked otherwise)."""
        await self.limiter.hit("create", caller.player_id)
        return await self.start_game(caller.player_id, deal_id, preset, overrides, winnable_only, difficulty)

    async def start_game(
        self,
        owner_id: str,
        deal_id: str = "",
        preset: str = "",
        overrides: dict[str, Any] | None = None,
        winnable_only: bool = True,
        difficulty: Difficulty | None = None,
        round_id: str | None = None,
        hole: int | None = None,
    ) -> GameSnapshot:
        """``create_game`` for ``owner_id`` without the rate limit (rounds count their own holes).

        A deal whose seed the server drew is held by its game while that game is in progress: a unique index
        refuses a second game on it, so nobody (the owner's second account included) can replay a copy to read
        the stock. The daily deal is played by everyone at once and is held by nobody.
        """
        if deal_id and (preset or overrides):
            raise InvalidArgument("dealId", "give either dealId or preset/rules, not both")
        for _ in range(RACE_ATTEMPTS):
            try:
                if deal_id:
                    return await self._start_on_deal(owner_id, deal_id, practice=False)
                return await self._start_on_new_deal(
                    owner_id, preset, overrides or {}, winnable_only, difficulty, round_id, hole
                )
            except AlreadyStored as taken:
                if "uq_games_round_hole" in taken.constraint:
                    raise
                if deal_id and "uq_games_deal_in_play" in taken.constraint:
                    raise NotFound(f"no deal {shown(deal_id)}") from None
                # uq_games_scored by id: the player's concurrent first game won; this one is practice (next
                # try sees it). A pooled deal taken by two requests at once: take another.
        raise Conflict("too many concurrent requests for the same deal; retry")

    async def _start_on_deal(self, owner_id: str, deal_id: str, practice: bool) -> GameSnapshot:
        async with self.uow() as uow:
            deal = await self._deal(uow, deal_id)
            use = await uow.deals.deal_use(deal.id, owner_id)
            holds = deal.seed_source == "server" and not use.daily
            if holds and use.held:
                raise NotFound(f"no deal {shown(deal_id)}")  # the same answer as for an unknown id: nothing leaks
            # A deal no longer dealt fresh (its day over, out of the pool) may have its stock shown: practice.
            practice = practice or use.owner_games > 0 or closed(use.closed_at, self.clock())
            return await self._add_game(uow, owner_id, deal, holds, practice, None, None)

    async def _start_on_new_deal(
        self,
        owner_id: str,
        preset: str,
        overrides: dict[str, Any],
        winnable_only: bool,
        difficulty: Difficulty | None,
        round_id: str | None,
        hole: int | None,
    ) -> GameSnapshot:
        # A winnable deal is found (or taken from the pool) before the game's transaction: a search may take
        # a while and must not hold a connection or SQLite's single writer.
        found = (
            await self.dealer.winnable(preset, overrides, difficulty, owner_id)
            if winnable_only or difficulty is not None
            else None
        )
        async with self.uow() as uow:
            if found is not None:
                deal = found
            else:
                deal = self.dealer.plain(preset, overrides, None, None)
                await uow.deals.add_deal(deal)
            return await self._add_game(uow, owner_id, deal, True, False, round_id, hole)

    async def _add_game(
        self,
        uow: UnitOfWork,
        owner_id: str,
        deal: DealRecord,
        holds: bool,
        practice: bool,
        round_id: str | None,
        hole: int | None,
    ) -> GameSnapshot:
        now = self.clock()
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
            round_id=round_id,
            hole=hole,
            owner_id=owner_id,
            practice=practice,
            holds_deal=holds,
        )
        await uow.games.add_game(game)
        await uow.commit()
        self._remember_deal(deal)
        self._remember(game, state)  # its first move goes ahead without reading it back
        return GameSnapshot(game, deal, state, now)

    async def get_game(self, caller: Caller, game_id: str) -> GameSnapshot:
        """The game as its player sees it; another player sees it only once it is over and its deal is out of
        play (``golf.app.reveals``)."""
        async with self.uow() as uow:
            snap = await self._snapshot(uow, game_id)
            check_read(caller, snap.game.owner_id, snap.finished, f"game {shown(game_id)}")
            if snap.finished:  # in progress: its player's alone (check_read), and its view hides the stock
                await check_shown(uow, caller.player_id, snap.game, snap.as_of)
        return await self._with_verdict(snap)

    async def _snapshot(self, uow: UnitOfWork, game_id: str) -> GameSnapshot:
        game = await uow.games.get_game(game_id)
        if game is None:
            raise NotFound(f"no game {shown(game_id)}")
        deal = await self._deal(uow, game.deal_id)
        return GameSnapshot(game, deal, self._state(game, deal), self.clock())

    def _state(self, game: GameRecord, deal: DealRecord) -> State:
        cached = self._games.get(game.id)
        fresh = cached is not None and cached[0].version == game.version
        state = cached[1] if cached is not None and fresh else replay_line(deal, game.line)
        self._remember(game, state)
        return state

    def _remember(self, game: GameRecord, state: State) -> None:
        self._games[game.id] = (game.copy(), state)
        self._games.move_to_end(game.id)
        if len(self._games) > self.state_cache_size:
            self._games.popitem(last=False)

    async def _cached_snapshot(self, uow: UnitOfWork, game_id: str) -> GameSnapshot | None:
        cached = self._games.get(game_id)
        if cached is None:
            return None
        game, state = cached
        return GameSnapshot(game.copy(), await self._deal(uow, game.deal_id), state, self.clock())

    async def snapshots(self, games: list[GameRecord]) -> list[GameSnapshot]:
        """Snapshots of stored games, loading their deals in one go."""
        async with self.uow() as uow:
            deals = await uow.deals.get_deals({g.deal_id for g in games} - set(self._deals))
        for deal in deals.values():
            self._remember_deal(deal)
        now = self.clock()
        out = []
        for g in games:
            deal = self._deals.get(g.deal_id) or deals[g.deal_id]
            out.append(GameSnapshot(g, deal, self._state(g, deal), now))
        return out

    async def list_games(
        self, caller: Caller, page_size: int = 0, page_token: str = "", where: GameFilter | None = None
    ) -> tuple[list[GameSnapshot], str]:
        """The caller's games newest first, a page at a time; the token is empty on the last page."""
        size = check_page_size(page_size)
        after = decode_page_token(page_token) if page_token else None
        async with self.uow() as uow:
            games = await uow.games.list_games(caller.player_id, size + 1, after, where or GameFilter())
        page = games[:size]
        token = encode_page_token(page[-1].created_at, page[-1].id) if len(games) > size else ""
        return await self.snapshots(page), token

    async def list_moves(self, caller: Caller, game_id: str) -> list[MoveRecord]:
        """The game's whole log, undone entries marked."""
        async with self.uow() as uow:
            game = await uow.games.get_game(game_id)
            if game is None:
                raise NotFound(f"no game {shown(game_id)}")
            finished = game.status != Status.IN_PROGRESS.value
            check_read(caller, game.owner_id, finished, f"game {shown(game_id)}")
            if finished:  # its log names every card drawn
                await check_shown(uow, caller.player_id, game, self.clock())
            return await uow.games.get_moves(game_id)

    # -- changes: moves, undo, AutoPlay ----------------------------------------------------------------------
    async def play_move(
        self, caller: Caller, game_id: str, move: Move, idempotency_key: str, expected_version: int | None = None
    ) -> GameSnapshot:
        """Validate, store and apply one move; the move is committed before this returns."""

        async def plan(_uow: UnitOfWork, snap: GameSnapshot) -> _Change:
            made = snap.state.check(move)
            return _Change(made.code, snap.state.apply(made), [*snap.game.line, made.code], (made,))

        return await self._change(caller, game_id, move, idempotency_key, expected_version, plan)

    async def undo(
        self, caller: Caller, game_id: str, idempotency_key: str, expected_version: int | None = None
    ) -> GameSnapshot:
        """Take back the latest entry in effect (a move or a whole AutoPlay run), as the rules' policy allows.

        Taking back a stock draw is allowed as the policy says, but the player has then seen a stock card they could
        play the deal again knowing: the game is marked ``stock_seen`` in the undo's own write, and counts for no
        board or round ranking (``golf.app.recording``)."""

        async def plan(uow: UnitOfWork, snap: GameSnapshot) -> _Change:
            if snap.state.status is not Status.IN_PROGRESS:
                raise IllegalMove(Refusal.GAME_OVER, "the game is over")
            if not snap.game.line:
                raise IllegalMove(Refusal.NOTHING_TO_UNDO, "there is no move to take back")
            snap.deal.rules.check_undo(snap.game.undos_used)
            log = await uow.games.get_moves(snap.game.id)
            undone_seq, _ = effective([(m.seq, m.code) for m in log])[-1]
            line = snap.game.line[:-1]
            after = replay_line(snap.deal, line)
            return _Change(UNDO, after, line, (), undo_of=undone_seq, shows_stock=shows_stock(snap.game.line[-1]))

        return await self._change(caller, game_id, UNDO, idempotency_key, expected_version, plan)

    async def autoplay(
        self, caller: Caller, game_id: str, idempotency_key: str, expected_version: int | None = None
    ) -> GameSnapshot:
        """Play the longest run of column cards that fits, without drawing; keep the game winnable when it is.

        A run the solver chose counts as assistance on the game (``autoplay_assists``), like a hint. When every
        card that fits would throw a win away, nothing is played: the request is refused (``NOTHING_TO_PLAY``)."""
        check_key(idempotency_key)
        for _ in range(RACE_ATTEMPTS):
            async with self.uow() as uow:
                snap = await self._snapshot(uow, game_id)
                check_owner(caller, snap.game.owner_id, snap.finished, f"game {shown(game_id)}")
                stored = await self._stored_result(uow, game_id, AUTOPLAY, idempotency_key)
            if stored is not None:
                return await self._with_verdict(stored, wait=False)
            run = AutoRun(())
            if snap.state.status is Status.IN_PROGRESS and snap.state.column_plays():
                await self.limiter.hit("solver", caller.player_id)
                run = await self.solver.autoplay_run(snap.state, self.solver_budget, caller.player_id)
            seen = snap.game.version

            async def plan(_uow: UnitOfWork, now: GameSnapshot, run: AutoRun = run, seen: int = seen) -> _Change:
                if now.state.status is not Status.IN_PROGRESS:
                    raise IllegalMove(Refusal.GAME_OVER, "the game is over")
                if now.game.version != seen:
                    raise _Replan
                if not run.moves:
                    raise IllegalMove(Refusal.NOTHING_TO_PLAY, _STOPPED if run.solver_chose else _NOTHING_FITS)
                code = autoplay_code(run.moves)
                after = now.state.replay(list(run.moves))
                return _Change(code, after, [*now.game.line, code], run.moves, assisted=run.solver_chose)

            try:
                return await self._change(caller, game_id, AUTOPLAY, idempotency_key, expected_version, plan)
            except _Replan:
                continue
        raise Conflict(f"game {shown(game_id)} changed too often while AutoPlay was planned; retry")

    async def _change(
        self, caller: Caller, game_id: str, intent: Intent, key: str, expected_version: int | None, plan: Plan
    ) -> GameSnapshot:
        check_key(key)

        async def attempt() -> GameSnapshot:
            async with self.uow() as uow:
                return await self._try_change(uow, caller, game_id, intent, key, expected_version, plan)

        async def lost(race: DuplicateMove) -> GameSnapshot | None:
            self._games.pop(game_id, None)  # another writer (or replica) got there first
            if not race.key_taken:
                return None
            async with self.uow() as uow:
                stored = await self._stored_result(uow, game_id, intent, key)
            assert stored is not None
            return stored

        gave_up = f"game {shown(game_id)} changed too often while this request was tried; retry"
        return await self._with_verdict(await until_stored(attempt, DuplicateMove, lost, gave_up), wait=False)

    async def _try_change(
        self,
        uow: UnitOfWork,
        caller: Caller,
        game_id: str,
        intent: Intent,
        key: str,
        expected_version: int | None,
        plan: Plan,
    ) -> GameSnapshot:
        snap = await self._cached_snapshot(uow, game_id)
        if snap is not None and snap.game.owner_id != caller.player_id:
            # A cached row may be stale about whether the game is over, which decides what another player is told
            # (NOT_FOUND or PERMISSION_DENIED): only the owner goes ahead on it.
            snap = None
        change: _Change | None = None
        # Trust a cached row only to go ahead; any refusal is decided on a fresh read.
        if snap is not None and expected_version in (None, snap.game.version):
            try:
                change = await plan(uow, snap)
            except IllegalMove:
                change = None
        if change is None:
            snap = await self._snapshot(uow, game_id)
            check_owner(caller, snap.game.owner_id, snap.finished, f"game {shown(game_id)}")
            if expected_version is not None and expected_version != snap.game.version:
                stored = await self._stored_result(uow, game_id, intent, key)
                if stored is not None:
                    return stored
                raise StaleVersion(f"the game is at version {snap.game.version}, not {expected_version}", snap)
            try:
                change = await plan(uow, snap)
            except IllegalMove as illegal:
                stored = await self._stored_result(uow, game_id, intent, key)
                if stored is not None:
                    return stored
                raise MoveRefused(illegal, snap) from None
        assert snap is not None
        game = snap.game
        now = self.clock()
        old_version = game.version
        seq = old_version + 1
        game = game.copy()
        game.version = seq
        game.line = change.line
        game.status = change.after.status.value
        game.score = change.after.score
        game.updated_at = now
        game.finished_at = now if change.after.status is not Status.IN_PROGRESS else None
        game.undos_used += change.undo_of is not None
        game.stock_seen = game.stock_seen or change.shows_stock
        game.autoplay_assists += change.assisted
        entry = MoveRecord(game_id, seq, change.code, key, now)
        # A move that finishes the game is stored with the game's records, in one transaction begun here (a move
        # alone may be stored by one statement outside any transaction).
        issuer = await self.records.hold_player(uow, game.owner_id) if game.finished_at is not None else None
        hints_used = await uow.games.record_change(entry, game, old_version, change.undo_of)
        if hints_used is None:  # another writer moved the game first: as if its sequence number were taken
            raise DuplicateMove(key_taken=False)
        game.hints_used = hints_used
        if issuer is not None:
            await self.records.game_finished(uow, game, snap.deal.preset, issuer)
        await uow.commit()
        self._remember(game, change.after)
        return GameSnapshot(game, snap.deal, change.after, now, change.made)

    async def _stored_result(self, uow: UnitOfWork, game_id: str, intent: Intent, key: str) -> GameSnapshot | None:
        """The result first given for ``key``, rebuilt from the log; None if the key is unused."""
        stored = await uow.games.find_move(game_id, key)
        if stored is None:
            return None
        if not same_intent(intent, stored.code):
            raise IdempotencyKeyReused(f"idempotency key {shown(key)} was already used for another change of this game")
        game = await uow.games.get_game(game_id)
        assert game is not None
        deal = await self._deal(uow, game.deal_id)
        log = [m for m in await uow.games.get_moves(game_id) if m.seq <= stored.seq]
        line = [code for _, code in effective([(m.seq, m.code) for m in log])]
        state = replay_line(deal, line)
        over = state.status is not Status.IN_PROGRESS
        at = replace(
            game,
            version=stored.seq,
            line=line,
            status=state.status.value,
            score=state.score,
            updated_at=stored.created_at,
            finished_at=stored.created_at if over else None,
            undos_used=sum(m.code == UNDO for m in log),
            stock_seen=_stock_seen(log, stored.seq),
        )
        made = () if stored.code == UNDO else tuple(action_moves(stored.code))
        return GameSnapshot(at, deal, state, stored.created_at, made, replayed=True)

    async def _with_verdict(self, snap: GameSnapshot, wait: bool = True) -> GameSnapshot:
        """Once a game is over its deal carries the solver's verdict ("you could have won like this").

        Moves never wait for it (the solver may take a while): they start it in the background, and reading the
        game (``wait``) waits for it.
        """
        if snap.state.status is Status.IN_PROGRESS or snap.deal.verdict is not None:
            return snap
        cached = self._deals.get(snap.deal.id)
        if cached is not None and cached.verdict is not None:
            return replace(snap, deal=cached)
        task = self._verdicts.get(snap.deal.id)
        if task is None:
            task = self._verdicts[snap.deal.id] = asyncio.create_task(self._decide(snap.deal))
        if not wait:
            return snap
        return replace(snap, deal=await asyncio.shield(task))

    async def _decide(self, deal: DealRecord) -> DealRecord:
        try:
            verdict = await self.solver.verdict(State.initial(deal.rules, deal.layout), self.solver_budget)
            decided = await self.dealer.save_verdict(deal, verdict)
            self._remember_deal(decided)
            return decided
        finally:
            self._verdicts.pop(deal.id, None)

    # -- hints ---------------------------------------------------------------------------------------------
    async def hint(self, caller: Caller, game_id: str, idempotency_key: str) -> tuple[Move, GameSnapshot, bool]:
        """The next move of a winning line, else the move toward the fewest cards left; counted on the game.

        Returns the move, the game and whether this is the stored answer to an earlier request with the key.
        """
        check_key(idempotency_key)
        async with self.uow() as uow:
            snap = await self._snapshot(uow, game_id)
            check_owner(caller, snap.game.owner_id, snap.finished, f"game {shown(game_id)}")
            stored = await uow.games.find_hint(game_id, idempotency_key)
        if stored is None:
            if snap.state.status is not Status.IN_PROGRESS:
                raise MoveRefused(IllegalMove(Refusal.GAME_OVER, "the game is over"), snap)
            await self.limiter.hit("solver", caller.player_id)
            result = await self.solver.solve(snap.state, self.solver_budget, caller.player_id)
            move = result.hint or snap.state.legal_moves()[0]
            try:
                async with self.uow() as uow:
                    await uow.games.add_hint(HintRecord(game_id, idempotency_key, move.code, self.clock()))
                    await uow.commit()
            except AlreadyStored:
                async with self.uow() as uow:
                    stored = await uow.games.find_hint(game_id, idempotency_key)
                assert stored is not None
            else:
                return move, await self.get_game(caller, game_id), False
        return parse_move(stored.code), await self.get_game(caller, game_id), True


def _stock_seen(log: list[MoveRecord], seq: int) -> bool:
    """Whether an undo up to entry ``seq`` of ``log`` took back a stock draw (the game's ``stock_seen`` then)."""
    return any(m.undone_by is not None and m.undone_by <= seq and shows_stock(m.code) for m in log)


_NOTHING_FITS = "no column card fits on the pile"
_STOPPED = "every column card that fits would lose a game that can still be won: turn a stock card"


class _Replan(Exception):
    """The game moved while AutoPlay was planned outside the transaction; plan again."""
