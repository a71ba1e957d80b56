"""The ``strong`` level: determinized Monte Carlo search over the hands consistent with what the seat knows.

At each decision the bot deals the cards it has not seen (the unseen pool: decks less everything its view
shows) at random into the face-down slots and the stock, many times; for each such deal and each candidate move
it plays the rest of the hole with every player following the greedy policy, and picks the move with the lowest
mean of (its score - the opponents' mean score). The same deals are used for every candidate (common random
numbers), so differences between moves are measured on equal luck. Candidates are pruned to the greedy choice
and the few next best by one-step value. Rules the simulation does not model (power cards, cards swapped in face
down) fall back to the greedy policy.
"""

from __future__ import annotations

import random

from golf.engine.cardgolf.bots.greedy import greedy_move
from golf.engine.cardgolf.bots.perception import Perception, perceive, policy_for
from golf.engine.cardgolf.bots.simulation import DRAW, FLIP, PLACE, CardKV, Sim
from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.moves import Discard, DrawDiscard, DrawStock, Flip, Knock, Move, Pass, Swap
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.scoring import card_key
from golf.engine.cardgolf.state import Phase, Source
from golf.engine.cardgolf.view import SeatView


def _kv(card: GCard, rules: GolfRules) -> CardKV:
    return card_key(card, rules), float(rules.card_value(card))


def simulable(rules: GolfRules) -> bool:
    """Whether the rollout simulation models these rules well enough to search with it."""
    return not rules.powers and rules.swap_face_up and not rules.peek_stroke and not rules.jack_discard_skips_next


class StrongBot:
    """Determinized Monte Carlo over greedy rollouts. ``rollouts`` bounds the simulations per decision."""

    name = "strong"

    def __init__(self, seed: int = 0, rollouts: int = 64, max_candidates: int = 4, step_budget: int = 2500) -> None:
        self.rng = random.Random(seed)
        self.rollouts = rollouts
        self.max_candidates = max_candidates
        self.step_budget = step_budget
        """Simulated decisions per move: bounds the time of a decision whatever the stage of the hole."""

    def choose(self, view: SeatView) -> Move:
        """The move with the best simulated outcome (or the greedy move where search does not apply)."""
        legal = view.legal_moves
        greedy = greedy_move(view)
        if greedy not in legal:
            greedy = legal[0]
        if len(legal) == 1 or view.phase is Phase.SETUP or not simulable(view.rules):
            return greedy
        pc = perceive(view)
        candidates = self._candidates(view, pc, greedy)
        if len(candidates) == 1:
            return candidates[0]
        most = max(2, self.rollouts // len(candidates))
        totals = [0.0] * len(candidates)
        seat = pc.seat
        deals = steps = 0
        while deals < 2 or (deals < most and steps < self.step_budget):
            root = self._determinize(view, pc)
            for i, move in enumerate(candidates):
                sim = root.copy()
                _apply(sim, move)
                scores = sim.rollout()
                steps += sim.steps
                others = [s for q, s in enumerate(scores) if q != seat]
                totals[i] += scores[seat] - sum(others) / len(others)
            deals += 1
        best = 0  # the greedy move comes first and wins ties
        for i in range(1, len(candidates)):
            if totals[i] < totals[best] - 1e-9:
                best = i
        return candidates[best]

    def _candidates(self, view: SeatView, pc: Perception, greedy: Move) -> list[Move]:
        legal = view.legal_moves
        out: list[Move] = [greedy]
        if view.phase is Phase.DRAW:
            out += [m for m in legal if isinstance(m, DrawStock | DrawDiscard | Knock) and m != greedy]
            return out
        policy = policy_for(view.rules)
        seat = pc.seat
        mk, mv = pc.keys[seat], pc.vals[seat]
        ranked: list[tuple[float, Move]] = []
        if view.phase is Phase.PLACE:
            assert view.held is not None
            ck, cv = _kv(view.held, view.rules)
            for move in legal:
                if isinstance(move, Swap):
                    k0, v0 = mk[move.position], mv[move.position]
                    mk[move.position], mv[move.position] = ck, cv
                    ranked.append((policy.score(mk, mv), move))
                    mk[move.position], mv[move.position] = k0, v0
            if Discard() in legal and Discard() != greedy:
                out.append(Discard())
        else:
            ranked = [(0.0, m) for m in legal if isinstance(m, Flip | Pass)]
        ranked.sort(key=lambda item: item[0])
        for _, move in ranked:
            if len(out) >= self.max_candidates + 1:
                break
            if move not in out:
                out.append(move)
        return out

    def _determinize(self, view: SeatView, pc: Perception) -> Sim:
        rules = view.rules
        pool = [_kv(c, rules) for c in pc.pool]
        self.rng.shuffle(pool)
        keys: list[list[int]] = []
        vals: list[list[float]] = []
        for grid in view.grids:
            ks: list[int] = []
            vs: list[float] = []
            for card in grid:
                k, v = _kv(card, rules) if card is not None else pool.pop()
                ks.append(k)
                vs.append(v)
            keys.append(ks)
            vals.append(vs)
        discard = [_kv(c, rules) for c in view.discard]
        assert view.to_move is not None
        sim = Sim(
            policy_for(rules),
            keys,
            vals,
            [list(u) for u in view.face_up],
            pool,
            discard,
            view.to_move,
            view.ender,
            view.turns,
            pc.ev,
            self.rng,
        )
        if view.phase is Phase.PLACE:
            assert view.held is not None
            sim.phase = PLACE
            sim.held = _kv(view.held, rules)
            sim.held_from_discard = view.held_from is Source.DISCARD
        elif view.phase is Phase.FLIP:
            sim.phase = FLIP
        else:
            sim.phase = DRAW
        return sim


def _apply(sim: Sim, move: Move) -> None:
    if isinstance(move, DrawStock):
        sim.draw_stock()
    elif isinstance(move, DrawDiscard):
        sim.draw_discard()
    elif isinstance(move, Knock):
        sim.knock()
    elif isinstance(move, Swap):
        sim.swap(move.position)
    elif isinstance(move, Discard):
        sim.throw()
    elif isinstance(move, Flip):
        sim.flip(move.position)
    elif isinstance(move, Pass):
        sim.flip(-1)
