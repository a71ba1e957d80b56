"""Replays (``golf.app.replays`` through the ``GetReplay`` handler) on SQLite and PostgreSQL: a finished game stepped
through exactly as it was played (moves, undos and AutoPlay runs each a step), the stock order and the seed only in
the last step, paging, a round of nine holes, card Golf matches (bots only, a person with a turn clock watched live
by a spectator, a private table), every step but the last scanned for cards a spectator may not know, and the
refusals (unknown, unfinished, another kind, a private table's stranger). Another player replays a finished game only
once its deal is out of play (``golf.app.reveals``): a game on the daily deal of two days ago; a round's holes, on deals
that never close, are their player's alone (``DealInPlay`` to others)."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf import json_format

from golf.adapters.db.repository import Database
from golf.api.convert import game_to_proto, timestamp
from golf.api.replay_handlers import ReplayHandlers
from golf.api.rpc import CallContext
from golf.api.table_convert import table_to_proto
from golf.app.dealing import DealSettings
from golf.app.errors import DealInPlay, InvalidArgument, NotFinished, NotFound
from golf.app.history import RecordKind
from golf.app.identity import Caller
from golf.app.records import GameSnapshot
from golf.app.replays import ReplayService
from golf.app.solving import InlineSolver
from golf.app.tables import TableStatus, view_for
from golf.app.tables import replay as replay_table
from golf.app.tables.read_model import TableSnapshot
from golf.app.tables.service import TableService
from golf.app.tables.writer import replay_log
from golf.bootstrap import Services, build_services
from golf.engine.solitaire.moves import Draw
from golf.engine.solitaire.state import Status
from golf.v1 import card_golf_pb2 as cg
from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2
from tests.e2e.hidden_information import Seen, check_payload
from tests.e2e.support import Reply
from tests.e2e.tables import Knowledge, check_hidden
from tests.finished import NoLimits, Tokens
from tests.integration.table_play import choose
from tests.unit.app.table_checks import scan

ANN = Caller(str(uuid.UUID(int=1)))
BOB = Caller(str(uuid.UUID(int=2)))
CAT = Caller(str(uuid.UUID(int=3)))
QUICK = {"columns": 20, "column_height": 2}
"""40 cards in the columns, a stock of 11: a game ends after a few dozen moves."""
GAME, ROUND, MATCH = rpb.RECORD_KIND_SOLITAIRE_GAME, rpb.RECORD_KIND_SOLITAIRE_ROUND, rpb.RECORD_KIND_CARD_GOLF_MATCH


def now() -> datetime:
    return datetime.now(UTC)


@dataclass
class World:
    services: Services
    tables: TableService
    replays: ReplayService
    handlers: ReplayHandlers

    async def replay(
        self, caller: Caller, kind: int, record_id: str, first: int = 0, most: int = 0
    ) -> rpb.GetReplayResponse:
        req = rpb.GetReplayRequest(record_id=record_id, kind=kind, first_step=first, max_steps=most)  # type: ignore[arg-type]
        return await self.handlers.get_replay(req, CallContext(caller, "test"))

    async def whole(self, caller: Caller, kind: int, record_id: str) -> list[rpb.ReplayStep]:
        """Every step, in pages of the largest size."""
        steps: list[rpb.ReplayStep] = []
        while True:
            page = await self.replay(caller, kind, record_id, len(steps), 500)
            steps += page.steps
            if len(steps) >= page.total_steps:
                assert len(steps) == page.total_steps and [s.index for s in steps] == list(range(len(steps)))
                return steps


@pytest.fixture
async def world(migrated_url: str) -> AsyncIterator[World]:
    db = Database(migrated_url, pool_size=4)
    services = build_services(db, now, InlineSolver(), DealSettings(solver_budget=300_000), Tokens(), NoLimits())
    replays = ReplayService(db, services.games)
    yield World(services, services.tables, replays, ReplayHandlers(replays))
    await db.dispose()


def comparable(game: solitaire_pb2.Game) -> solitaire_pb2.Game:
    """A game without what the log does not say step by step (hints, assisted AutoPlay runs: each step carries the
    final counts) and without the post-mortem (a move's reply does not wait for the solver's verdict)."""
    out = solitaire_pb2.Game()
    out.CopyFrom(game)
    for name in ("hints_used", "autoplay_assists", "post_mortem"):
        out.ClearField(name)
    return out


async def play_game(
    world: World, caller: Caller, undo_every: int = 5, autoplay_every: int = 7, deal_id: str = ""
) -> list[GameSnapshot]:
    """A quick game (or one on ``deal_id``) played to its end with undos and AutoPlay runs mixed in: the snapshot the
    player was given at the start and after each change."""
    games = world.services.games
    if deal_id:
        snap = await games.create_game(caller, deal_id=deal_id)
    else:
        snap = await games.create_game(caller, preset="standard", overrides=QUICK, winnable_only=False)
    seen = [snap]
    n = 0
    while snap.state.status is Status.IN_PROGRESS:
        n += 1
        key = f"k{n}"
        if n % undo_every == 0 and snap.game.line:
            snap = await games.undo(caller, snap.game.id, key)
        elif n % autoplay_every == 0 and snap.state.column_plays():
            snap = await games.autoplay(caller, snap.game.id, key)
        else:
            plays = snap.state.column_plays()
            snap = await games.play_move(caller, snap.game.id, plays[0] if plays else Draw(), key)
        seen.append(snap)
    return seen


def scan_game_steps(
    steps: list[rpb.ReplayStep], columns: list[list[str]], start: str, stock: list[str], seed: str
) -> None:
    """Every step but the last shows only the deal's columns and start card and the stock cards turned by then (the
    e2e tier's scanner), never the seed or a reveal; the last step reveals the seed and the whole stock."""
    for step in steps[:-1]:
        game = step.game
        assert not game.HasField("reveal") and game.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS
        raw = json_format.MessageToJson(step)
        turned = len(stock) - game.stock_count
        check_payload(Seen(Reply("replay", message=game, raw=raw), turned, False), game.id, columns, start, stock, seed)
    last = steps[-1].game
    assert last.status != solitaire_pb2.GAME_STATUS_IN_PROGRESS
    assert last.reveal.seed == seed and [c.code for c in last.reveal.stock] == stock


async def deal_cards(world: World, deal_id: str) -> tuple[list[list[str]], str, list[str], str]:
    deal = await world.services.games.get_deal(deal_id)
    columns = [[c.code for c in col] for col in deal.layout.columns]
    return columns, deal.layout.start.code, [c.code for c in deal.layout.stock], deal.seed


# -- solitaire ---------------------------------------------------------------------------------------------------
async def test_a_game_is_replayed_step_by_step_as_it_was_played(world: World) -> None:
    seen = await play_game(world, ANN)
    game_id = seen[0].game.id
    async with world.replays.uow() as uow:
        log = await uow.games.get_moves(game_id)
    assert any(m.code == "U" for m in log) and any(m.code.startswith("A:") for m in log)
    # Its player replays it at once; anyone else is refused while its deal (made for it, never closed) is in play.
    with pytest.raises(DealInPlay):
        await world.replay(BOB, GAME, game_id)
    steps = await world.whole(ANN, GAME, game_id)
    assert len(steps) == len(log) + 1 == len(seen)
    for k, (step, shown) in enumerate(zip(steps, seen, strict=True)):
        assert step.index == k and step.hole == 0 and step.WhichOneof("state") == "game"
        assert comparable(step.game) == comparable(game_to_proto(shown)), f"step {k}"
        assert step.time == timestamp(shown.game.created_at if k == 0 else log[k - 1].created_at)
        assert step.game.version == k
    # An undo is a step back: the position before the entry it took back.
    for k, entry in enumerate(log, start=1):
        if entry.code == "U":
            assert step_position(steps[k]) != step_position(steps[k - 1])
    # The last step is the finished game as GetGame shows it: the post-mortem included.
    final = game_to_proto(await world.services.games.get_game(ANN, game_id))
    assert steps[-1].game == final and final.HasField("post_mortem")
    columns, start, stock, seed = await deal_cards(world, seen[0].deal.id)
    scan_game_steps(steps, columns, start, stock, seed)


async def test_a_game_on_a_closed_deal_is_replayed_to_anyone(world: World) -> None:
    # The daily deal of two days ago closed a day ago (past the grace): a game on it (practice) is anyone's to see
    # once finished.
    two_days_ago = (now().date() - timedelta(days=2)).isoformat()
    daily = await world.services.dealer.daily(two_days_ago, "wrap", ANN.player_id)
    seen = await play_game(world, ANN, autoplay_every=1_000, deal_id=daily.id)
    game_id = seen[0].game.id
    assert seen[0].game.practice and seen[-1].state.status is not Status.IN_PROGRESS
    steps = await world.whole(BOB, GAME, game_id)
    assert steps == await world.whole(ANN, GAME, game_id) and len(steps) == len(seen)
    assert steps[-1].game == game_to_proto(await world.services.games.get_game(BOB, game_id))
    columns, start, stock, seed = await deal_cards(world, daily.id)
    scan_game_steps(steps, columns, start, stock, seed)


def step_position(step: rpb.ReplayStep) -> tuple[object, ...]:
    game = step.game
    return tuple(len(c.cards) for c in game.columns), game.pile_count, game.stock_count


async def test_pages_of_a_long_game(world: World) -> None:
    games = world.services.games
    snap = await games.create_game(ANN, preset="standard", overrides=QUICK, winnable_only=False)
    game_id = snap.game.id
    # Sixty moves taken back make a log of more than a hundred entries.
    for n in range(60):
        move = (snap.state.column_plays() or [Draw()])[0]
        await games.play_move(ANN, game_id, move, f"m{n}")
        snap = await games.undo(ANN, game_id, f"u{n}")
    while snap.state.status is Status.IN_PROGRESS:
        move = (snap.state.column_plays() or [Draw()])[0]
        snap = await games.play_move(ANN, game_id, move, f"p{snap.game.version}")
    total = snap.game.version + 1
    first = await world.replay(ANN, GAME, game_id)
    assert first.total_steps == total and len(first.steps) == 100  # the default page
    steps = await world.whole(ANN, GAME, game_id)
    assert steps[:100] == list(first.steps)
    paged: list[rpb.ReplayStep] = []
    while len(paged) < total:
        paged += (await world.replay(ANN, GAME, game_id, len(paged), 37)).steps
    assert paged == steps
    tail = await world.replay(ANN, GAME, game_id, total - 1, 5)
    assert [s.index for s in tail.steps] == [total - 1] and tail.steps[0].game.HasField("reveal")
    beyond = await world.replay(ANN, GAME, game_id, total + 3)
    assert not beyond.steps and beyond.total_steps == total
    for first_step, most, field in ((-1, 0, "firstStep"), (0, 501, "maxSteps"), (0, -1, "maxSteps")):
        with pytest.raises(InvalidArgument) as err:
            await world.replays.get_replay(ANN, RecordKind.GAME, game_id, first_step, most)
        assert err.value.field == field


async def test_a_round_of_nine_holes(world: World) -> None:
    rounds, games = world.services.rounds, world.services.games
    made, snap = await rounds.create_round(ANN, "standard", QUICK, winnable_only=False)
    round_id = made.round.id
    for hole in range(1, 10):
        while snap.state.status is Status.IN_PROGRESS:
            move = (snap.state.column_plays() or [Draw()])[-1]
            snap = await games.play_move(ANN, snap.game.id, move, f"h{hole}-{snap.game.version}")
        if hole == 5:  # not finished yet: its owner is told so, anyone else does not see it
            with pytest.raises(NotFinished):
                await world.replay(ANN, ROUND, round_id)
            with pytest.raises(NotFound):
                await world.replay(BOB, ROUND, round_id)
        if hole < 9:
            _, snap = await rounds.start_next_hole(ANN, round_id)
    played = (await rounds.get_round(ANN, round_id)).holes
    # Its holes' deals (made for them) never close: anyone else is refused the round and each hole.
    with pytest.raises(DealInPlay):
        await world.replay(CAT, ROUND, round_id)
    for hole in played:
        with pytest.raises(DealInPlay):
            await world.replay(CAT, GAME, hole.game.id)
    steps = await world.whole(ANN, ROUND, round_id)
    # The round is its holes' games one after another, each from its start; each hole's steps are its game's replay.
    assert [s.hole for s in steps] == [h for h in range(1, 10) for _ in range(played[h - 1].game.version + 1)]
    for number, hole in enumerate(played, start=1):
        own = [s for s in steps if s.hole == number]
        alone = await world.whole(ANN, GAME, hole.game.id)
        assert [s.game for s in own] == [s.game for s in alone]
        assert own[0].game.version == 0 and own[0].game.moves_played == 0 and own[0].game.hole == number
        assert [s.time for s in own] == [s.time for s in alone]
        columns, start, stock, seed = await deal_cards(world, hole.deal.id)
        scan_game_steps(own, columns, start, stock, seed)
    paged: list[rpb.ReplayStep] = []
    while len(paged) < len(steps):
        page = await world.replay(ANN, ROUND, round_id, len(paged), 23)  # pages across the holes' bounds
        assert page.total_steps == len(steps)
        paged += page.steps
    assert paged == steps


async def test_refusals_of_solitaire_replays(world: World) -> None:
    games = world.services.games
    playing = await games.create_game(ANN, preset="standard", overrides=QUICK, winnable_only=False)
    game_id = playing.game.id
    with pytest.raises(NotFinished) as err:
        await world.replay(ANN, GAME, game_id)
    assert "still being played" in err.value.message
    with pytest.raises(NotFound):
        await world.replay(BOB, GAME, game_id)  # another's game in play does not exist for them
    done = (await play_game(world, ANN))[-1]
    with pytest.raises(DealInPlay):
        await world.replay(BOB, GAME, done.game.id)  # finished, on a deal made for it, which never closes
    for kind, record_id in ((GAME, str(uuid.uuid4())), (ROUND, done.game.id), (MATCH, done.game.id)):
        with pytest.raises(NotFound):
            await world.replay(ANN, kind, record_id)


# -- card Golf ---------------------------------------------------------------------------------------------------
async def bots_match(tables: TableService, private: bool = False) -> str:
    made = await tables.create_table(ANN, "six-card", seats=3, holes=2, take_seat=False, private=private)
    for n, level in enumerate(("greedy", "random", "greedy")):
        await tables.add_bot(ANN, made.table_id, level, f"bot-{n}")
    await tables.start(ANN, made.table_id, "go")
    while (await tables.get(ANN, made.table_id)).view.status is TableStatus.PLAYING:
        assert await tables.run_due(made.table_id)
    return made.table_id


def scan_table_steps(steps: list[rpb.ReplayStep], seed: str, join_code: str | None) -> None:
    """No card a spectator may not know in any step but the last (the e2e tier's scanner), nor the seed or the join
    code; the last step reveals no more than the finished match shows."""
    for step in steps[:-1]:
        raw = json_format.MessageToJson(step)
        assert seed not in raw and (join_code is None or join_code not in raw)
        check_hidden(Reply("replay", message=step.table, raw=raw), Knowledge(None))
        assert not step.table.legal_moves and not step.table.HasField("your_seat") and not step.table.join_code
    # The finished match reveals its seed (against the commitment every step showed), as GetTable shows it then.
    assert steps[-1].table.seed in ("", seed)


async def test_a_match_between_bots(world: World) -> None:
    tables = world.tables
    table_id = await bots_match(tables)
    async with world.replays.uow() as uow:
        loaded = await uow.tables.load_table(table_id)
        log = await uow.tables.get_entries(table_id)
    assert loaded is not None
    record, final = loaded[0], replay_log(*loaded)
    steps = await world.whole(CAT, MATCH, table_id)
    assert len(steps) == len(log) + 1 == final.version + 1
    for k, step in enumerate(steps):
        assert step.table.version == k and step.hole == 0
        assert step.time == timestamp(record.created_at if k == 0 else log[k - 1].created_at)
    assert steps[0].table.status == cg.TABLE_STATUS_SEATING and not steps[0].table.seats[0].bot
    # Each step is the spectator's view of the table rebuilt from the log up to it (sampled: a rebuild is a replay).
    for k in [*range(0, len(steps), 13), len(steps) - 1]:
        table = replay_table(record.options, record.seed, [e.entry for e in log[:k]])
        scan(table, None)
        spectator = TableSnapshot(table_id, record.owner_id, record.created_at, view_for(table, None), None)
        assert steps[k].table == table_to_proto(spectator), f"step {k}"
    # The last step is the finished match as a spectator's GetTable shows it, the last hole revealed.
    last = steps[-1].table
    assert last == table_to_proto(await tables.get(CAT, table_id))
    assert last.status == cg.TABLE_STATUS_OVER and last.HasField("last_hole") and len(last.results) == 2
    scan_table_steps(steps, record.seed, None)


async def test_a_person_at_a_clocked_table_replays_as_a_spectator_watched_it(world: World) -> None:
    tables = world.tables
    made = await tables.create_table(ANN, "six-card", seats=3, holes=2, turn_seconds=60)
    await tables.add_bot(ANN, made.table_id, "greedy", "b1")
    await tables.add_bot(ANN, made.table_id, "random", "b2")
    snap = await tables.start(ANN, made.table_id, "go")
    watched = {snap.version: table_to_proto(await tables.get(CAT, made.table_id))}
    rng = random.Random(5)
    while snap.view.status is TableStatus.PLAYING:
        snap = await tables.act(ANN, made.table_id, choose(snap.view.legal_moves, rng), f"a{snap.version}")
        live = await tables.get(CAT, made.table_id)
        watched[live.version] = table_to_proto(live)
    steps = await world.whole(BOB, MATCH, made.table_id)
    assert len(steps) == snap.version + 1
    # What the spectator was shown live at each version is the step of that version, turn deadline and all.
    assert any(t.HasField("turn_deadline") for t in watched.values())
    for version, shown in watched.items():
        assert steps[version].table == shown, f"version {version}"
    async with world.replays.uow() as uow:
        record = await uow.tables.get_table(made.table_id)
    assert record is not None
    scan_table_steps(steps, record.seed, None)
    # The seated player replays it as a spectator too: no seat, no legal moves.
    mine = await world.whole(ANN, MATCH, made.table_id)
    assert mine == steps


async def test_a_private_table_is_replayed_by_its_players_only(world: World) -> None:
    tables = world.tables
    made = await tables.create_table(BOB, "six-card", seats=3, holes=1, private=True, take_seat=False)
    assert made.join_code is not None
    await tables.join(ANN, "join", made.table_id, join_code=made.join_code)
    await tables.add_bot(BOB, made.table_id, "greedy", "b1")
    await tables.add_bot(BOB, made.table_id, "random", "b2")
    snap = await tables.start(BOB, made.table_id, "go")
    with pytest.raises(NotFound):
        await world.replay(CAT, MATCH, made.table_id)  # in play or not, a stranger is told it does not exist
    with pytest.raises(NotFinished):
        await world.replay(ANN, MATCH, made.table_id)
    rng = random.Random(3)
    snap = await tables.get(ANN, made.table_id)  # the creator watches: the seated player plays
    while snap.view.status is TableStatus.PLAYING:
        snap = await tables.act(ANN, made.table_id, choose(snap.view.legal_moves, rng), f"a{snap.version}")
    with pytest.raises(NotFound):
        await world.replay(CAT, MATCH, made.table_id)  # a stranger: the table does not exist for them
    steps = await world.whole(ANN, MATCH, made.table_id)
    assert steps == await world.whole(BOB, MATCH, made.table_id)  # its creator, who watched it
    async with world.replays.uow() as uow:
        record = await uow.tables.get_table(made.table_id)
    assert record is not None
    scan_table_steps(steps, record.seed, made.join_code)
    # A listed table's match in play: anyone is told it is not over.
    listed = await tables.create_table(ANN, "six-card", seats=2, holes=1)
    await tables.add_bot(ANN, listed.table_id, "greedy", "b")
    await tables.start(ANN, listed.table_id, "go")
    with pytest.raises(NotFinished):
        await world.replay(CAT, MATCH, listed.table_id)
    for kind in (GAME, ROUND):
        with pytest.raises(NotFound):
            await world.replay(ANN, kind, made.table_id)
