"""The solitaire use cases against in-memory storage: deals, games, moves, retries, versions, paging."""

from __future__ import annotations

import pytest

from golf.app.errors import IdempotencyKeyReused, InvalidArgument, MoveRefused, NotFound, StaleVersion
from golf.app.identity import Caller
from golf.app.solitaire import SolitaireService
from golf.bootstrap import Services
from golf.engine.solitaire.moves import Draw, PlayColumn, Refusal
from golf.engine.solitaire.state import Status
from tests.unit.app.fakes import FakeClock, FakeStore

ANN = Caller("player-ann")


@pytest.fixture
def service(services: Services) -> SolitaireService:
    return services.games


async def test_deal_from_preset_seed_and_overrides(service: SolitaireService) -> None:
    a = await service.create_deal(ANN, "wrap", {}, seed="s1")
    b = await service.create_deal(ANN, "wrap", {}, seed="s1")
    assert a.layout == b.layout and a.commitment == b.commitment and a.id != b.id
    assert a.preset == "wrap" and a.rules.wrap
    custom = await service.create_deal(ANN, "standard", {"columns": 6, "draw_only_when_stuck": True})
    assert custom.preset == "custom" and len(custom.layout.columns) == 6 and len(custom.seed) == 32
    same = await service.create_deal(ANN, "standard", {"wrap": False})
    assert same.preset == "standard"


async def test_pysol_deal(service: SolitaireService) -> None:
    deal = await service.create_deal(ANN, "", {}, pysol_number=1)
    assert deal.layout.start.code == "TH" and deal.algorithm == "pysolfc" and deal.seed == "pysol:1"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"preset": "nope"}, "preset"),
        ({"overrides": {"decks": 9}}, "rules.decks"),
        ({"overrides": {"colour": 1}}, "rules"),
        ({"seed": ""}, "seed"),
        ({"seed": "x" * 129}, "seed"),
        ({"seed": "x", "pysol_number": 3}, "seed"),
        ({"pysol_number": 0}, "pysolDealNumber"),
        ({"preset": "two-decks", "pysol_number": 3}, "pysolDealNumber"),
    ],
)
async def test_bad_deal_requests_name_the_field(service: SolitaireService, kwargs: dict, field: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(InvalidArgument) as err:
        await service.create_deal(ANN, **kwargs)
    assert err.value.field == field


async def test_unknown_ids(service: SolitaireService) -> None:
    with pytest.raises(NotFound):
        await service.get_deal("nope")
    with pytest.raises(NotFound):
        await service.get_game(ANN, "nope")
    with pytest.raises(NotFound):
        await service.create_game(ANN, "nope")
    with pytest.raises(NotFound):
        await service.play_move(ANN, "nope", Draw(), "k")


async def test_game_on_a_deal_and_moves(service: SolitaireService, store: FakeStore, clock: FakeClock) -> None:
    deal = await service.create_deal(ANN, "standard", {}, pysol_number=2)
    snap = await service.create_game(ANN, deal.id)
    assert snap.game.version == 0 and snap.state.status is Status.IN_PROGRESS
    clock.advance(5)
    after = await service.play_move(ANN, snap.game.id, Draw(), "k1", expected_version=0)
    assert after.game.version == 1 and after.state.stock_left == len(deal.layout.stock) - 1
    assert after.made == (Draw(deal.layout.stock[0]),)
    again = await service.get_game(ANN, snap.game.id)
    assert again.state == after.state and again.game.updated_at == clock.now
    assert len(store.tables.moves) == 1


async def test_retry_returns_the_stored_result_and_stores_once(service: SolitaireService, store: FakeStore) -> None:
    game = (await service.create_game(ANN, "", "wrap", winnable_only=False)).game
    first = await service.play_move(ANN, game.id, Draw(), "same")
    second = await service.play_move(ANN, game.id, Draw(), "same")
    assert second.replayed and not first.replayed
    assert second.state == first.state and second.game.version == first.game.version == 1
    assert len(store.tables.moves) == 1
    # The retry also wins over a version the first attempt made stale.
    third = await service.play_move(ANN, game.id, Draw(), "same", expected_version=0)
    assert third.replayed and third.game.version == 1


async def test_key_reused_for_another_move(service: SolitaireService) -> None:
    game = (await service.create_game(ANN, "", "wrap", winnable_only=False)).game
    await service.play_move(ANN, game.id, Draw(), "k")
    with pytest.raises(IdempotencyKeyReused):
        await service.play_move(ANN, game.id, PlayColumn(0), "k")


async def test_stale_version_is_refused_with_the_current_game(service: SolitaireService) -> None:
    game = (await service.create_game(ANN, "", "wrap", winnable_only=False)).game
    await service.play_move(ANN, game.id, Draw(), "a")
    with pytest.raises(StaleVersion) as err:
        await service.play_move(ANN, game.id, Draw(), "b", expected_version=0)
    assert err.value.current.game.version == 1


async def test_illegal_move_changes_nothing(service: SolitaireService, store: FakeStore) -> None:
    game = (await service.create_game(ANN, "", "standard", winnable_only=False)).game
    commits = store.commits
    with pytest.raises(MoveRefused) as err:
        await service.play_move(ANN, game.id, PlayColumn(42), "x")
    assert err.value.illegal.reason is Refusal.NO_SUCH_COLUMN
    assert err.value.current.game.version == 0
    assert store.commits == commits and store.tables.moves == []


async def test_missing_idempotency_key(service: SolitaireService) -> None:
    game = (await service.create_game(ANN, winnable_only=False)).game
    with pytest.raises(InvalidArgument) as err:
        await service.play_move(ANN, game.id, Draw(), "")
    assert err.value.field == "idempotencyKey"


async def test_whole_game_ends_and_is_replayable(service: SolitaireService, store: FakeStore) -> None:
    snap = await service.create_game(ANN, "", "wrap", winnable_only=False)
    n = 0
    while snap.state.status is Status.IN_PROGRESS:
        move = snap.state.legal_moves()[0]
        snap = await service.play_move(ANN, snap.game.id, move, f"m{n}", expected_version=snap.game.version)
        n += 1
    assert snap.game.finished_at is not None and snap.game.status == snap.state.status.value
    assert [m.seq for m in store.tables.moves] == list(range(1, n + 1))
    with pytest.raises(MoveRefused) as err:
        await service.play_move(ANN, snap.game.id, Draw(), "late")
    assert err.value.illegal.reason is Refusal.GAME_OVER
    assert (await service.get_game(ANN, snap.game.id)).state == snap.state


async def test_paging_newest_first(service: SolitaireService, clock: FakeClock) -> None:
    ids = []
    for _ in range(5):
        ids.append((await service.create_game(ANN, winnable_only=False)).game.id)
        clock.advance(1)
    page, token = await service.list_games(ANN, 2)
    seen = [s.game.id for s in page]
    while token:
        page, token = await service.list_games(ANN, 2, token)
        seen += [s.game.id for s in page]
    assert seen == ids[::-1]
    with pytest.raises(InvalidArgument) as err:
        await service.list_games(ANN, 2, "garbage!")
    assert err.value.field == "pageToken"
    with pytest.raises(InvalidArgument):
        await service.list_games(ANN, 1000)
