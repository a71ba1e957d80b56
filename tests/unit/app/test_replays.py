"""The steps of replays (``golf.app.replay_steps``) over the in-memory store: built one entry at a time, each is the
position the whole log up to it gives, and a window of steps is that slice of the whole."""

from __future__ import annotations

from golf.app.identity import Caller
from golf.app.records import effective, replay_line
from golf.app.replay_steps import game_steps, table_steps
from golf.app.tables import TableStatus
from golf.app.tables import replay as replay_table
from golf.bootstrap import Services
from golf.engine.solitaire.moves import Draw
from golf.engine.solitaire.state import Status
from tests.unit.app.fakes import FakeClock, FakeStore

QUICK = {"columns": 20, "column_height": 2}


async def test_game_steps_follow_moves_and_undos(
    services: Services, store: FakeStore, clock: FakeClock, ann: Caller
) -> None:
    games = services.games
    snap = await games.create_game(ann, preset="standard", overrides=QUICK, winnable_only=False)
    n = 0
    while snap.state.status is Status.IN_PROGRESS:
        n += 1
        clock.advance(1)
        if n % 4 == 0:
            snap = await games.undo(ann, snap.game.id, f"u{n}")
        else:
            snap = await games.play_move(ann, snap.game.id, (snap.state.column_plays() or [Draw()])[0], f"m{n}")
    game = snap.game
    deal = snap.deal
    log = [m for m in store.tables.moves if m.game_id == game.id]
    whole = list(game_steps(game, deal, log, 0, len(log) + 1))
    assert len(whole) == len(log) + 1
    for k, step in enumerate(whole):
        line = [code for _, code in effective([(m.seq, m.code) for m in log[:k]])]
        assert step.state == replay_line(deal, line) and step.game.line == line
        assert step.game.version == k and step.game.undos_used == sum(m.code == "U" for m in log[:k])
        assert step.as_of == (game.created_at if k == 0 else log[k - 1].created_at)
    assert whole[-1].game.status == game.status and whole[-1].game.finished_at == game.finished_at
    for start, stop in ((0, 1), (3, 9), (len(log), len(log) + 40), (len(log) + 1, len(log) + 5)):
        assert list(game_steps(game, deal, log, start, stop)) == whole[start:stop]


async def test_table_steps_are_the_log_replayed_to_each_entry(
    services: Services, store: FakeStore, ann: Caller
) -> None:
    tables = services.tables
    made = await tables.create_table(ann, "six-card", seats=2, holes=2, take_seat=False)
    await tables.add_bot(ann, made.table_id, "greedy", "b1")
    await tables.add_bot(ann, made.table_id, "random", "b2")
    await tables.start(ann, made.table_id, "go")
    while (await tables.get(ann, made.table_id)).view.status is TableStatus.PLAYING:
        assert await tables.run_due(made.table_id)
    record = store.tables.card_tables[made.table_id]
    log = store.tables.table_logs[made.table_id]
    final, whole = table_steps(record, log, 0, len(log) + 1)
    assert final == replay_table(record.options, record.seed, [e.entry for e in log])
    assert final.status is TableStatus.OVER and len(whole) == len(log) + 1
    for k, step in enumerate(whole):
        assert step.index == k and step.table == replay_table(record.options, record.seed, [e.entry for e in log[:k]])
        assert step.time == (record.created_at if k == 0 else log[k - 1].created_at)
        assert step.turn_deadline is None  # no turn clock at this table
    for start, stop in ((0, 1), (5, 17), (len(log), len(log) + 9)):
        assert table_steps(record, log, start, stop) == (final, whole[start:stop])
