"""Fair reveals (``golf.app.reveals``) with a clock the tests move: a finished game is its player's at once, and
anyone's once its deal is closed (a daily deal's day over, a pool deal out of the pool) a grace ago with no ranked
game on it in progress. Every call that could show a stock card (GetGame, ListMoves, GetReplay, ExportRecords) asks
the same rule; a game started on a closed deal is practice."""

from __future__ import annotations

from datetime import timedelta

import pytest

from golf.app.errors import DealInPlay, NotFound
from golf.app.exports import Exporter, ExportQuery, GameExport
from golf.app.history import RecordKind
from golf.app.identity import Caller
from golf.app.records import GameSnapshot
from golf.app.replays import ReplayService
from golf.app.reveals import CLOSE_GRACE
from golf.app.solitaire import SolitaireService
from golf.bootstrap import Services
from tests.unit.app.fake_index import ListIndex
from tests.unit.app.fakes import FakeClock, FakeDeals, FakeStore
from tests.unit.app.solitaire_helpers import play_out, store_deals

CAT = Caller("player-cat")


async def refused_everywhere(services: Services, store: FakeStore, clock: FakeClock, viewer: Caller, game: str) -> None:
    """``viewer`` learns nothing of ``game``: every call that would show its cards refuses, the export leaves it out."""
    games = services.games
    with pytest.raises(DealInPlay):
        await games.get_game(viewer, game)
    with pytest.raises(DealInPlay):
        await games.list_moves(viewer, game)
    with pytest.raises(DealInPlay):
        await ReplayService(store, games).get_replay(viewer, RecordKind.GAME, game)
    assert game not in await exported(store, clock, viewer)


async def exported(store: FakeStore, clock: FakeClock, viewer: Caller) -> list[str]:
    exporter = Exporter(store, ListIndex(store), clock=clock)
    items = [i async for i in exporter.export(ExportQuery.build(viewer.player_id))]
    return [i.game.id for i in items if isinstance(i, GameExport)]


async def shown_everywhere(services: Services, store: FakeStore, clock: FakeClock, viewer: Caller, game: str) -> None:
    games = services.games
    seen = await games.get_game(viewer, game)
    assert seen.finished
    assert await games.list_moves(viewer, game)
    page = await ReplayService(store, games).get_replay(viewer, RecordKind.GAME, game)
    assert page.total == len(await games.list_moves(viewer, game)) + 1
    assert game in await exported(store, clock, viewer)


async def finish(games: SolitaireService, caller: Caller, snap: GameSnapshot) -> GameSnapshot:
    done = await play_out(games, caller, snap)
    assert done.finished
    return done


async def test_the_daily_deal_is_shown_to_others_once_its_day_is_over_and_its_last_ranked_game_too(
    services: Services, store: FakeStore, clock: FakeClock, ann: Caller, bob: Caller
) -> None:
    games = services.games
    clock.now = clock.now.replace(hour=20)
    day = clock.now.date().isoformat()
    daily = await services.dealer.daily(day, "wrap", ann.player_id)
    anns = await games.create_game(ann, daily.id)
    bobs = await finish(games, bob, await games.create_game(bob, daily.id))
    assert not anns.game.practice and not bobs.game.practice
    assert (await games.get_game(bob, bobs.game.id)).finished  # its player sees it at once
    assert bobs.game.id in await exported(store, clock, bob)
    for viewer in (ann, CAT):  # ann is playing the same stock; cat may still be dealt it today
        await refused_everywhere(services, store, clock, viewer, bobs.game.id)
    clock.now = clock.now.replace(hour=0) + timedelta(days=1) + CLOSE_GRACE  # the day is over, a grace ago
    await refused_everywhere(services, store, clock, CAT, bobs.game.id)  # ann's ranked game is still in progress
    late = await games.create_game(CAT, daily.id)
    assert late.game.practice  # dealt after its day: its stock may be public soon, it counts for nothing
    await refused_everywhere(services, store, clock, CAT, bobs.game.id)
    await finish(games, ann, anns)
    await shown_everywhere(services, store, clock, CAT, bobs.game.id)  # cat's practice game does not hold it back
    await shown_everywhere(services, store, clock, ann, bobs.game.id)


async def test_a_pool_deal_is_shown_to_others_once_it_has_left_the_pool(
    services: Services, store: FakeStore, clock: FakeClock, ann: Caller, bob: Caller
) -> None:
    games = services.games
    [deal] = await store_deals(services, store, 1, pool=True)
    anns = await finish(games, ann, await games.create_game(ann, "", "wrap"))
    bobs = await games.create_game(bob, "", "wrap")  # the pool deals it again: ann's game must not show its stock
    assert anns.deal.id == bobs.deal.id == deal.id and not bobs.game.practice
    for viewer in (bob, CAT):
        await refused_everywhere(services, store, clock, viewer, anns.game.id)
    await FakeDeals(store.tables).pool_evict("wrap", "easy", clock.now)  # a full bucket drops it
    clock.advance(CLOSE_GRACE.total_seconds() - 1)
    await refused_everywhere(services, store, clock, CAT, anns.game.id)  # within the grace
    clock.advance(1)
    await refused_everywhere(services, store, clock, CAT, anns.game.id)  # bob is still playing it
    with pytest.raises(NotFound):
        await games.create_game(CAT, deal.id)  # nor can it be copied while bob's game holds it
    await finish(games, bob, bobs)
    await shown_everywhere(services, store, clock, CAT, anns.game.id)
    await shown_everywhere(services, store, clock, bob, anns.game.id)
    again = await games.create_game(CAT, deal.id)
    assert again.game.practice  # never dealt fresh again
    await shown_everywhere(services, store, clock, bob, anns.game.id)


async def test_a_deal_that_may_be_started_by_its_id_never_shows_another_players_game(
    services: Services, store: FakeStore, clock: FakeClock, ann: Caller, bob: Caller
) -> None:
    games = services.games
    for deal in (
        await games.create_deal(ann, "standard", pysol_number=7),
        await games.create_deal(ann, "wrap", seed="a client's seed"),
        await games.create_deal(ann, "wrap"),
    ):
        anns = await finish(games, ann, await games.create_game(ann, deal.id))
        clock.advance(86_400 * 365)
        await refused_everywhere(services, store, clock, bob, anns.game.id)
        bobs = await games.create_game(bob, deal.id)
        assert not bobs.game.practice  # still dealt fresh: bob's game counts, so ann's stays hers
        await refused_everywhere(services, store, clock, bob, anns.game.id)
