"""A model of each opponent from what that seat has done, as its seat's view shows it.

The service makes a bot afresh for every move (a bot keeps no memory between moves, so any replica can play it), so
the model reads the record the view itself carries: the cards each opponent chose to leave face up. A player who
keeps low cards and pairs has a grid of low face-up cards; one who plays at random has face-up cards as bad as the
deck's average. The model is the share ``erratic`` of an opponent's decisions that look random (0: it plays like
the greedy policy, 1: like the random bot), used by the rollouts of ``strong``: an erratic opponent is not expected
to improve its grid or to go out soon, so there is no reason to rush out against it.

The estimate: every face-up card beyond the start cards was kept by the player's choice. Its "excess" is how much
it is worth above a card a careful player would keep (``KEEP``); a random keeper's cards exceed it by the deck's
average excess (``_random_excess``). The start cards (turned up at random) are discounted, and a prior of
``PRIOR_CARDS`` careful cards shrinks the estimate towards 0 while there is little to go on.
"""

from __future__ import annotations

import functools

from golf.engine.cardgolf.bots.perception import Perception
from golf.engine.cardgolf.cards import build_deck
from golf.engine.cardgolf.options import StartMode
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.scoring import UNKNOWN
from golf.engine.cardgolf.view import SeatView

KEEP = 5.0
"""Points above which a face-up card that pairs nothing looks like a poor keep."""
PRIOR_CARDS = 2.0
"""Careful cards assumed before any evidence (an unknown opponent is taken to play well)."""
DEAD_ZONE = 0.15
GAIN = 3.0
"""The raw share is mapped to ``(raw - DEAD_ZONE) * GAIN`` (clamped to 0..1). On two-player holes of six-card,
nine-card and six-card-jokers the raw share of a greedy opponent stays at 0, a strong one's is low in its first
turns only (it keeps a high card for a pair now and then) and a random one's is high (lucky low cards look
careful): the mapping reads greedy as careful, strong as careful but for its first turns, and random as mostly or
wholly random. A stronger reading of random play measured better against it than a cautious one (an oracle that
knew the random bot was random did better than greedy on the same deals). The measured shares and points are in
bench/README.md."""


@functools.lru_cache(maxsize=64)
def _random_excess(rules: GolfRules) -> float:
    """The mean excess over ``KEEP`` of a card dealt at random."""
    deck = build_deck(1, rules.jokers)
    return sum(max(0.0, rules.card_value(c) - KEEP) for c in deck) / len(deck)


def erratic_shares(view: SeatView, pc: Perception) -> list[float]:
    """Per seat, the estimated share of its decisions that look random (0 for the viewer itself)."""
    rules = view.rules
    per_card = _random_excess(rules)
    out: list[float] = []
    for s in range(view.players):
        if s == pc.seat or per_card <= 0:
            out.append(0.0)
            continue
        keys, vals, up = pc.keys[s], pc.vals[s], view.face_up[s]
        excess = 0.0
        count = 0
        for p, k in enumerate(keys):
            if p >= len(up) or not up[p] or k >= UNKNOWN:
                continue
            count += 1
            if any(keys[q] == k for q in _mates(rules, p) if q < len(keys)):
                continue  # a pair is a careful keep whatever its rank
            excess += max(0.0, vals[p] - KEEP)
        start = min(count, rules.start_cards if rules.start_mode is StartMode.TURN_UP else 0)
        kept = count - start
        # The start cards were turned up at random: their expected excess is no evidence.
        evidence = excess - start * per_card
        share = evidence / (per_card * (kept + PRIOR_CARDS)) if kept > 0 else 0.0
        out.append(min(1.0, max(0.0, (share - DEAD_ZONE) * GAIN)))
    return out


@functools.lru_cache(maxsize=64)
def _all_mates(rules: GolfRules) -> tuple[tuple[int, ...], ...]:
    from golf.engine.cardgolf.bots.perception import policy_for

    return tuple(policy_for(rules).mates)


def _mates(rules: GolfRules, p: int) -> tuple[int, ...]:
    mates = _all_mates(rules)
    return mates[p] if p < len(mates) else ()
