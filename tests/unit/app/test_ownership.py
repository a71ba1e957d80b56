"""Who may see and change games, rounds and deals; the pool, the daily deal, AutoPlay assistance and rate limits,
against in-memory storage."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from golf.app.dealing import DealSettings
from golf.app.errors import DealInPlay, MoveRefused, NotFound, PermissionDenied, RateLimited
from golf.app.identity import LEGACY_OWNER, Caller
from golf.app.page_tokens import encode_page_token
from golf.app.records import GameFilter, GameRecord, GameSnapshot, RoundFilter, RoundRecord
from golf.app.reveals import CLOSE_GRACE
from golf.app.rounds import RoundSnapshot
from golf.app.solving import InlineSolver
from golf.bootstrap import Services, build_services
from golf.engine.solitaire.autoplay import choose_run, runs
from golf.engine.solitaire.moves import Draw, PlayColumn, Refusal
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.state import Layout, State, Status
from tests.unit.app.fake_ports import FakeLimiter, FakeTokens
from tests.unit.app.fakes import FakeClock, FakeStore
from tests.unit.app.solitaire_helpers import play_out, store_deals

BUDGET = 500_000
CAROL = Caller("player-carol")
DAVE = Caller("player-dave")

TODAY = "2026-01-01"
"""The fake clock's day."""


@pytest.fixture
def deal_settings() -> DealSettings:
    return DealSettings(solver_budget=BUDGET, pool_size=1, pool_presets=("wrap",))


async def new_game(services: Services, caller: Caller, preset: str = "wrap") -> GameSnapshot:
    """A game on a new server-seeded deal (no solver)."""
    return await services.games.create_game(caller, "", preset, winnable_only=False)


def pooled_ids(store: FakeStore) -> list[str]:
    return [row.deal_id for row in store.tables.pool]


def games_of(store: FakeStore, caller: Caller) -> list[GameRecord]:
    return [g for g in store.tables.games.values() if g.owner_id == caller.player_id]


def replica(store: FakeStore, clock: FakeClock, settings: DealSettings, limiter: FakeLimiter) -> Services:
    """Another process over the same storage: nothing cached."""
    return build_services(store, clock, InlineSolver(), settings, FakeTokens(clock), limiter)


# -- games of another player -------------------------------------------------------------------------------------
async def test_another_players_game_in_progress_is_not_found(
    services: Services,
    store: FakeStore,
    clock: FakeClock,
    deal_settings: DealSettings,
    limiter: FakeLimiter,
    ann: Caller,
    bob: Caller,
) -> None:
    deal = await services.games.create_deal(ann, "standard", pysol_number=2)  # column plays at the start
    snap = await services.games.create_game(ann, deal.id)
    snap = await services.games.play_move(ann, snap.game.id, Draw(), "ann-1")
    game_id = snap.game.id
    moves = list(store.tables.moves)
    for games in (services.games, replica(store, clock, deal_settings, limiter).games):
        with pytest.raises(NotFound):
            await games.get_game(bob, game_id)
        with pytest.raises(NotFound):
            await games.list_moves(bob, game_id)
        with pytest.raises(NotFound):
            await games.play_move(bob, game_id, Draw(), "bob-move")
        with pytest.raises(NotFound):
            await games.play_move(bob, game_id, snap.state.legal_moves()[0], "bob-move-2")
        with pytest.raises(NotFound):
            await games.undo(bob, game_id, "bob-undo")
        with pytest.raises(NotFound):
            await games.hint(bob, game_id, "bob-hint")
        with pytest.raises(NotFound):
            await games.autoplay(bob, game_id, "bob-auto")
    assert store.tables.moves == moves and store.tables.hints == []
    assert store.tables.games[game_id].version == 1 and store.tables.games[game_id].hints_used == 0
    assert limiter.hits[("solver", bob.player_id)] == 0
    # The owner still plays it.
    assert (await services.games.get_game(ann, game_id)).game.version == 1
    assert (await services.games.undo(ann, game_id, "ann-undo")).game.version == 2


async def test_another_players_finished_game_is_readable_once_its_deal_is_out_of_play_but_never_playable(
    services: Services,
    store: FakeStore,
    clock: FakeClock,
    deal_settings: DealSettings,
    limiter: FakeLimiter,
    ann: Caller,
    bob: Caller,
) -> None:
    games = services.games
    snap = await play_out(games, ann, await new_game(services, ann))
    game_id = snap.game.id
    mine = await games.list_moves(ann, game_id)
    # Its deal may still be started by its id (by bob too): its cards are ann's alone.
    for service in (games, replica(store, clock, deal_settings, limiter).games):
        with pytest.raises(DealInPlay):
            await service.get_game(bob, game_id)
        with pytest.raises(DealInPlay):
            await service.list_moves(bob, game_id)
    store.tables.closed[snap.game.deal_id] = clock.now - CLOSE_GRACE  # as a daily deal's day ends
    for service in (games, replica(store, clock, deal_settings, limiter).games):
        seen = await service.get_game(bob, game_id)
        assert seen.game.id == game_id and seen.state == snap.state and seen.game.owner_id == ann.player_id
        assert await service.list_moves(bob, game_id) == mine
        with pytest.raises(PermissionDenied):
            await service.play_move(bob, game_id, Draw(), "bob-move")
        with pytest.raises(PermissionDenied):
            await service.undo(bob, game_id, "bob-undo")
        with pytest.raises(PermissionDenied):
            await service.hint(bob, game_id, "bob-hint")
        with pytest.raises(PermissionDenied):
            await service.autoplay(bob, game_id, "bob-auto")
        # Even with a key the owner used, bob gets no stored result.
        with pytest.raises(PermissionDenied):
            await service.play_move(bob, game_id, Draw(), "end-0")
    assert await games.list_moves(ann, game_id) == mine and store.tables.hints == []
    # The owner is refused by the rules, not by ownership.
    with pytest.raises(MoveRefused) as err:
        await games.undo(ann, game_id, "ann-undo")
    assert err.value.illegal.reason is Refusal.GAME_OVER


async def test_list_games_lists_only_the_callers_games_with_filters(
    services: Services, clock: FakeClock, ann: Caller, bob: Caller
) -> None:
    games = services.games
    t0 = clock.now
    first = await new_game(services, ann, "wrap")
    bobs = await new_game(services, bob, "wrap")
    clock.advance(10)
    second = await play_out(games, ann, await new_game(services, ann, "standard"))
    clock.advance(10)
    third = await new_game(services, ann, "wrap")

    async def ids(caller: Caller, where: GameFilter | None = None) -> list[str]:
        page, token = await games.list_games(caller, 0, "", where)
        assert token == ""
        return [s.game.id for s in page]

    a, b, c = first.game.id, second.game.id, third.game.id
    assert await ids(ann) == [c, b, a]
    assert await ids(bob) == [bobs.game.id]
    assert await ids(Caller("player-nobody")) == []
    assert await ids(ann, GameFilter(preset="wrap")) == [c, a]
    assert await ids(ann, GameFilter(preset="standard")) == [b]
    assert await ids(ann, GameFilter(preset="two-decks")) == []
    assert await ids(ann, GameFilter(status="in_progress")) == [c, a]
    assert await ids(ann, GameFilter(status=second.state.status.value)) == [b]
    assert await ids(bob, GameFilter(status=second.state.status.value)) == []
    after = t0 + timedelta(seconds=10)
    assert await ids(ann, GameFilter(created_after=after)) == [c, b]  # inclusive
    assert await ids(ann, GameFilter(created_before=after)) == [a]  # exclusive
    assert await ids(ann, GameFilter(created_after=after, created_before=after + timedelta(seconds=10))) == [b]
    assert await ids(ann, GameFilter(preset="wrap", status="in_progress", created_after=after)) == [c]
    # Paging through a filtered list.
    page, token = await games.list_games(ann, 1, "", GameFilter(preset="wrap"))
    assert [s.game.id for s in page] == [c] and token
    page, token = await games.list_games(ann, 1, token, GameFilter(preset="wrap"))
    assert [s.game.id for s in page] == [a] and token == ""
    page, token = await games.list_games(ann, 2)
    assert [s.game.id for s in page] == [c, b] and token
    page, token = await games.list_games(ann, 2, token)
    assert [s.game.id for s in page] == [a] and token == ""
    # A page token made from the owner's game shows another player nothing of the owner's.
    token = encode_page_token(third.game.created_at + timedelta(days=1), c)
    page, _ = await games.list_games(bob, 2, token)
    assert [s.game.id for s in page] == [bobs.game.id]


# -- rounds of another player ------------------------------------------------------------------------------------
async def play_round(services: Services, caller: Caller, snap: RoundSnapshot, game: GameSnapshot) -> RoundSnapshot:
    """Play every hole of a round to its end."""
    while True:
        await play_out(services.games, caller, game)
        if len(snap.holes) == snap.round.holes:
            break
        snap, game = await services.rounds.start_next_hole(caller, snap.round.id)
    snap = await services.rounds.get_round(caller, snap.round.id)
    assert snap.finished
    return snap


async def test_rounds_of_another_player(services: Services, clock: FakeClock, ann: Caller, bob: Caller) -> None:
    rounds = services.rounds
    done, game = await rounds.create_round(ann, "wrap", winnable_only=False)
    done = await play_round(services, ann, done, game)
    clock.advance(5)
    playing, game = await rounds.create_round(ann, "wrap", winnable_only=False)
    clock.advance(5)
    bobs, _ = await rounds.create_round(bob, "wrap", winnable_only=False)

    # In progress: not found for another player, even between holes.
    for hole_over in (False, True):
        if hole_over:
            await play_out(services.games, ann, game)
        with pytest.raises(NotFound):
            await rounds.get_round(bob, playing.round.id)
        with pytest.raises(NotFound):
            await rounds.start_next_hole(bob, playing.round.id)
    assert len((await rounds.get_round(ann, playing.round.id)).holes) == 1

    # Finished: readable, but only its owner may act on it.
    seen = await rounds.get_round(bob, done.round.id)
    assert seen.finished and [h.game.id for h in seen.holes] == [h.game.id for h in done.holes]
    with pytest.raises(PermissionDenied):
        await rounds.start_next_hole(bob, done.round.id)

    async def ids(caller: Caller, where: RoundFilter | None = None) -> list[str]:
        page, token = await rounds.list_rounds(caller, 0, "", where)
        assert token == ""
        return [r.round.id for r in page]

    assert await ids(ann) == [playing.round.id, done.round.id]
    assert await ids(bob) == [bobs.round.id]
    assert await ids(ann, RoundFilter(finished=True)) == [done.round.id]
    assert await ids(ann, RoundFilter(finished=False)) == [playing.round.id]
    assert await ids(bob, RoundFilter(finished=True)) == []
    assert await ids(ann, RoundFilter(created_before=playing.round.created_at)) == [done.round.id]
    page, token = await rounds.list_rounds(ann, 1)
    assert [r.round.id for r in page] == [playing.round.id] and token
    page, token = await rounds.list_rounds(ann, 1, token)
    assert [r.round.id for r in page] == [done.round.id] and token == ""
    assert page[0].finished and len(page[0].holes) == 9
    # The owner's next hole of the round in progress.
    _, next_game = await rounds.start_next_hole(ann, playing.round.id)
    assert next_game.game.hole == 2 and next_game.game.owner_id == ann.player_id


# -- legacy rows -------------------------------------------------------------------------------------------------
async def test_legacy_games_and_rounds_are_readable_by_anyone_and_changed_by_nobody(
    services: Services, store: FakeStore, clock: FakeClock, ann: Caller, bob: Caller
) -> None:
    (deal, round_deal) = await store_deals(services, store, 2, pool=False)
    rules = PRESETS["wrap"]
    game = GameRecord("legacy-game", deal.id, 0, "in_progress", 0, [], clock.now, clock.now)
    game.owner_id = LEGACY_OWNER
    game.score = State.initial(deal.rules, deal.layout).score
    round_ = RoundRecord("legacy-round", "wrap", rules, 9, 45, False, None, clock.now, owner_id=LEGACY_OWNER)
    hole = GameRecord("legacy-hole", round_deal.id, 0, "in_progress", 0, [], clock.now, clock.now)
    hole.round_id, hole.hole, hole.owner_id = round_.id, 1, LEGACY_OWNER
    store.tables.games[game.id] = game
    store.tables.games[hole.id] = hole
    store.tables.rounds[round_.id] = round_

    games, rounds = services.games, services.rounds
    for caller in (ann, bob):
        snap = await games.get_game(caller, "legacy-game")
        assert snap.state == State.initial(deal.rules, deal.layout) and snap.game.owner_id == LEGACY_OWNER
        assert await games.list_moves(caller, "legacy-game") == []
        seen = await rounds.get_round(caller, "legacy-round")
        assert [h.game.id for h in seen.holes] == ["legacy-hole"]
        with pytest.raises(PermissionDenied):
            await games.play_move(caller, "legacy-game", Draw(), "k")
        with pytest.raises(PermissionDenied):
            await games.undo(caller, "legacy-game", "k")
        with pytest.raises(PermissionDenied):
            await games.hint(caller, "legacy-game", "k")
        with pytest.raises(PermissionDenied):
            await games.autoplay(caller, "legacy-game", "k")
        with pytest.raises(PermissionDenied):
            await games.play_move(caller, "legacy-hole", Draw(), "k")
        with pytest.raises(PermissionDenied):
            await rounds.start_next_hole(caller, "legacy-round")
        # Nor does a legacy game turn up in anyone's list.
        assert (await games.list_games(caller))[0] == []
        assert (await rounds.list_rounds(caller))[0] == []
    assert store.tables.moves == [] and store.tables.hints == []
    assert store.tables.games["legacy-game"].version == 0


# -- deal privacy ------------------------------------------------------------------------------------------------
async def test_a_server_seeded_deal_is_held_by_its_game(services: Services, ann: Caller, bob: Caller) -> None:
    games = services.games
    first = await new_game(services, ann)
    deal_id = first.deal.id
    assert first.deal.seed_source == "server" and first.game.holds_deal and not first.game.practice
    for caller in (bob, ann):
        with pytest.raises(NotFound):
            await games.create_game(caller, deal_id)
    await play_out(games, ann, first)
    # Once the game is over, anyone may play the deal; it is held again while they do.
    bobs = await games.create_game(bob, deal_id)
    assert bobs.deal.id == deal_id and not bobs.game.practice and bobs.game.holds_deal
    with pytest.raises(NotFound):
        await games.create_game(ann, deal_id)
    await play_out(games, bob, bobs)
    again = await games.create_game(ann, deal_id)
    assert again.deal.id == deal_id and again.game.practice and again.game.holds_deal


@pytest.mark.parametrize("kind", ["seed", "pysol"])
async def test_client_seeded_and_pysol_deals_are_played_by_many_at_once(
    services: Services, ann: Caller, bob: Caller, kind: str
) -> None:
    games = services.games
    if kind == "seed":
        deal = await games.create_deal(ann, "wrap", seed="everyone")
        assert deal.seed_source == "client"
    else:
        deal = await games.create_deal(ann, "standard", pysol_number=5)
        assert deal.seed_source == "pysol"
    a = await games.create_game(ann, deal.id)
    b = await games.create_game(bob, deal.id)
    c = await games.create_game(CAROL, deal.id)
    a2 = await games.create_game(ann, deal.id)
    snaps = (a, b, c, a2)
    assert all(s.deal.id == deal.id and s.state.status is Status.IN_PROGRESS for s in snaps)
    assert not any(s.game.holds_deal for s in snaps)
    assert [s.game.practice for s in snaps] == [False, False, False, True]
    # Each plays their own copy.
    moved = await games.play_move(bob, b.game.id, Draw(), "bob")
    assert moved.game.version == 1 and (await games.get_game(ann, a.game.id)).game.version == 0


async def test_a_server_seeded_deal_without_a_game_may_be_started_by_anyone(
    services: Services, ann: Caller, bob: Caller
) -> None:
    games = services.games
    deal = await games.create_deal(ann, "wrap")
    assert deal.seed_source == "server"
    bobs = await games.create_game(bob, deal.id)
    assert bobs.deal.id == deal.id and bobs.game.holds_deal and not bobs.game.practice
    for caller in (ann, bob, CAROL):
        with pytest.raises(NotFound):
            await games.create_game(caller, deal.id)


# -- the daily deal ----------------------------------------------------------------------------------------------
async def test_the_daily_deal(
    services: Services, store: FakeStore, limiter: FakeLimiter, ann: Caller, bob: Caller
) -> None:
    games = services.games
    first, second = await store_deals(services, store, 2, pool=True)
    daily = await services.dealer.daily(TODAY, "wrap", ann.player_id)
    assert daily.id == first.id
    assert pooled_ids(store) == [second.id]  # out of the pool for good
    assert (await services.dealer.daily(TODAY, "wrap", bob.player_id)).id == daily.id
    assert pooled_ids(store) == [second.id]
    assert limiter.count("solver") == 0

    # Played by everyone at once, held by nobody; a player's second game on it is practice.
    a = await games.create_game(ann, daily.id)
    b = await games.create_game(bob, daily.id)
    a2 = await games.create_game(ann, daily.id)
    assert [s.game.holds_deal for s in (a, b, a2)] == [False, False, False]
    assert [s.game.practice for s in (a, b, a2)] == [False, False, True]
    await play_out(games, ann, a)
    b2 = await games.create_game(bob, daily.id)
    assert b2.game.practice and not b2.game.holds_deal

    # Ordinary games never get it: the pool deals the other one, then searches.
    carols = await games.create_game(CAROL, "", "wrap")
    assert carols.deal.id == second.id
    daves = await games.create_game(DAVE, "", "wrap")
    assert daves.deal.id not in (daily.id, second.id)
    assert daves.deal.verdict is not None and daves.deal.verdict.winnable
    assert limiter.hits[("solver", DAVE.player_id)] == 1
    await play_out(games, CAROL, carols)
    await play_out(games, DAVE, daves)
    for caller in (Caller("player-erin"), Caller("player-frank")):
        assert (await games.create_game(caller, "", "wrap")).deal.id != daily.id
    assert daily.id not in pooled_ids(store)


# -- the pool ----------------------------------------------------------------------------------------------------
async def test_the_pool_never_deals_a_player_a_deal_they_played(
    services: Services, store: FakeStore, limiter: FakeLimiter, ann: Caller, bob: Caller
) -> None:
    games = services.games
    a_deal, b_deal = await store_deals(services, store, 2, pool=True)
    anns = await games.create_game(ann, "", "wrap")
    assert anns.deal.id == a_deal.id and anns.game.holds_deal and not anns.game.practice
    await play_out(games, ann, anns)
    bobs = await games.create_game(bob, "", "wrap")
    assert bobs.deal.id == b_deal.id  # the least dealt
    await play_out(games, bob, bobs)
    assert [row.uses for row in store.tables.pool] == [1, 1]
    # Both were dealt once and neither is held: the pool would deal the older, but ann has played it.
    again = await games.create_game(ann, "", "wrap")
    assert again.deal.id == b_deal.id and not again.game.practice
    await play_out(games, ann, again)
    assert limiter.count("solver") == 0
    # Ann has played every pooled deal: the pool gives her none and a new deal is searched.
    searched = await games.create_game(ann, "", "wrap")
    assert searched.deal.id not in (a_deal.id, b_deal.id)
    assert searched.deal.verdict is not None and searched.deal.verdict.winnable
    assert not searched.game.practice
    assert limiter.hits[("solver", ann.player_id)] == 1
    assert sorted(pooled_ids(store)) == sorted([a_deal.id, b_deal.id])
    # Bob still gets the one he has not played.
    assert (await games.create_game(bob, "", "wrap")).deal.id == a_deal.id


# -- AutoPlay assistance -----------------------------------------------------------------------------------------
def pysol_deal_where(wanted: Callable[[State], bool]) -> int:
    """The first PySolFC deal number whose start under the standard rules is ``wanted``."""
    for number in range(1, 500):
        if wanted(State.initial(PRESETS["standard"], Layout.from_pysol(number))):
            return number
    raise AssertionError("no such deal")


def solver_chooses(state: State) -> bool:
    return len(runs(state)) > 1 and choose_run(state, BUDGET).solver_chose


def one_run(state: State) -> bool:
    return len(runs(state)) == 1 and not choose_run(state, BUDGET).solver_chose


def several_runs_no_win(state: State) -> bool:
    return len(runs(state)) > 1 and not choose_run(state, BUDGET).solver_chose


@pytest.mark.parametrize(
    ("wanted", "assists"),
    [(solver_chooses, 1), (one_run, 0), (several_runs_no_win, 0)],
    ids=["solver-chose", "one-run", "several-runs-on-a-lost-deal"],
)
async def test_autoplay_assistance_is_counted_when_the_solver_chose(
    services: Services, store: FakeStore, ann: Caller, wanted: Callable[[State], bool], assists: int
) -> None:
    games = services.games
    number = pysol_deal_where(wanted)
    deal = await games.create_deal(ann, "standard", pysol_number=number)
    snap = await games.create_game(ann, deal.id)
    expected = choose_run(snap.state, BUDGET)
    after = await games.autoplay(ann, snap.game.id, "auto")
    assert after.made == expected.moves and all(isinstance(m, PlayColumn) for m in after.made)
    assert after.game.autoplay_assists == assists
    assert store.tables.games[snap.game.id].autoplay_assists == assists
    assert (await games.get_game(ann, snap.game.id)).game.autoplay_assists == assists
    # A retry is the same run, not another assist.
    retry = await games.autoplay(ann, snap.game.id, "auto")
    assert retry.replayed and retry.made == after.made
    assert store.tables.games[snap.game.id].autoplay_assists == assists


# -- rate limits -------------------------------------------------------------------------------------------------
async def test_creating_counts_create_hits_for_the_player(
    services: Services, limiter: FakeLimiter, ann: Caller, bob: Caller
) -> None:
    games, rounds = services.games, services.rounds

    def creates() -> int:
        return limiter.hits[("create", ann.player_id)]

    deal = await games.create_deal(ann, "wrap", seed="s")
    assert creates() == 1
    await games.create_game(ann, deal.id)
    assert creates() == 2
    await new_game(services, ann)
    assert creates() == 3
    snap, game = await rounds.create_round(ann, "wrap", winnable_only=False)
    assert creates() == 4  # the first hole is part of the round
    _, same = await rounds.start_next_hole(ann, snap.round.id)
    assert same.game.id == game.game.id and creates() == 4  # the hole in progress: nothing started
    await play_out(games, ann, game)
    _, second = await rounds.start_next_hole(ann, snap.round.id)
    assert second.game.hole == 2 and creates() == 5
    assert limiter.hits[("create", bob.player_id)] == 0
    assert limiter.count("create") == 5 and limiter.count("solver") == 0


async def test_hint_and_autoplay_count_solver_hits_only_when_they_search(
    services: Services, limiter: FakeLimiter, ann: Caller
) -> None:
    games = services.games

    def searches() -> int:
        return limiter.hits[("solver", ann.player_id)]

    deal = await games.create_deal(ann, "standard", pysol_number=pysol_deal_where(solver_chooses))
    snap = await games.create_game(ann, deal.id)
    game_id = snap.game.id
    await games.hint(ann, game_id, "h1")
    assert searches() == 1
    _, _, replayed = await games.hint(ann, game_id, "h1")
    assert replayed and searches() == 1
    await games.hint(ann, game_id, "h2")
    assert searches() == 2
    await games.autoplay(ann, game_id, "a1")
    assert searches() == 3
    assert (await games.autoplay(ann, game_id, "a1")).replayed and searches() == 3
    # Nothing to play from the columns: AutoPlay is refused without a search.
    snap = await games.get_game(ann, game_id)
    while snap.state.column_plays():
        snap = await games.play_move(ann, game_id, snap.state.column_plays()[0], f"p{snap.game.version}")
    assert snap.state.status is Status.IN_PROGRESS
    with pytest.raises(MoveRefused) as err:
        await games.autoplay(ann, game_id, "a2")
    assert err.value.illegal.reason is Refusal.NOTHING_TO_PLAY and searches() == 3
    # A hint once the game is over is refused without a search.
    await play_out(games, ann, snap)
    with pytest.raises(MoveRefused):
        await games.hint(ann, game_id, "h3")
    assert searches() == 3
    # A stored hint is still given when the limit is reached.
    limiter.caps["solver"] = 3
    _, _, replayed = await games.hint(ann, game_id, "h2")
    assert replayed


async def test_refused_creates_change_nothing(
    services: Services, store: FakeStore, limiter: FakeLimiter, ann: Caller, bob: Caller
) -> None:
    games, rounds = services.games, services.rounds
    deal = await games.create_deal(bob, "wrap", seed="shared")
    limiter.caps["create"] = 0
    commits = store.commits
    with pytest.raises(RateLimited):
        await games.create_game(ann, "", "wrap", winnable_only=False)
    with pytest.raises(RateLimited):
        await games.create_game(ann, deal.id)
    with pytest.raises(RateLimited):
        await games.create_deal(ann, "wrap", seed="mine")
    with pytest.raises(RateLimited):
        await rounds.create_round(ann, "wrap", winnable_only=False)
    assert store.commits == commits
    assert list(store.tables.deals) == [deal.id]
    assert store.tables.games == {} and store.tables.rounds == {}


async def test_a_refused_next_hole_starts_nothing(
    services: Services, store: FakeStore, limiter: FakeLimiter, ann: Caller
) -> None:
    snap, game = await services.rounds.create_round(ann, "wrap", winnable_only=False)
    await play_out(services.games, ann, game)
    limiter.caps["create"] = limiter.hits[("create", ann.player_id)]
    with pytest.raises(RateLimited):
        await services.rounds.start_next_hole(ann, snap.round.id)
    assert [g.hole for g in store.tables.games.values()] == [1]
    assert len((await services.rounds.get_round(ann, snap.round.id)).holes) == 1


async def test_refused_searches_change_nothing(
    services: Services, store: FakeStore, limiter: FakeLimiter, ann: Caller
) -> None:
    games = services.games
    deal = await games.create_deal(ann, "standard", pysol_number=pysol_deal_where(solver_chooses))
    snap = await games.create_game(ann, deal.id)
    limiter.caps["solver"] = 0
    commits = store.commits
    with pytest.raises(RateLimited):
        await games.hint(ann, snap.game.id, "h")
    with pytest.raises(RateLimited):
        await games.autoplay(ann, snap.game.id, "a")
    assert store.commits == commits
    # A winnable deal searched for (the pool is empty) is a search too.
    with pytest.raises(RateLimited):
        await games.create_game(ann, "", "wrap")
    assert store.tables.hints == [] and store.tables.moves == []
    stored = store.tables.games[snap.game.id]
    assert (stored.version, stored.hints_used, stored.autoplay_assists) == (0, 0, 0)
    assert list(store.tables.games) == [snap.game.id] and list(store.tables.deals) == [deal.id]


async def test_a_game_finished_on_another_replica_is_permission_denied_everywhere(
    services: Services,
    store: FakeStore,
    clock: FakeClock,
    deal_settings: DealSettings,
    limiter: FakeLimiter,
    ann: Caller,
    bob: Caller,
) -> None:
    # This process caches ann's game while it is in progress; she finishes it through another process.
    here = services.games
    snap = await new_game(services, ann)
    snap = await here.play_move(ann, snap.game.id, Draw(), "here")
    assert (await here.get_game(ann, snap.game.id)).state.status is Status.IN_PROGRESS
    await play_out(replica(store, clock, deal_settings, limiter).games, ann, snap)
    # The finished game is another player's: changing it is denied, as on any other process (this one's
    # cached row still says "in progress", so it must not decide this refusal).
    with pytest.raises(PermissionDenied):
        await here.play_move(bob, snap.game.id, Draw(), "bob-move")
    with pytest.raises(PermissionDenied):
        await here.undo(bob, snap.game.id, "bob-undo")
    with pytest.raises(PermissionDenied):
        await here.hint(bob, snap.game.id, "bob-hint")
    with pytest.raises(PermissionDenied):
        await here.autoplay(bob, snap.game.id, "bob-auto")
    with pytest.raises(DealInPlay):  # finished, but its deal may still be dealt to bob
        await here.get_game(bob, snap.game.id)
    store.tables.closed[snap.game.deal_id] = clock.now - CLOSE_GRACE
    seen = await here.get_game(bob, snap.game.id)
    assert seen.finished and await here.list_moves(bob, snap.game.id) != []
