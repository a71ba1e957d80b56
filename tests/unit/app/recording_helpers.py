"""Records of finished solitaire games over the fake store, for the recording tests: players, games, finishing them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from golf.app.identity import PlayerRecord
from golf.app.recording import RecordKeeper
from golf.app.records import GameRecord
from tests.unit.app.fakes import FakeStore

MONDAY = datetime(2026, 11, 30, 12, tzinfo=UTC)
ANN, BOB = "ann", "bob"


def store_with_players() -> FakeStore:
    """A fake store holding Ann (of this service) and Bob (of a portal)."""
    store = FakeStore()
    for player, issuer in ((ANN, "golf"), (BOB, "https://portal.example")):
        store.tables.players[player] = PlayerRecord(player, player.title(), MONDAY, issuer)
    return store


def game(game_id: str, score: int, finished: datetime, **fields: object) -> GameRecord:
    """A finished game of Ann's scoring ``score`` at ``finished``; ``fields`` change any other column."""
    values: dict[str, object] = {
        "id": game_id,
        "deal_id": f"deal-{game_id}",
        "version": 3,
        "status": "won" if score <= 0 else "lost",
        "score": score,
        "line": ["3:AH", "U", "T:5C", "A:1:2H+2:3H"],
        "created_at": finished - timedelta(seconds=90),
        "updated_at": finished,
        "finished_at": finished,
        "owner_id": ANN,
        "hints_used": 1,
        "undos_used": 1,
        "autoplay_assists": 1,
    }
    values.update(fields)
    return GameRecord(**values)  # type: ignore[arg-type]


async def finish(store: FakeStore, played: GameRecord, preset: str = "standard") -> None:
    """Store ``played`` and record it as finished, as the service does when a game ends."""
    keeper = RecordKeeper()
    async with store() as uow:
        uow.games.t.games[played.id] = played
        issuer = await keeper.hold_player(uow, played.owner_id)
        await keeper.game_finished(uow, played, preset, issuer)
        await uow.commit()
