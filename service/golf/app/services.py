"""The use cases wired together over one storage, clock and solver."""

from __future__ import annotations

from dataclasses import dataclass

from golf.app.dealing import Dealer, DealSettings
from golf.app.ports import Clock, Solver, UnitOfWorkFactory
from golf.app.rounds import RoundService
from golf.app.solitaire import SolitaireService


@dataclass(frozen=True)
class Services:
    games: SolitaireService
    rounds: RoundService
    dealer: Dealer


def build_services(uow: UnitOfWorkFactory, clock: Clock, solver: Solver, settings: DealSettings) -> Services:
    dealer = Dealer(uow, clock, solver, settings)
    games = SolitaireService(uow, clock, dealer, solver, solver_budget=settings.solver_budget)
    return Services(games, RoundService(uow, clock, games), dealer)
