"""The strong bot's model of its opponents (``bots.opponents``): read from the seat's view alone, it tells a careful
player from a random one, and it is what the rollouts play."""

from __future__ import annotations

import random
import statistics

from golf.engine.cardgolf.bots import make_bot
from golf.engine.cardgolf.bots.opponents import erratic_shares
from golf.engine.cardgolf.bots.perception import perceive, policy_for
from golf.engine.cardgolf.bots.simulation import Sim
from golf.engine.cardgolf.match import deal_hole
from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.play import play_hole
from golf.engine.cardgolf.presets import PRESETS
from golf.engine.cardgolf.state import HoleState, Phase
from golf.engine.cardgolf.view import view


def _shares(opponent: str, preset: str, holes: int = 12) -> list[float]:
    """Seat 0's reading of seat 1 at each of its draws from the fourth turn on."""
    out: list[float] = []

    def read(state: HoleState, seat: int, _move: Move) -> None:
        if seat == 0 and state.phase is Phase.DRAW and state.turns >= 6:
            v = view(state, 0)
            shares = erratic_shares(v, perceive(v))
            assert shares[0] == 0.0 and 0.0 <= shares[1] <= 1.0
            out.append(shares[1])

    for hole in range(holes):
        play_hole(deal_hole(PRESETS[preset], 2, "model", hole), [make_bot("greedy", 1), make_bot(opponent, 2)], read)
    return out


def test_a_careful_opponent_reads_as_careful_and_a_random_one_as_random() -> None:
    for preset in ("six-card", "nine-card"):
        assert max(_shares("greedy", preset)) == 0.0
        assert statistics.fmean(_shares("beginner", preset)) < 0.2  # a hunch one decision in three
        assert statistics.fmean(_shares("random", preset)) > 0.5


def test_the_reading_needs_evidence_the_start_cards_are_none() -> None:
    state = deal_hole(PRESETS["six-card"], 2, "model", 0)
    while state.phase is Phase.SETUP:
        seat = next(s for s in range(2) if not state.ready[s])
        state = state.apply(seat, make_bot("random", seat).choose(view(state, seat)))
    v = view(state, state.turn)
    assert erratic_shares(v, perceive(v)) == [0.0, 0.0]


def _sim(erratic: list[float] | None, seed: int) -> Sim:
    rules = PRESETS["six-card"]
    policy = policy_for(rules)
    rng = random.Random(seed)
    deck = [(r, float(rules.values[r - 1])) for r in range(1, 14)] * 4
    rng.shuffle(deck)
    keys = [[deck.pop()[0] for _ in range(6)] for _ in range(2)]
    vals = [[float(rules.values[k - 1]) for k in row] for row in keys]
    up = [[True, True, False, False, False, False] for _ in range(2)]
    return Sim(policy, keys, vals, up, deck, [deck.pop()], 0, None, 0, 6.5, rng, erratic)


def test_an_erratic_opponent_in_the_rollouts_plays_worse_and_lasts_longer() -> None:
    careful = [_sim(None, seed) for seed in range(60)]
    erratic = [_sim([0.0, 1.0], seed) for seed in range(60)]
    careful_scores = [sim.rollout()[1] for sim in careful]
    erratic_scores = [sim.rollout()[1] for sim in erratic]
    assert statistics.fmean(erratic_scores) > statistics.fmean(careful_scores) + 5
    assert statistics.fmean(s.turns for s in erratic) > statistics.fmean(s.turns for s in careful)
