"""The ``greedy`` level: one-step expected value from its seat's view (see ``policy``), with simple rules for
power cards."""

from __future__ import annotations

import random

from golf.engine.cardgolf.bots.perception import Perception, perceive, policy_for
from golf.engine.cardgolf.moves import (
    Discard,
    DrawDiscard,
    DrawStock,
    Flip,
    Knock,
    Move,
    Pass,
    Reveal,
    Swap,
    UsePower,
)
from golf.engine.cardgolf.options import FlipRule, Power
from golf.engine.cardgolf.scoring import card_key
from golf.engine.cardgolf.state import Phase, Source
from golf.engine.cardgolf.view import SeatView


def greedy_move(view: SeatView) -> Move:
    """The greedy policy's move for ``view``'s seat."""
    assert view.seat is not None
    legal = view.legal_moves
    seat = view.seat
    rules = view.rules
    if view.phase is Phase.SETUP:
        return Reveal(tuple(range(rules.start_cards)))
    policy = policy_for(rules)
    pc = perceive(view)
    mk, mv = pc.keys[seat], pc.vals[seat]
    up = list(view.face_up[seat])
    final = view.ender is not None
    min_opp = pc.min_opponent()
    if view.phase is Phase.DRAW:
        if Knock() in legal and policy.should_knock(pc.estimates[seat], min_opp, view.turns, view.players):
            return Knock()
        top = view.discard_top
        if top is not None and DrawDiscard() in legal:
            pair = (card_key(top, rules), float(rules.card_value(top)))
            if policy.wants_discard(mk, mv, up, pair, min_opp, final):
                return DrawDiscard()
        return DrawStock() if DrawStock() in legal else legal[0]
    if view.phase is Phase.PLACE:
        held = view.held
        assert held is not None
        card = (card_key(held, rules), float(rules.card_value(held)))
        p = policy.place(mk, mv, up, card, view.held_from is Source.DISCARD, min_opp, final)
        if p >= 0:
            return Swap(p)
        power = rules.power_of(held) if view.held_from is Source.STOCK else None
        if power is not None:
            move = _power_move(view, pc, power, float(rules.card_value(held)))
            if move is not None and move in legal:
                return move
        return Discard() if Discard() in legal else Swap(policy.any_swap(mk, mv, card[0], card[1]))
    # FLIP
    compulsory = rules.flip_after_discard is FlipRule.COMPULSORY
    p = policy.flip(mk, mv, up, compulsory, min_opp, final)
    if p >= 0:
        return Flip(p)
    return Pass() if Pass() in legal else legal[0]


def _power_move(view: SeatView, pc: Perception, power: Power, card_value: float) -> Move | None:
    seat = pc.seat
    mine = view.grids[seat]
    others = [s for s in range(view.players) if s != seat]
    if power is Power.PEEK_OWN:
        unknown = [p for p, c in enumerate(mine) if c is None]
        return UsePower(position=unknown[0]) if unknown else None
    if power is Power.PEEK_OPPONENT:
        for s in others:
            for p, c in enumerate(view.grids[s]):
                if c is None and not view.face_up[s][p]:
                    return UsePower(s, p)
        return None
    if power is Power.BLIND_SWAP:
        worst = max(range(len(mine)), key=lambda p: pc.vals[seat][p])
        best: tuple[float, int, int] | None = None
        for s in others:
            for p, v in enumerate(pc.vals[s]):
                gain = pc.vals[seat][worst] - v
                if gain > 2 and (best is None or gain > best[0]):
                    best = (gain, s, p)
        return UsePower(best[1], best[2], worst) if best else None
    if power is Power.GIVE_TO_OPPONENT:
        for s in others:
            for p, v in enumerate(pc.vals[s]):
                if view.grids[s][p] is not None and v < card_value - 2:
                    return UsePower(s, p)
        return None
    return None


class GreedyBot:
    """The ``greedy`` level (deterministic; the seed is accepted for a uniform interface)."""

    name = "greedy"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: SeatView) -> Move:
        """The greedy move."""
        move = greedy_move(view)
        return move if move in view.legal_moves else view.legal_moves[0]
