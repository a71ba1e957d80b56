"""Players and ownership in the SQL adapter, on SQLite and PostgreSQL: migration 0004 on existing rows, the
partial unique indexes of games, the owner's listings and filters, the pool's exclusions, players and tokens.

The repository tests run on the unit tests' in-memory fake too, so the fake keeps the adapter's rules."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa
from alembic import command

from golf.adapters.db.migrate import alembic_config, upgrade
from golf.adapters.db.repository import Database
from golf.adapters.db.urls import sync_url
from golf.app.identity import LEGACY_OWNER, PlayerRecord, RefreshTokenRecord
from golf.app.ports import AlreadyStored, UnitOfWorkFactory
from golf.app.records import (
    DealRecord,
    DealUse,
    GameFilter,
    GameRecord,
    MoveRecord,
    RoundFilter,
    RoundRecord,
    layout_to_text,
)
from golf.engine.shuffle import ALGORITHM
from golf.engine.solitaire.rules import PRESET_VERSION, PRESETS
from golf.engine.solitaire.state import Layout
from tests.unit.app.fakes import FakeStore

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
DAY_END = datetime(2026, 3, 2, tzinfo=UTC)
P1, P2, P3 = (str(uuid.UUID(int=n)) for n in (1, 2, 3))


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def new_id() -> str:
    return str(uuid.uuid4())


def deal_record(preset: str = "wrap", seed: str | None = None, seed_source: str = "server") -> DealRecord:
    seed = seed or new_id()
    rules = PRESETS[preset]
    return DealRecord(
        id=new_id(),
        preset=preset,
        preset_version=PRESET_VERSION,
        rules=rules,
        seed=seed,
        algorithm=ALGORITHM,
        commitment="c" * 64,
        layout=Layout.from_seed(rules, seed),
        created_at=T0,
        seed_source=seed_source,
    )


def game_record(deal_id: str, owner_id: str, when: datetime = T0, **fields: object) -> GameRecord:
    game = GameRecord(
        id=new_id(),
        deal_id=deal_id,
        version=0,
        status="in_progress",
        score=0,
        line=[],
        created_at=when,
        updated_at=when,
        owner_id=owner_id,
    )
    return replace(game, **fields)  # type: ignore[arg-type]


def round_record(owner_id: str, when: datetime, holes: int = 2, preset: str = "wrap") -> RoundRecord:
    return RoundRecord(new_id(), preset, PRESETS[preset], holes, 0, False, None, when, owner_id)


@pytest.fixture(params=["sqlite", "postgres", "fake"])
async def database(request: pytest.FixtureRequest) -> AsyncIterator[UnitOfWorkFactory]:
    """A migrated database of either kind, or the in-memory fake of the unit tests."""
    if request.param == "fake":
        yield FakeStore()
        return
    url: str = request.getfixturevalue(f"{request.param}_url")
    upgrade(url)
    db = Database(url, pool_size=4)
    yield db
    await db.dispose()


async def store(database: UnitOfWorkFactory, *records: object) -> None:
    """Store deals, rounds and games in one transaction."""
    async with database() as uow:
        for r in records:
            if isinstance(r, DealRecord):
                await uow.deals.add_deal(r)
            elif isinstance(r, RoundRecord):
                await uow.rounds.add_round(r)
            elif isinstance(r, GameRecord):
                await uow.games.add_game(r)
            else:
                raise TypeError(r)
        await uow.commit()


async def refused(database: UnitOfWorkFactory, game: GameRecord) -> str:
    """The constraint that refused ``game`` (it fails the test if the game is stored)."""
    async with database() as uow:
        with pytest.raises(AlreadyStored) as err:
            await uow.games.add_game(game)
    return err.value.constraint


async def finish(database: UnitOfWorkFactory, game: GameRecord, status: str = "won") -> GameRecord:
    done = replace(game, version=game.version + 1, status=status, line=["T"], finished_at=at(999))
    async with database() as uow:
        assert await uow.games.record_change(MoveRecord(game.id, done.version, "T", new_id(), at(999)), done,
                                            game.version, None) is not None  # fmt: skip
        await uow.commit()
    return done


# -- migration 0004 on a database with rows -------------------------------------------------------------------
@pytest.fixture
def engine(database_url: str) -> Iterator[sa.Engine]:
    eng = sa.create_engine(sync_url(database_url))
    yield eng
    eng.dispose()


def _insert(conn: sa.Connection, table: str, **values: object) -> None:
    names = ", ".join(values)
    marks = ", ".join(f":{k}" for k in values)
    stmt = sa.text(f"INSERT INTO {table} ({names}) VALUES ({marks})")
    # Typed datetimes, so SQLite gets the text form SQLAlchemy (and our driver) use.
    stmt = stmt.bindparams(
        *(sa.bindparam(k, type_=sa.DateTime(timezone=True)) for k, v in values.items() if isinstance(v, datetime))
    )
    conn.execute(stmt, values)


def _deal_row(deal: DealRecord, algorithm: str) -> dict[str, object]:
    return {
        "id": deal.id, "preset": deal.preset, "preset_version": deal.preset_version, "rules": deal.rules.canonical(),
        "seed": deal.seed, "algorithm": algorithm, "commitment": deal.commitment,
        "layout": layout_to_text(deal.layout), "created_at": deal.created_at,
    }  # fmt: skip


async def test_migration_0004_gives_existing_rows_owners_and_seed_sources(database_url: str, engine: sa.Engine) -> None:
    upgrade(database_url, "0003")
    pysol, served, daily, pooled = (deal_record() for _ in range(4))
    round_id, game_id = new_id(), new_id()
    with engine.begin() as conn:
        _insert(conn, "deals", **_deal_row(pysol, "pysolfc"))
        for deal in (served, daily, pooled):
            _insert(conn, "deals", **_deal_row(deal, ALGORITHM))
        _insert(conn, "rounds", id=round_id, preset="wrap", rules=PRESETS["wrap"].canonical(), holes=1, par=0,
                winnable_only=False, created_at=T0)  # fmt: skip
        _insert(conn, "games", id=game_id, deal_id=pysol.id, version=0, status="in_progress", score=0, line="",
                created_at=T0, updated_at=T0, round_id=round_id, hole=1)  # fmt: skip
        _insert(conn, "daily_deals", day="2026-03-01", preset="wrap", deal_id=daily.id)
        _insert(conn, "deal_pool", preset="wrap", difficulty="easy", deal_id=daily.id)
        _insert(conn, "deal_pool", preset="wrap", difficulty="easy", deal_id=pooled.id)

    upgrade(database_url)

    with engine.connect() as conn:
        sources = {str(r[0]): str(r[1]) for r in conn.execute(sa.text("SELECT id, seed_source FROM deals"))}
        pool = conn.execute(sa.text("SELECT deal_id FROM deal_pool")).scalars().all()
        round_owner = conn.execute(sa.text("SELECT owner_id FROM rounds")).scalar_one()
    assert sources == {pysol.id: "pysol", served.id: "server", daily.id: "server", pooled.id: "server"}
    assert pool == [pooled.id]  # the daily deal left the pool
    assert round_owner == LEGACY_OWNER

    db = Database(database_url)
    try:
        async with db() as uow:
            game = await uow.games.get_game(game_id)
            round_ = await uow.rounds.get_round(round_id)
            assert (await uow.deals.get_deal(pysol.id)) == replace(pysol, algorithm="pysolfc", seed_source="pysol")
        assert game is not None and round_ is not None
        assert (game.owner_id, game.practice, game.holds_deal, game.autoplay_assists) == (LEGACY_OWNER, False, False, 0)
        assert round_.owner_id == LEGACY_OWNER
        # Legacy games are outside the scored index: another legacy game on the same deal is let in.
        await store(db, game_record(pysol.id, LEGACY_OWNER))
    finally:
        await db.dispose()

    # No server default is left behind: a new row must say who owns it and where its seed came from.
    for table, values in (
        ("games", {"id": new_id(), "deal_id": pysol.id, "version": 0, "status": "won", "score": 0, "line": "",
                   "created_at": T0, "updated_at": T0}),
        ("rounds", {"id": new_id(), "preset": "wrap", "rules": "x", "holes": 1, "par": 0, "winnable_only": False,
                    "created_at": T0}),
        ("deals", _deal_row(deal_record(), ALGORITHM)),
    ):  # fmt: skip
        with pytest.raises(sa.exc.IntegrityError), engine.begin() as conn:
            _insert(conn, table, **values)

    command.downgrade(alembic_config(database_url), "0003")
    with engine.connect() as conn:
        columns = {c["name"] for c in sa.inspect(conn).get_columns("games")}
        tables = set(sa.inspect(conn).get_table_names())
        kept = conn.execute(sa.text("SELECT COUNT(*) FROM games WHERE id = :g"), {"g": game_id}).scalar_one()
    assert "owner_id" not in columns and "holds_deal" not in columns
    assert "players" not in tables and "refresh_tokens" not in tables
    assert kept == 1


# -- the partial unique indexes of games ---------------------------------------------------------------------
async def test_a_held_deal_has_one_game_in_progress(database: UnitOfWorkFactory) -> None:
    deal = deal_record()
    first = game_record(deal.id, P1, holds_deal=True)
    await store(database, deal, first)
    async with database() as uow:
        assert await uow.deals.deal_use(deal.id, P2) == DealUse(held=True, owner_games=0, daily=False)

    assert "uq_games_deal_in_play" in await refused(database, game_record(deal.id, P2, holds_deal=True))
    # A game that does not hold the deal may be played beside it.
    await store(database, game_record(deal.id, P3))

    await finish(database, first)
    async with database() as uow:
        assert await uow.deals.deal_use(deal.id, P1) == DealUse(held=False, owner_games=1, daily=False)
    second = game_record(deal.id, P2, holds_deal=True)
    await store(database, second)
    async with database() as uow:
        assert (await uow.games.get_game(second.id)) == second


async def test_a_player_has_one_scored_game_per_deal(database: UnitOfWorkFactory) -> None:
    deal = deal_record()
    scored = game_record(deal.id, P1)
    await store(database, deal, scored)
    assert "uq_games_scored" in await refused(database, game_record(deal.id, P1))
    await finish(database, scored, "lost")
    assert "uq_games_scored" in await refused(database, game_record(deal.id, P1))  # finished or not

    practice = game_record(deal.id, P1, practice=True)
    await store(database, practice, game_record(deal.id, P1, practice=True), game_record(deal.id, P2))
    await store(database, game_record(deal.id, LEGACY_OWNER), game_record(deal.id, LEGACY_OWNER))
    async with database() as uow:
        assert (await uow.deals.deal_use(deal.id, P1)).owner_games == 3
        stored = await uow.games.get_game(practice.id)
    assert stored is not None and stored.practice is True


async def test_every_constraint_of_games_is_named_alike_on_both_databases(database: UnitOfWorkFactory) -> None:
    deal = deal_record()
    round_ = round_record(P1, T0)
    hole = game_record(deal.id, P1, round_id=round_.id, hole=1, holds_deal=True)
    await store(database, deal, round_, hole)
    assert await refused(database, game_record(deal.id, P1, practice=True, round_id=round_.id, hole=1)) == (
        "uq_games_round_hole"
    )
    assert await refused(database, game_record(deal.id, P2, holds_deal=True)) == "uq_games_deal_in_play"
    assert await refused(database, game_record(deal.id, P1)) == "uq_games_scored"
    assert await refused(database, replace(hole, hole=2, holds_deal=False, practice=True)) == "games_pkey"


async def test_record_change_writes_autoplay_assists_and_keeps_the_owner(database: UnitOfWorkFactory) -> None:
    deal = deal_record()
    game = game_record(deal.id, P1, holds_deal=True, practice=True, hints_used=2)
    await store(database, deal, game)
    moved = replace(game, version=1, line=["A:T"], autoplay_assists=1, undos_used=1, updated_at=at(5))
    async with database() as uow:
        hints = await uow.games.record_change(MoveRecord(game.id, 1, "A:T", "k", at(5)), moved, 0, None)
        await uow.commit()
    assert hints == 2
    async with database() as uow:
        assert await uow.games.get_game(game.id) == moved


# -- listings ------------------------------------------------------------------------------------------------
async def test_list_games_filters_and_pages_per_owner(database: UnitOfWorkFactory) -> None:
    wrap, standard = deal_record("wrap"), deal_record("standard")
    games = [
        game_record(wrap.id, P1, at(0), practice=True),
        game_record(standard.id, P1, at(10), status="won", practice=True),
        game_record(wrap.id, P1, at(10), practice=True),  # same time: the id breaks the tie
        game_record(standard.id, P1, at(20), status="lost", practice=True),
        game_record(wrap.id, P1, at(30), practice=True),
        game_record(wrap.id, P2, at(15)),
    ]
    await store(database, wrap, standard, *games)
    mine = sorted(games[:5], key=lambda g: (g.created_at, g.id), reverse=True)

    async def ids(where: GameFilter, owner: str = P1, limit: int = 10) -> list[str]:
        async with database() as uow:
            return [g.id for g in await uow.games.list_games(owner, limit, None, where)]

    assert await ids(GameFilter()) == [g.id for g in mine]
    assert await ids(GameFilter(), P2) == [games[5].id]
    assert await ids(GameFilter(), P3) == []
    assert await ids(GameFilter(preset="standard")) == [games[3].id, games[1].id]
    assert await ids(GameFilter(status="in_progress")) == [g.id for g in mine if g.status == "in_progress"]
    assert await ids(GameFilter(preset="wrap", status="won")) == []
    # created_after is inclusive, created_before exclusive.
    assert await ids(GameFilter(created_after=at(10), created_before=at(30))) == [
        g.id for g in mine if at(10) <= g.created_at < at(30)
    ]
    assert len(await ids(GameFilter(created_after=at(10), created_before=at(30)))) == 3

    seen: list[GameRecord] = []
    after = None
    while True:
        async with database() as uow:
            page = await uow.games.list_games(P1, 2, after, GameFilter())
        if not page:
            break
        seen += page
        after = (page[-1].created_at, page[-1].id)
    assert seen == mine  # every field read back, in order, each once


async def test_list_rounds_filters_on_finished(database: UnitOfWorkFactory) -> None:
    deals = [deal_record() for _ in range(3)]
    done = round_record(P1, at(0), holes=2)
    playing = round_record(P1, at(10), holes=2)
    fresh = round_record(P1, at(20), holes=1, preset="standard")
    other = round_record(P2, at(5), holes=1)
    await store(database, *deals, done, playing, fresh, other)
    await store(
        database,
        game_record(deals[0].id, P1, round_id=done.id, hole=1, status="won"),
        game_record(deals[1].id, P1, round_id=done.id, hole=2, status="lost"),
        game_record(deals[0].id, P1, round_id=playing.id, hole=1, status="won", practice=True),
        game_record(deals[2].id, P1, round_id=playing.id, hole=2),
        game_record(deals[2].id, P2, round_id=other.id, hole=1, status="won"),
    )

    async def ids(where: RoundFilter, owner: str = P1, after: tuple[datetime, str] | None = None) -> list[str]:
        async with database() as uow:
            return [r.id for r in await uow.rounds.list_rounds(owner, 10, after, where)]

    assert await ids(RoundFilter()) == [fresh.id, playing.id, done.id]
    assert await ids(RoundFilter(finished=True)) == [done.id]
    assert await ids(RoundFilter(finished=False)) == [fresh.id, playing.id]
    assert await ids(RoundFilter(finished=True), P2) == [other.id]
    assert await ids(RoundFilter(preset="standard")) == [fresh.id]
    assert await ids(RoundFilter(created_after=at(10))) == [fresh.id, playing.id]
    assert await ids(RoundFilter(created_before=at(10))) == [done.id]
    assert await ids(RoundFilter(), after=(playing.created_at, playing.id)) == [done.id]
    async with database() as uow:
        assert await uow.rounds.list_rounds(P1, 1, None, RoundFilter()) == [fresh]


# -- the pool ------------------------------------------------------------------------------------------------
async def test_pool_take_skips_the_players_deals_and_held_ones(database: UnitOfWorkFactory) -> None:
    deals = [deal_record() for _ in range(3)]
    mine = game_record(deals[0].id, P1, status="won")
    held = game_record(deals[1].id, P2, holds_deal=True)
    await store(database, *deals, mine, held)
    async with database() as uow:
        for deal in deals:
            await uow.deals.pool_add("wrap", "easy", deal.id)
        await uow.commit()

    async def take(player: str, difficulty: str | None = None) -> str | None:
        async with database() as uow:
            deal_id = await uow.deals.pool_take("wrap", difficulty, player)
            await uow.commit()
        return deal_id

    assert await take(P1) == deals[2].id  # not the one P1 played, nor the held one
    assert await take(P3, "easy") == deals[0].id  # P3 played none: the least dealt, oldest first
    assert await take(P1) == deals[2].id  # dealt again: nothing else is left for P1
    assert await take(P2) == deals[0].id  # P2's own game holds deals[1]
    assert await take(P3, "hard") is None

    await finish(database, held)
    assert await take(P3) == deals[1].id  # no longer held, and never dealt from the pool
    # deals[1] is the least dealt (once), but P2 has a game on it: the oldest of the twice dealt instead.
    assert await take(P2) == deals[0].id
    async with database() as uow:
        assert await uow.deals.pool_counts("wrap", "easy") == (0, 3)


async def test_pool_claim_fresh_takes_a_never_dealt_deal_out_for_good(database: UnitOfWorkFactory) -> None:
    dealt, fresh_hard, fresh_easy, other = (deal_record() for _ in range(4))
    await store(database, dealt, fresh_hard, fresh_easy, other)
    async with database() as uow:
        await uow.deals.pool_add("wrap", "easy", dealt.id)
        await uow.deals.pool_add("wrap", "hard", fresh_hard.id)
        await uow.deals.pool_add("wrap", "easy", fresh_easy.id)
        await uow.deals.pool_add("standard", "easy", other.id)
        assert await uow.deals.pool_take("wrap", "easy", P1) == dealt.id
        await uow.commit()

    async with database() as uow:  # rolled back: the pool keeps it
        assert await uow.deals.pool_claim_fresh("wrap") == fresh_hard.id
    async with database() as uow:
        assert await uow.deals.pool_claim_fresh("wrap") == fresh_hard.id  # any difficulty, oldest first
        await uow.commit()
    async with database() as uow:
        assert await uow.deals.pool_counts("wrap", "hard") == (0, 0)
        assert await uow.deals.pool_claim_fresh("wrap") == fresh_easy.id
        assert await uow.deals.pool_claim_fresh("wrap") is None  # the dealt one is never claimed
        await uow.commit()
    async with database() as uow:
        assert await uow.deals.pool_counts("wrap", "easy") == (0, 1)
        assert await uow.deals.pool_counts("standard", "easy") == (1, 1)


async def test_concurrent_claims_get_different_deals_on_postgres(postgres_url: str) -> None:
    """Only PostgreSQL runs transactions side by side (SQLite has one writer), so this runs there alone."""
    upgrade(postgres_url)
    database = Database(postgres_url, pool_size=4)
    try:
        await _concurrent_claims(database)
    finally:
        await database.dispose()


async def _concurrent_claims(database: Database) -> None:
    deals = [deal_record() for _ in range(2)]
    await store(database, *deals)
    async with database() as uow:
        for deal in deals:
            await uow.deals.pool_add("wrap", "easy", deal.id)
        await uow.commit()
    async with database() as first, database() as second:
        # The first claim's row is locked: the second skips it instead of waiting.
        a = await first.deals.pool_claim_fresh("wrap")
        b = await second.deals.pool_claim_fresh("wrap")
        assert {a, b} == {d.id for d in deals}
        await first.commit()
        await second.commit()
    async with database() as uow:
        assert await uow.deals.pool_counts("wrap", "easy") == (0, 0)


async def test_deal_use_knows_daily_deals(database: UnitOfWorkFactory) -> None:
    deal = deal_record(seed_source="client")
    await store(database, deal, game_record(deal.id, P1, practice=True, status="won"))
    async with database() as uow:
        await uow.deals.daily_add("2026-03-01", "wrap", deal.id, DAY_END)
        await uow.commit()
    async with database() as uow:
        assert await uow.deals.deal_use(deal.id, P1) == DealUse(
            held=False, owner_games=1, daily=True, closed_at=DAY_END
        )
        assert await uow.deals.get_deal(deal.id) == deal  # seed_source read back


# -- players and refresh tokens ------------------------------------------------------------------------------
async def test_players_are_unique_per_issuer_and_subject(database: UnitOfWorkFactory) -> None:
    guest1 = PlayerRecord(P1, "Guest 1", T0)
    guest2 = PlayerRecord(P2, "Guest 2", T0)  # no subject: guests never collide
    portal = PlayerRecord(P3, "Ada", T0, "https://portal.example", "sub-1")
    async with database() as uow:
        for player in (guest1, guest2, portal):
            await uow.players.add_player(player)
        await uow.commit()
    async with database() as uow:
        with pytest.raises(AlreadyStored) as err:
            await uow.players.add_player(PlayerRecord(new_id(), "Eve", T0, "https://portal.example", "sub-1"))
    assert err.value.constraint == "uq_players_issuer_subject"
    async with database() as uow:
        await uow.players.add_player(PlayerRecord(new_id(), "Bob", T0, "https://other.example", "sub-1"))
        assert await uow.players.get_player(P1) == guest1
        assert await uow.players.find_player("https://portal.example", "sub-1") == portal
        assert await uow.players.find_player("https://portal.example", "sub-2") is None
        assert await uow.players.get_player(new_id()) is None


async def test_refresh_tokens_are_found_by_hash_and_revoked_once(database: UnitOfWorkFactory) -> None:
    token = RefreshTokenRecord(new_id(), P1, "a" * 64, T0, at(3600))
    async with database() as uow:
        await uow.players.add_player(PlayerRecord(P1, "Guest", T0))
        await uow.refresh_tokens.add_refresh_token(token)
        await uow.commit()
    async with database() as uow:
        with pytest.raises(AlreadyStored) as err:
            await uow.refresh_tokens.add_refresh_token(replace(token, id=new_id()))
    assert err.value.constraint == "uq_refresh_tokens_hash"
    async with database() as uow:
        assert await uow.refresh_tokens.find_refresh_token("a" * 64) == token
        assert await uow.refresh_tokens.find_refresh_token("b" * 64) is None
        assert await uow.refresh_tokens.revoke_refresh_token("a" * 64, at(60)) is True
        assert (
            await uow.refresh_tokens.revoke_refresh_token("a" * 64, at(120)) is True
        )  # already revoked: kept as it was
        assert await uow.refresh_tokens.revoke_refresh_token("b" * 64, at(60)) is False
        await uow.commit()
    async with database() as uow:
        assert await uow.refresh_tokens.find_refresh_token("a" * 64) == replace(token, revoked_at=at(60))
