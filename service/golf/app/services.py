"""The use cases wired together over one storage, clock and solver."""

from __future__ import annotations

from dataclasses import dataclass

from golf.app.dealing import Dealer, DealSettings
from golf.app.players import PlayerService
from golf.app.ports import Clock, RateLimiter, Solver, TokenIssuer, UnitOfWorkFactory
from golf.app.rounds import RoundService
from golf.app.solitaire import SolitaireService
from golf.app.table_service import TableService


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
    games = SolitaireService(uow, clock, dealer, solver, limiter, solver_budget=settings.solver_budget)
    rounds = RoundService(uow, clock, games, limiter)
    players = PlayerService(uow, clock, tokens, limiter, refresh_days)
    return Services(games, rounds, dealer, players, TableService(uow, clock, limiter))
