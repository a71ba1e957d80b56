"""The ``greedy`` level (``intermediate``): one-step expected value from its seat's view (see ``policy``), with
simple valuations of power cards (``power_play``) and a sensible fallback for any move kind it does not value, so
it always returns one of ``view.legal_moves`` whatever the rules."""

from __future__ import annotations

import random

from golf.engine.cardgolf.bots.perception import Perception, perceive, policy_for
from golf.engine.cardgolf.bots.policy import INF, Policy, Tuning
from golf.engine.cardgolf.bots.power_play import power_gain, power_named
from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.moves import (
    Discard,
    DrawDiscard,
    DrawStock,
    Flip,
    FlipAll,
    Keep,
    Knock,
    Move,
    Pass,
    Reveal,
    Swap,
    UsePower,
)
from golf.engine.cardgolf.options import FlipRule
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.scoring import UNKNOWN, card_key
from golf.engine.cardgolf.state import Phase, Source
from golf.engine.cardgolf.view import SeatView

POWER_MIN_GAIN = 0.2
"""Use a power rather than discard the card when its gain (in points) is at least this."""


def _kv(card: GCard, rules: GolfRules) -> tuple[int, float]:
    return card_key(card, rules), float(rules.card_value(card))


def greedy_move(view: SeatView, policy: Policy | None = None, *, look_at_opponents: bool = True) -> Move:
    """The greedy policy's move for ``view``'s seat (``policy``: the tuned thresholds of a personality), always
    one of ``view.legal_moves``. ``look_at_opponents`` off: it goes out without comparing grids (a beginner)."""
    assert view.seat is not None
    legal = view.legal_moves
    if not legal:
        raise ValueError("no legal move: it is not this seat's move")
    move = _greedy(view, policy or policy_for(view.rules), look_at_opponents)
    return move if move is not None and move in legal else fallback_move(view)


def _greedy(view: SeatView, policy: Policy, look_at_opponents: bool) -> Move | None:
    assert view.seat is not None
    legal = view.legal_moves
    seat = view.seat
    rules = view.rules
    if view.phase is Phase.SETUP:
        return _reveal(view, policy)
    pc = perceive(view)
    mk, mv = pc.keys[seat], pc.vals[seat]
    up = list(view.face_up[seat])
    if len(mk) < policy.n or len(up) < policy.n:  # a grid the policy cannot read (a card removed): fall back
        return None
    final = view.ender is not None
    min_opp = pc.min_opponent() if look_at_opponents else INF
    if view.phase is Phase.DRAW:
        return _draw(view, policy, pc, up, min_opp, final)
    if view.phase is Phase.PLACE:
        held = view.held
        if held is None:
            return None
        card = _kv(held, rules)
        from_discard = view.held_from is Source.DISCARD
        p = policy.place(mk, mv, up, card, from_discard, min_opp, final)
        power_move = _best_power(view, pc, card) if not from_discard else None
        swap_ok = p >= 0 and Swap(p) in legal
        if swap_ok and (power_move is None or _swap_gain(policy, mk, mv, card, p) >= power_move[0]):
            return Swap(p)
        if power_move is not None and power_move[0] >= POWER_MIN_GAIN:
            return power_move[1]
        if Discard() in legal:
            return Discard()
        q = policy.any_swap(mk, mv, card[0], card[1])
        return Swap(q) if Swap(q) in legal else None
    if view.phase is Phase.FLIP:
        compulsory = rules.flip_after_discard is FlipRule.COMPULSORY or Pass() not in legal
        p = policy.flip(mk, mv, up, compulsory, min_opp, final)
        if p >= 0:
            return Flip(p)
        return Pass() if Pass() in legal else None
    if view.phase is Phase.CHOOSE:
        return _keep(view, policy, pc, up, min_opp, final)
    if view.phase is Phase.POWER:
        best = _best_power(view, pc, None)
        if best is not None and (best[0] >= POWER_MIN_GAIN or Pass() not in legal):
            return best[1]
        return Pass() if Pass() in legal else None
    return None


def _reveal(view: SeatView, policy: Policy) -> Move | None:
    """The start cards: one per column where it can (a column's cards may pair later), else the first ones."""
    reveals = [m for m in view.legal_moves if isinstance(m, Reveal)]
    if not reveals:
        return None
    wanted = Reveal(tuple(range(view.rules.start_cards)))
    return wanted if wanted in reveals else reveals[0]


def _draw(view: SeatView, policy: Policy, pc: Perception, up: list[bool], min_opp: float, final: bool) -> Move | None:
    legal = view.legal_moves
    seat = pc.seat
    rules = view.rules
    mk, mv = pc.keys[seat], pc.vals[seat]
    if Knock() in legal and policy.should_knock(pc.estimates[seat], min_opp, view.turns, view.players):
        return Knock()
    if FlipAll() in legal and not final and pc.estimates[seat] < min_opp - policy.t.out_margin:
        return FlipAll()  # going out early: the grid (its last cards at their expected value) looks lowest
    top = view.discard_top
    if top is not None and DrawDiscard() in legal:
        pair = _kv(top, rules)
        if policy.wants_discard(mk, mv, up, pair, min_opp, final):
            return DrawDiscard()
    if policy.t.flip_as_turn and not final:
        downs = [p for p in range(policy.n) if not up[p]]
        if len(downs) >= 2:
            p = policy.flip(mk, mv, up, False, min_opp, final)
            if p >= 0 and Flip(p) in legal:
                return Flip(p)
    if DrawStock() in legal:
        return DrawStock()
    if DrawDiscard() in legal:
        return DrawDiscard()
    return None


def _swap_gain(policy: Policy, mk: list[int], mv: list[float], card: tuple[int, float], p: int) -> float:
    base = policy.score(mk, mv)
    k0, v0 = mk[p], mv[p]
    mk[p], mv[p] = card
    after = policy.score(mk, mv)
    mk[p], mv[p] = k0, v0
    return base - after


def _best_power(view: SeatView, pc: Perception, card: tuple[int, float] | None) -> tuple[float, Move] | None:
    """The legal power move of highest gain, if any is valued."""
    rules = view.rules
    held_power = rules.power_of(view.held) if view.held is not None else None
    if card is None:
        card = _kv(view.held, rules) if view.held is not None else (UNKNOWN - 1, pc.ev)
    best: tuple[float, Move] | None = None
    for move in view.legal_moves:
        if not isinstance(move, UsePower):
            continue
        gain = power_gain(view, pc, move, power_named(move, held_power), card)
        if gain is not None and (best is None or gain > best[0]):
            best = (gain, move)
    return best


def _keep(view: SeatView, policy: Policy, pc: Perception, up: list[bool], min_opp: float, final: bool) -> Move | None:
    """After drawing two: keep the offered card and place that lower the grid most."""
    seat = pc.seat
    mk, mv = pc.keys[seat], pc.vals[seat]
    best: tuple[float, Move] | None = None
    for move in view.legal_moves:
        if not isinstance(move, Keep) or not 0 <= move.choice < len(view.offered) or move.position >= len(mk):
            continue
        ck, cv = _kv(view.offered[move.choice], view.rules)
        k0, v0 = mk[move.position], mv[move.position]
        mk[move.position], mv[move.position] = ck, cv
        s = policy.score(mk, mv)
        mk[move.position], mv[move.position] = k0, v0
        if best is None or s < best[0]:
            best = (s, move)
    return best[1] if best is not None else None


_PREFERRED: dict[Phase, tuple[Move, ...]] = {
    Phase.DRAW: (DrawStock(), DrawDiscard()),
    Phase.PLACE: (Discard(),),
    Phase.FLIP: (Pass(),),
    Phase.POWER: (Pass(),),
}


def fallback_move(view: SeatView) -> Move:
    """A sensible legal move when a bot has none of its own: the phase's plain move (draw from the stock, discard,
    pass), else the first legal move that does not end the hole (knocking, going out early), else the first."""
    legal = view.legal_moves
    for plain in _PREFERRED.get(view.phase, ()):
        if plain in legal:
            return plain
    for move in legal:
        if not isinstance(move, Knock | FlipAll):
            return move
    return legal[0]


class GreedyBot:
    """The ``greedy`` level (deterministic; the seed is accepted for a uniform interface). ``tuning`` gives it a
    personality's thresholds; ``name`` is the name it was made under."""

    def __init__(self, seed: int = 0, tuning: Tuning | None = None, name: str = "greedy") -> None:
        self.rng = random.Random(seed)
        self.tuning = tuning
        self.name = name

    def choose(self, view: SeatView) -> Move:
        """The greedy move."""
        return greedy_move(view, policy_for(view.rules, self.tuning))
