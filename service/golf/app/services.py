"""The use cases wired together over one storage, clock and solver."""

from __future__ import annotations

from dataclasses import dataclass

from golf.app.dealing import Dealer, DealSettings
from golf.app.players import PlayerService
from golf.app.ports import Clock, RateLimiter, Solver, TokenIssuer, UnitOfWork, UnitOfWorkFactory
from golf.app.recording import RecordKeeper
from golf.app.rounds import RoundService
from golf.app.solitaire import SolitaireService
from golf.app.tables.service import TableService
from golf.app.tables.writer import Appended, AppendObserver


@dataclass(frozen=True)
class Services:
    games: SolitaireService
    rounds: RoundService
    dealer: Dealer
    players: PlayerService
    tables: TableService


def build_services(
    uow: UnitOfWorkFactory,
    clock: Clock,
    solver: Solver,
    settings: DealSettings,
    tokens: TokenIssuer,
    limiter: RateLimiter,
    refresh_days: int = 365,
) -> Services:
    dealer = Dealer(uow, clock, solver, settings, limiter)
    records = RecordKeeper()
    games = SolitaireService(uow, clock, dealer, solver, limiter, solver_budget=settings.solver_budget, records=records)
    rounds = RoundService(uow, clock, games, limiter)
    players = PlayerService(uow, clock, tokens, limiter, refresh_days)
    tables = TableService(uow, clock, limiter)
    tables.observers.append(match_recorder(records))
    return Services(games, rounds, dealer, players, tables)


def match_recorder(records: RecordKeeper) -> AppendObserver:
    """The table observer that records a match in the transaction of the entry that ends it."""

    async def observe(uow: UnitOfWork, appended: Appended) -> None:
        await records.match_finished(
            uow, appended.table_id, appended.record.created_at, appended.before, appended.after, appended.at
        )

    return observe
