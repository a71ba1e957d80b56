"""Games and matches played to their end through the use cases (any storage), for the tests of records and exports:
a solitaire game with an undo and an AutoPlay run in its log, a card Golf match of people and a bot."""

from __future__ import annotations

import random
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from golf.app.identity import AccessToken, Caller
from golf.app.records import GameSnapshot
from golf.app.tables import TableStatus
from golf.app.tables.read_model import TableSnapshot
from golf.bootstrap import Services
from golf.engine.cardgolf import Knock
from golf.engine.solitaire.moves import PlayColumn


class NoLimits:
    async def hit(self, limit: str, key: str) -> None:
        return None


class Tokens:
    def issue(self, player_id: str) -> AccessToken:
        return AccessToken(f"token-for-{player_id}", datetime.now(UTC) + timedelta(hours=1))


class Clock:
    """A clock the test moves (records are filtered by their finish time)."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 6, 1, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)  # every write a little later: the log's times increase
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


async def finish_game(services: Services, caller: Caller, seed: str, preset: str = "standard") -> GameSnapshot:
    """A game on the client-seeded deal ``seed``, played to its end: column plays first, else the draw; the third
    move taken back, and one AutoPlay run when one is on offer. The solver's verdict is awaited (it is written in
    the background)."""
    deal = await services.games.create_deal(caller, preset, {}, seed=seed)
    snap = await services.games.create_game(caller, deal.id, winnable_only=False)
    n, autoplayed = 0, False
    while not snap.finished:
        if n == 3:
            snap = await services.games.undo(caller, snap.game.id, f"{seed}-undo")
        if not autoplayed and n >= 5 and snap.state.column_plays():
            snap = await services.games.autoplay(caller, snap.game.id, f"{seed}-auto")
            autoplayed = True
            continue
        moves = snap.state.legal_moves()
        plays = [m for m in moves if isinstance(m, PlayColumn)]
        snap = await services.games.play_move(caller, snap.game.id, (plays or moves)[0], f"{seed}-{n}")
        n += 1
    return await services.games.get_game(caller, snap.game.id)


async def finish_match(
    services: Services,
    caller: Caller,
    others: tuple[Caller, ...] = (),
    holes: int = 1,
    private: bool = False,
    preset: str = "six-card",
    seed: int = 1,
    rules: Mapping[str, Any] | None = None,
) -> TableSnapshot:
    """A match of ``caller``, ``others`` and a greedy bot, ``holes`` holes of ``preset`` with ``rules`` changed,
    played with random legal moves of whichever person is awaited until it is over."""
    tables = services.tables
    seats = 2 + len(others)
    made = await tables.create_table(caller, preset, rules=rules, seats=seats, holes=holes, private=private)
    for n, other in enumerate(others):
        if private:
            await tables.join(other, f"join-{n}", join_code=made.join_code)
        else:
            await tables.join(other, f"join-{n}", table_id=made.table_id)
    await tables.add_bot(caller, made.table_id, "greedy", "bot")
    snap = await tables.start(caller, made.table_id, "go")
    people = {p.player_id: p for p in (caller, *others)}
    rng = random.Random(seed)
    n = 0
    while snap.view.status is TableStatus.PLAYING:
        seat = rng.choice(snap.view.awaiting)
        player_id = snap.view.seats[seat].player_id
        assert player_id is not None
        mine = await tables.get(people[player_id], made.table_id)
        legal = [m for m in mine.view.legal_moves if not isinstance(m, Knock)] or list(mine.view.legal_moves)
        snap = await tables.act(people[player_id], made.table_id, rng.choice(legal), f"act-{n}")
        n += 1
    return snap
