"""Issue 25: AutoPlay never throws away a win, replayed on the client-seeded deal where it used to."""

from __future__ import annotations

import pytest

from golf.app.errors import MoveRefused
from golf.app.identity import Caller
from golf.bootstrap import Services
from golf.engine.solitaire.moves import Draw, PlayColumn, Refusal
from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.solver import solve
from golf.engine.solitaire.state import Layout, State, Status

SEED = "c69f564514838d7218c5046d8f152af0"
"""A client seed whose standard deal is winnable; AutoPlay, draw, AutoPlay, AutoPlay used to lose it."""

ANN = Caller("player-ann")


async def test_autoplay_draw_autoplay_autoplay_keeps_the_seeded_deal_winnable(services: Services) -> None:
    games = services.games
    deal = await games.create_deal(ANN, "standard", seed=SEED)
    snap = await games.create_game(ANN, deal.id)
    assert snap.state == State.initial(PRESETS["standard"], Layout.from_seed(PRESETS["standard"], SEED))
    assert solve(snap.state, fewest_cards=False).winnable
    snap = await games.autoplay(ANN, snap.game.id, "a1")
    assert snap.made and solve(snap.state, fewest_cards=False).winnable
    snap = await games.play_move(ANN, snap.game.id, Draw(), "d1")
    snap = await games.autoplay(ANN, snap.game.id, "a2")
    assert snap.made and solve(snap.state, fewest_cards=False).winnable
    # Only one card fits now (2H), and playing it loses the game: AutoPlay stops before it, and says why.
    [only] = snap.state.column_plays()
    assert isinstance(only, PlayColumn) and solve(snap.state.apply(only), fewest_cards=False).winnable is False
    with pytest.raises(MoveRefused) as err:
        await games.autoplay(ANN, snap.game.id, "a3")
    assert err.value.illegal.reason is Refusal.NOTHING_TO_PLAY
    assert "would lose" in str(err.value.illegal)
    now = await games.get_game(ANN, snap.game.id)
    assert now.game.version == snap.game.version and now.state == snap.state
    assert now.game.autoplay_assists == 2  # both runs were picked among several; the refusal stores nothing
    # Still winnable: following hints from here wins.
    n = 0
    while now.state.status is Status.IN_PROGRESS:
        move, now, _ = await games.hint(ANN, now.game.id, f"h{n}")
        now = await games.play_move(ANN, now.game.id, move, f"m{n}")
        n += 1
    assert now.state.status is Status.WON
