"""Winnable deals and their difficulty, the pool, the daily deal and rounds, against in-memory storage."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from golf.app.dealing import Dealer, DealSettings
from golf.app.errors import DealUnavailable, InvalidArgument, RoundOver, StorageUnavailable
from golf.app.identity import Caller
from golf.app.solving import InlineSolver
from golf.bootstrap import Services, build_services
from golf.engine.solitaire.difficulty import Difficulty, classify
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import State, Status
from tests.unit.app.fake_ports import FakeLimiter, FakeTokens
from tests.unit.app.fakes import FakeClock, FakeStore

ANN = Caller("player-ann")


@pytest.fixture
def deal_settings() -> DealSettings:
    return DealSettings(solver_budget=500_000, pool_size=1, pool_presets=("wrap",))


async def test_winnable_deals_are_winnable(services: Services) -> None:
    for preset in ("standard", "wrap"):
        deal = await services.games.create_deal(ANN, preset, winnable_only=True)
        assert deal.verdict is not None and deal.verdict.winnable
        result = solve(State.initial(deal.rules, deal.layout), fewest_cards=False)
        assert result.winnable
        assert deal.verdict.difficulty == classify(result.positions).value


async def test_new_games_are_winnable_by_default(services: Services) -> None:
    snap = await services.games.create_game(ANN, "", "standard")
    assert snap.deal.verdict is not None and snap.deal.verdict.winnable


async def test_difficulty_is_honoured(services: Services) -> None:
    deal = await services.games.create_deal(ANN, "wrap", difficulty=Difficulty.EASY)
    assert deal.verdict is not None and deal.verdict.difficulty == "easy"


async def test_a_seed_cannot_be_asked_for_with_winnable_only(services: Services) -> None:
    with pytest.raises(InvalidArgument) as err:
        await services.games.create_deal(ANN, "standard", seed="x", winnable_only=True)
    assert err.value.field == "winnableOnly"


async def test_unavailable_when_the_search_finds_nothing(store: FakeStore, clock: FakeClock) -> None:
    settings = DealSettings(solver_budget=1, search_attempts=2)
    stingy = build_services(store, clock, InlineSolver(), settings, FakeTokens(clock), FakeLimiter())
    with pytest.raises(DealUnavailable):
        await stingy.games.create_deal(ANN, "standard", winnable_only=True)


async def test_the_pool_fills_and_deals_from_itself(services: Services, store: FakeStore) -> None:
    while await services.dealer.refill_once():
        pass
    assert {row.difficulty for row in store.tables.pool} == {"easy", "medium", "hard"}
    pooled = {row.deal_id for row in store.tables.pool}
    size = len(pooled)
    deal = await services.games.create_deal(ANN, "wrap", winnable_only=True)
    assert deal.id in pooled
    hard = await services.games.create_deal(ANN, "wrap", difficulty=Difficulty.HARD)
    assert hard.id in pooled and hard.verdict is not None and hard.verdict.difficulty == "hard"
    # Fresh deals go first; once every deal was dealt, the least dealt is dealt again rather than wait.
    dealt = [(await services.games.create_deal(ANN, "wrap", winnable_only=True)).id for _ in range(2 * size)]
    assert set(dealt) == pooled and len(store.tables.pool) == size
    assert max(r.uses for r in store.tables.pool) - min(r.uses for r in store.tables.pool) <= 1
    # Refilling adds fresh deals again, dropping the most dealt once a bucket is at its library size.
    assert await services.dealer.refill_once() == 1


async def test_daily_deal_is_one_per_day_and_preset(services: Services, clock: FakeClock) -> None:
    def day(offset: int = 0) -> str:
        return (clock.now + timedelta(days=offset)).date().isoformat()

    today = await services.dealer.daily(day(), "wrap", ANN.player_id)
    assert today.verdict is not None and today.verdict.winnable
    assert (await services.dealer.daily(day(), "wrap", ANN.player_id)).id == today.id
    assert (await services.dealer.daily(day(), "standard", ANN.player_id)).id != today.id
    clock.advance(86_400)
    tomorrow = await services.dealer.daily(day(), "wrap", ANN.player_id)
    assert tomorrow.id != today.id
    assert (await services.dealer.daily(day(-1), "wrap", ANN.player_id)).id == today.id
    # Only YYYY-MM-DD, required: Python's own parser would take the compact and the week forms.
    for bad in ("", "2026-13-01", "soon", day(1), "0001-01-01", "20260102", "2026-W01-1", "2026-01-02T00:00"):
        with pytest.raises(InvalidArgument) as err:
            await services.dealer.daily(bad, "wrap", ANN.player_id)
        assert err.value.field == "date"


async def test_a_round_of_nine(services: Services, clock: FakeClock) -> None:
    rounds, games = services.rounds, services.games
    snap, game = await rounds.create_round(ANN, "wrap")
    assert snap.round.holes == 9 and snap.round.par == 45 and game.game.hole == 1
    for hole in range(1, 10):
        assert game.game.round_id == snap.round.id and game.game.hole == hole
        # Starting the next hole while this one is played returns this one (a safe retry).
        _, same = await rounds.start_next_hole(ANN, snap.round.id)
        assert same.game.id == game.game.id
        state = game
        clock.advance(3)
        while state.state.status is Status.IN_PROGRESS:
            state = await games.play_move(ANN, state.game.id, state.state.legal_moves()[-1], f"m{state.game.version}")
        if hole < 9:
            snap, game = await rounds.start_next_hole(ANN, snap.round.id)
    snap = await rounds.get_round(ANN, snap.round.id)
    assert snap.finished and len(snap.holes) == 9
    assert snap.total == sum(h.state.score for h in snap.holes)
    assert all(h.game.finished_at is not None and h.game.finished_at - h.game.created_at == timedelta(seconds=3)
               for h in snap.holes)  # fmt: skip
    with pytest.raises(RoundOver):
        await rounds.start_next_hole(ANN, snap.round.id)


async def test_round_options(services: Services) -> None:
    snap, _ = await services.rounds.create_round(ANN, "wrap", holes=18, par=80, winnable_only=False)
    assert (snap.round.holes, snap.round.par, snap.round.winnable_only) == (18, 80, False)
    with pytest.raises(InvalidArgument) as err:
        await services.rounds.create_round(ANN, "wrap", holes=10)
    assert err.value.field == "holes"


async def test_the_refill_waits_out_a_database_outage_quietly(
    clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """An outage is logged once where it is noticed (the driver); the refill loop does not add a traceback a try."""

    class Down:
        def __call__(self) -> Down:
            return self

        async def __aenter__(self) -> Down:
            raise StorageUnavailable("connection refused")

        async def __aexit__(self, *_exc: object) -> None:
            return None

    dealer = Dealer(Down(), clock, InlineSolver(), DealSettings(pool_size=1))  # type: ignore[arg-type]
    task = asyncio.create_task(dealer.refill_forever(idle_seconds=0.01))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not [r for r in caplog.records if "refilling the deal pool failed" in r.getMessage()]
