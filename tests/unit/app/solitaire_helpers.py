"""Solitaire set-ups the unit tests share: a game played to its end, deals stored straight into the fake store."""

from __future__ import annotations

from golf.app.identity import Caller
from golf.app.records import DealRecord, GameSnapshot
from golf.app.solitaire import SolitaireService
from golf.bootstrap import Services
from golf.engine.solitaire.state import Status
from tests.unit.app.fakes import FakeDeals, FakeStore


async def play_out(games: SolitaireService, caller: Caller, snap: GameSnapshot) -> GameSnapshot:
    """Play ``snap``'s game to its end (drawing first, so it ends soon)."""
    while snap.state.status is Status.IN_PROGRESS:
        move = snap.state.legal_moves()[-1]
        snap = await games.play_move(caller, snap.game.id, move, f"end-{snap.game.version}")
    return snap


async def store_deals(services: Services, store: FakeStore, n: int, pool: bool) -> list[DealRecord]:
    """``n`` server-seeded "wrap" deals put straight into the tables, and into the pool if ``pool``."""
    stored = FakeDeals(store.tables)
    deals = [services.dealer.plain("wrap", {}, None, None) for _ in range(n)]
    for deal in deals:
        assert deal.seed_source == "server"
        await stored.add_deal(deal)
        if pool:
            await stored.pool_add("wrap", "easy", deal.id)
    return deals
