"""What a bot makes of its seat's view: the cards it has not seen, their expected value, and every grid as keys
and values (a card it does not know gets a never-matching key and that expected value)."""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

from golf.engine.cardgolf.bots.policy import Policy, ScoreFn, Tuning
from golf.engine.cardgolf.cards import GCard, build_deck
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.scoring import UNKNOWN, card_key
from golf.engine.cardgolf.view import SeatView


@functools.lru_cache(maxsize=256)
def policy_for(rules: GolfRules, tuning: Tuning | None = None) -> Policy:
    """The (cached) greedy policy of ``rules`` (with a personality's ``tuning``; default: the plain one)."""
    return Policy(rules, tuning)


@functools.lru_cache(maxsize=64)
def _sorted_deck(decks: int, jokers: int) -> tuple[GCard, ...]:
    return tuple(sorted(build_deck(decks, jokers)))


def unseen_cards(view: SeatView) -> list[GCard]:
    """The cards the viewer has not seen, in order: the decks less every card its view shows."""
    rules = view.rules
    seen = Counter(view.visible_cards())
    out: list[GCard] = []
    for card in _sorted_deck(rules.decks_for(view.players), rules.jokers):
        if seen[card] > 0:
            seen[card] -= 1
        else:
            out.append(card)
    return out


@dataclass(slots=True)
class Perception:
    """A seat's picture of the hole."""

    seat: int
    ev: float
    keys: list[list[int]]
    vals: list[list[float]]
    estimates: list[float]
    """Each grid's score as the seat estimates it."""
    pool: list[GCard]
    score: ScoreFn
    """The grid scorer (keys and values)."""

    def min_opponent(self) -> float:
        """The lowest estimate among the opponents."""
        return min(e for s, e in enumerate(self.estimates) if s != self.seat)


def perceive(view: SeatView) -> Perception:
    """The picture ``view``'s seat has of the hole."""
    assert view.seat is not None
    rules = view.rules
    policy = policy_for(rules)
    pool = unseen_cards(view)
    ev = sum(rules.card_value(c) for c in pool) / len(pool) if pool else 0.0
    keys: list[list[int]] = []
    vals: list[list[float]] = []
    for grid in view.grids:
        keys.append([card_key(c, rules) if c is not None else UNKNOWN + p for p, c in enumerate(grid)])
        vals.append([float(rules.card_value(c)) if c is not None else ev for c in grid])
    estimates = [policy.score(k, v) for k, v in zip(keys, vals, strict=True)]
    return Perception(view.seat, ev, keys, vals, estimates, pool, policy.score)
