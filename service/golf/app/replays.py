"""Replays: a finished solitaire game, round or card Golf match stepped through entry by entry of its stored log.

Each step is what a spectator could have seen right after one entry (step 0: the start); the last step is the
finished game or match as it is shown now, which reveals what play hid (a game's seed and stock, a match's last
hole). Who may replay what:

| record | who may replay it | anyone else |
| --- | --- | --- |
| a game or round | its player once finished; anyone once its deals are out of play too | ``DealInPlay`` |
| a game or round in play | nobody: its owner is told ``NotFinished`` | ``NotFound`` |
| a listed table's match | anyone, once the match is over (before: ``NotFinished``) | |
| a private table's match | its seated players and its creator (as ``GetTable``), once it is over | ``NotFound`` |

An id of another kind of record than the one asked for is ``NotFound``. Whose game shows what is decided by
``golf.app.access`` (who may read it) and ``golf.app.reveals`` (whether its deal is out of play).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from golf.app.access import check_read
from golf.app.errors import InvalidArgument, NotFinished, NotFound
from golf.app.history import RecordKind
from golf.app.identity import Caller
from golf.app.ports import UnitOfWorkFactory
from golf.app.quoting import shown
from golf.app.records import GameRecord, GameSnapshot, MoveRecord
from golf.app.replay_steps import game_steps, table_steps
from golf.app.reveals import check_shown
from golf.app.solitaire import SolitaireService
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.records import TableRecord
from golf.app.tables.state import Table
from golf.app.tables.status import TableStatus
from golf.app.tables.views import view_for
from golf.engine.solitaire.state import Status

DEFAULT_MAX_STEPS = 100
MAX_STEPS = 500


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One step: its index in the whole replay, when it was reached, the round's hole it belongs to (0 outside a
    round), and the game or the table as a spectator saw it then."""

    index: int
    time: datetime
    hole: int
    state: GameSnapshot | TableSnapshot


@dataclass(frozen=True, slots=True)
class ReplayPage:
    steps: list[ReplayStep]
    total: int
    """Steps in the whole replay."""


class ReplayService:
    """The replay use case. ``games`` gives the deals (cached) and the finished game as ``GetGame`` shows it."""

    def __init__(self, uow: UnitOfWorkFactory, games: SolitaireService) -> None:
        self.uow = uow
        self.games = games

    async def get_replay(
        self, caller: Caller, kind: RecordKind, record_id: str, first_step: int = 0, max_steps: int = 0
    ) -> ReplayPage:
        """Steps ``first_step`` onwards (at most ``max_steps``, default 100, up to 500) of the replay of the
        finished game, round or match ``record_id``, and how many steps the whole replay has."""
        if first_step < 0:
            raise InvalidArgument("firstStep", "firstStep must not be negative")
        if not 0 <= max_steps <= MAX_STEPS:
            raise InvalidArgument("maxSteps", f"maxSteps must be 0 to {MAX_STEPS}")
        stop = first_step + (max_steps or DEFAULT_MAX_STEPS)
        if kind is RecordKind.GAME:
            return await self._game(caller, record_id, first_step, stop)
        if kind is RecordKind.ROUND:
            return await self._round(caller, record_id, first_step, stop)
        return await self._match(caller, record_id, first_step, stop)

    # -- solitaire -------------------------------------------------------------------------------------------
    async def _game(self, caller: Caller, game_id: str, start: int, stop: int) -> ReplayPage:
        async with self.uow() as uow:
            game = await uow.games.get_game(game_id)
            if game is None:
                raise NotFound(f"no game {shown(game_id)}")
            finished = game.status != Status.IN_PROGRESS.value
            check_read(caller, game.owner_id, finished, f"game {shown(game_id)}")
            if not finished:
                raise NotFinished(f"game {shown(game_id)} is still being played: only a finished game is replayed")
            await check_shown(uow, caller.player_id, game, self.games.clock())
            log = await uow.games.get_moves(game_id)
        steps = await self._hole_steps(caller, game, log, start, stop, 0, 0)
        return ReplayPage(steps, len(log) + 1)

    async def _round(self, caller: Caller, round_id: str, start: int, stop: int) -> ReplayPage:
        async with self.uow() as uow:
            record = await uow.rounds.get_round(round_id)
            if record is None:
                raise NotFound(f"no round {shown(round_id)}")
            games = await uow.rounds.round_games(round_id)
            finished = len(games) == record.holes and all(g.status != Status.IN_PROGRESS.value for g in games)
            check_read(caller, record.owner_id, finished, f"round {shown(round_id)}")
            if not finished:
                raise NotFinished(
                    f"round {shown(round_id)} is still being played: only a round whose holes are all finished is "
                    "replayed"
                )
            for game in games:  # each hole's deal: a round's holes are dealt from the pool, shared with others
                await check_shown(uow, caller.player_id, game, self.games.clock())
            logs = [await uow.games.get_moves(g.id) for g in games]
        steps: list[ReplayStep] = []
        offset = 0
        for game, log in zip(games, logs, strict=True):
            count = len(log) + 1
            if offset < stop and start < offset + count:  # only the holes the page reaches are stepped through
                steps += await self._hole_steps(caller, game, log, start - offset, stop - offset, offset, game.hole)
            offset += count
        return ReplayPage(steps, offset)

    async def _hole_steps(
        self,
        caller: Caller,
        game: GameRecord,
        log: list[MoveRecord],
        start: int,
        stop: int,
        offset: int,
        hole: int | None,
    ) -> list[ReplayStep]:
        """Steps ``start`` to ``stop - 1`` of one finished game, numbered from ``offset``."""
        if len(log) < stop:
            # The page ends with the finished game: its deal as GetGame shows it then, with the solver's verdict
            # (waited for as GetGame does) for the post-mortem of the last step.
            deal = (await self.games.get_game(caller, game.id)).deal
        else:
            deal = await self.games.get_deal(game.deal_id)
        first = max(start, 0)
        return [
            ReplayStep(offset + first + i, snap.as_of, hole or 0, snap)
            for i, snap in enumerate(game_steps(game, deal, log, first, stop))
        ]

    # -- card Golf ---------------------------------------------------------------------------------------------
    async def _match(self, caller: Caller, table_id: str, start: int, stop: int) -> ReplayPage:
        async with self.uow() as uow:
            record = await uow.tables.get_table(table_id)
            if record is None:
                raise NotFound(f"no table {shown(table_id)}")
            log = await uow.tables.get_entries(table_id, through_seq=record.version)
        final, steps = table_steps(record, log, start, stop)
        _check_may_replay(caller, record, final)
        if final.status is not TableStatus.OVER:
            raise NotFinished(f"the match at table {shown(table_id)} is not over: only a finished match is replayed")
        return ReplayPage(
            [
                ReplayStep(step.index, step.time, 0, _spectator(record, step.table, step.turn_deadline))
                for step in steps
            ],
            len(log) + 1,
        )


def _check_may_replay(caller: Caller, record: TableRecord, final: Table) -> None:
    """A private table's match is only its players' (and its creator's): to anyone else it does not exist."""
    if record.listed or caller.player_id == record.owner_id or final.seat_of(caller.player_id) is not None:
        return
    raise NotFound(f"no table {shown(record.id)}")


def _spectator(record: TableRecord, table: Table, deadline: datetime | None) -> TableSnapshot:
    """``table`` as a spectator (no seat) sees it: no legal moves, no join code."""
    return TableSnapshot(
        record.id, record.owner_id, record.created_at, view_for(table, None), seat=None, turn_deadline=deadline
    )
