"""Random playouts for every preset and grid with random and greedy players: every card is accounted for, every
hole ends, scores equal an independent recount, and no view holds a card its seat may not know."""

from __future__ import annotations

import argparse
import io
from collections import Counter
from contextlib import redirect_stdout
from dataclasses import replace

import pytest

from golf.commands import simulate
from golf.engine.cardgolf import PRESETS, GolfRules, HoleState, Move, hole_result, view
from golf.engine.cardgolf.bots import make_bot
from golf.engine.cardgolf.match import deal_hole
from golf.engine.cardgolf.options import FlipRule, KnockerPenalty
from golf.engine.cardgolf.play import play_hole, play_match
from golf.engine.cardgolf.rules import GRIDS
from tests.unit.cardgolf.recount import recount_hole

VARIANTS: dict[str, GolfRules] = dict(PRESETS)
for rows, cols in GRIDS:
    VARIANTS[f"grid-{rows}x{cols}"] = replace(PRESETS["six-card"], rows=rows, cols=cols, start_cards=2)
VARIANTS["nine-everything"] = replace(
    PRESETS["nine-card"],
    match_rows=True,
    match_diagonals=True,
    match_adjacent_pairs=True,
    block_of_four_value=-25,
    jokers=4,
    joker_pair_value=-4,
    four_alike_opponents=10,
    wild_one_eyed_jacks=True,
)
VARIANTS["six-turn-house-rules"] = replace(
    PRESETS["six-card"],
    flip_as_turn=True,
    early_out=True,
    flip_after_discard=FlipRule.ENDGAME,
    first_out_bonus=-5,
    underdog_bonus=-3,
    tied_penalty=5,
    blackjack=True,
)
VARIANTS["powers-with-every-option"] = replace(
    PRESETS["powers"], flip_after_discard=FlipRule.OPTIONAL, jack_discard_skips_next=True, peeks_stay_visible=False
)
VARIANTS["six-flip-compulsory-knock"] = replace(
    PRESETS["six-card"],
    flip_after_discard=FlipRule.COMPULSORY,
    knocking=True,
    knocker_penalty=KnockerPenalty.PLUS_10,
    jack_discard_skips_next=True,
    peek_stroke=1,
)


def check_views(state: HoleState, seat: int, move: Move) -> None:
    assert move in state.legal_moves(seat)
    for viewer in [None, *range(state.players)]:
        v = view(state, viewer)
        for owner, grid in enumerate(v.grids):
            for p, card in enumerate(grid):
                shows = state.knows(viewer, owner, p)  # all it may know, and nothing more
                if shows and not state.face_up[owner][p] and not state.rules.peeks_stay_visible:
                    shows = viewer is not None and (owner, p) in state.glimpsed[viewer]  # strict: just seen only
                assert card == (state.grids[owner][p] if shows else None)  # ``None`` too for an empty place
        if v.held is not None:
            assert viewer == state.turn or (v.held_from is not None and v.held_from.value == "discard")
        # The stock's order never appears: a view holds at most the cards it shows.
        assert len(v.visible_cards()) <= len(state.all_cards()) - len(state.stock)


def play_and_check(rules: GolfRules, players: int, bots: list[str], hole: int) -> None:
    state = deal_hole(rules, players, f"playout-{hole}", hole)
    deck = Counter(state.all_cards())
    seen_moves = 0

    def observer(s: HoleState, seat: int, move: Move) -> None:
        nonlocal seen_moves
        seen_moves += 1
        assert Counter(s.all_cards()) == deck
        if seen_moves % 3 == 0:
            check_views(s, seat, move)

    final = play_hole(state, [make_bot(b, hole * 10 + i) for i, b in enumerate(bots)], observer)
    assert final.over
    assert Counter(final.all_cards()) == deck
    result = hole_result(final)
    scores, wins = recount_hole([list(g) for g in final.grids], rules, final.strokes, final.ender, final.went_out)
    assert list(result.scores) == scores and list(result.wins_match) == wins
    for seat in range(players):
        assert sum(line.points for line in result.seats[seat].lines) == result.scores[seat]
    end_view = view(final, None)
    assert end_view.result == result and all(c is not None for g in end_view.grids for c in g)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_playouts(name: str) -> None:
    rules = VARIANTS[name]
    for hole in range(4):
        players = max(2 + hole % 3, rules.min_players)
        bots = ["random" if (hole + i) % 2 else "greedy" for i in range(players)]
        play_and_check(rules, players, bots, hole)
    play_and_check(rules, 8 if rules.cards_per_grid * 8 + 2 <= rules.deck_size(8) else 5, ["random"] * 8, 9)


@pytest.mark.parametrize("name", ["six-card", "six-card-jokers", "nine-card"])
def test_strong_plays_legal_moves(name: str) -> None:
    rules = PRESETS[name]
    seats = max(2, rules.min_players)  # six-card with jokers seats four or more
    play_and_check(rules, seats, ["strong"] + ["greedy"] * (seats - 1), 1)


def test_greedy_beats_random() -> None:
    bots = [make_bot("greedy", 1), make_bot("random", 2)]
    sheet, results = play_match(PRESETS["six-card"], bots, "gr", holes=9)
    assert len(results) == 9 and sheet.totals[0] < sheet.totals[1]
    assert "total" in sheet.render()


def test_simulate_command() -> None:
    parser = argparse.ArgumentParser()
    simulate.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(
        [
            "simulate",
            "--preset",
            "four-card",
            "--bots",
            "greedy,random,greedy",
            "--holes",
            "2",
            "--seed",
            "s",
            "--set",
            "knocker_penalty=plus_10",
            "--matches",
            "2",
        ]
    )
    out = io.StringIO()
    with redirect_stdout(out):
        assert args.func(args) == 0
    text = out.getvalue()
    assert "match 2" in text and "points/hole" in text
    bad = parser.parse_args(["simulate", "--preset", "nope"])
    with redirect_stdout(io.StringIO()):
        assert bad.func(bad) == 2
