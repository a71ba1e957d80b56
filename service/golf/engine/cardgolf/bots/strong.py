"""The ``strong`` level: determinized Monte Carlo search over the hands consistent with what the seat knows.

At each decision the bot deals the cards it has not seen (the unseen pool: decks less everything its view
shows) at random into the face-down slots and the stock, many times; for each such deal and each candidate move
it plays the rest of the hole with every player following the greedy policy, and picks the move with the lowest
mean of (its score - the opponents' mean score). The same deals are used for every candidate (common random
numbers), so differences between moves are measured on equal luck. Candidates are pruned to the greedy choice
and the few next best by one-step value. Rules the simulation does not model (power cards, cards swapped in face
down) fall back to the greedy policy.

Opponents are not all greedy: each is modelled from its grid (``opponents.erratic_shares``), and plays that share
of its simulated decisions at random. Against a weak opponent the bot so keeps improving its own grid instead of
rushing out to stop an improvement that will not come.

A personality (``tuning``) makes the bot's own greedy choice the first candidate (it wins ties) and adds its
tastes to the comparison: ``down_bonus`` for a move that turns a card up, ``pair_bonus`` for one that makes a pair.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from golf.engine.cardgolf.bots.greedy import greedy_move
from golf.engine.cardgolf.bots.opponents import erratic_shares
from golf.engine.cardgolf.bots.perception import Perception, perceive, policy_for
from golf.engine.cardgolf.bots.policy import Tuning
from golf.engine.cardgolf.bots.simulation import DRAW, FLIP, PLACE, CardKV, Sim
from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.moves import Discard, DrawDiscard, DrawStock, Flip, FlipAll, Knock, Move, Pass, Swap
from golf.engine.cardgolf.options import FlipRule
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.scoring import card_key
from golf.engine.cardgolf.state import Phase, Source
from golf.engine.cardgolf.view import SeatView


def _kv(card: GCard, rules: GolfRules) -> CardKV:
    return card_key(card, rules), float(rules.card_value(card))


def simulable(rules: GolfRules) -> bool:
    """Whether the rollout simulation models these rules well enough to search with it."""
    return (
        not rules.powers
        and rules.swap_face_up
        and not rules.peek_stroke
        and not rules.jack_discard_skips_next
        and rules.flip_after_discard is not FlipRule.ENDGAME
    )


SLOW_SCORING = 6
"""How much dearer a simulated decision is where a swap is scored on the whole grid (rows, pairs, blocks, jokers'
pairs), measured on six-card-jokers against six-card."""


class StrongBot:
    """Determinized Monte Carlo over greedy rollouts. ``rollouts`` bounds the simulations per decision;
    ``model_opponents`` off: every opponent is simulated as greedy (the bot before opponent models)."""

    def __init__(
        self,
        seed: int = 0,
        rollouts: int = 192,
        max_candidates: int = 4,
        step_budget: int = 6000,
        tuning: Tuning | None = None,
        name: str = "strong",
        model_opponents: bool = True,
    ) -> None:
        self.rng = random.Random(seed)
        self.rollouts = rollouts
        self.max_candidates = max_candidates
        self.step_budget = step_budget
        """Simulated decisions per move on a grid of six (fewer on bigger grids): bounds the time of a decision
        whatever the stage of the hole."""
        self.tuning = tuning
        self.name = name
        self.model_opponents = model_opponents

    def choose(self, view: SeatView) -> Move:
        """The move with the best simulated outcome (or the greedy move where search does not apply)."""
        legal = view.legal_moves
        greedy = greedy_move(view, policy_for(view.rules, self.tuning))
        if len(legal) == 1 or view.phase not in (Phase.DRAW, Phase.PLACE, Phase.FLIP) or not simulable(view.rules):
            return greedy
        if view.held is None and view.phase is Phase.PLACE:
            return greedy
        if any(len(g) != view.rules.cards_per_grid for g in view.grids) or not _simulated(greedy, view):
            return greedy
        pc = perceive(view)
        candidates = [m for m in self._candidates(view, pc, greedy) if _simulated(m, view)]
        if len(candidates) == 1:
            return candidates[0]
        bias = [self._bias(view, pc, move) for move in candidates]
        totals = [0.0] * len(candidates)
        seat = pc.seat
        erratic = erratic_shares(view, pc) if self.model_opponents else None
        known = _Known.of(view, pc)
        # A simulated decision costs about one score per place of the grid (several where a swap cannot be scored
        # from its column alone): bigger grids and richer scoring get fewer decisions.
        policy = policy_for(view.rules)
        n = max(6, view.rules.cards_per_grid)
        budget = self.step_budget * 216 // n**3  # a longer hole, more places to weigh at each decision
        if not policy.fast:
            budget //= SLOW_SCORING
        # Every candidate gets the same deals. (Narrowing to the best two after a first look, to give them more
        # playouts, measured no better against greedy on the same holes: the figures are in bench/README.md.)
        deals = steps = played = 0
        while deals < 2 or (played < self.rollouts and steps < budget):
            root = self._determinize(view, pc, erratic, known)
            luck = self.rng.getrandbits(32)
            for i, move in enumerate(candidates):
                sim = root.copy()
                # Common random numbers all the way down: every candidate's rollout draws the same reshuffles and
                # the same random decisions of erratic opponents, so their scores differ by the move, not by luck.
                sim.rng = random.Random(luck)
                _apply(sim, move)
                scores = sim.rollout()
                steps += sim.steps
                others = [s for q, s in enumerate(scores) if q != seat]
                totals[i] += scores[seat] - sum(others) / len(others) - bias[i]
            played += len(candidates)
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
            out += [m for m in legal if isinstance(m, DrawStock | Knock | FlipAll) and m != greedy]
            if view.discard and DrawDiscard() in legal and DrawDiscard() != greedy:
                out.append(DrawDiscard())
            flips = [m for m in legal if isinstance(m, Flip) and m != greedy]
            if flips:  # a flip as a whole turn: the one the policy would turn up
                policy = policy_for(view.rules, self.tuning)
                up = list(view.face_up[pc.seat])
                p = policy.flip(pc.keys[pc.seat], pc.vals[pc.seat], up, True, pc.min_opponent(), view.ender is not None)
                if Flip(p) in flips:
                    out.append(Flip(p))
            return out
        policy = policy_for(view.rules)
        seat = pc.seat
        mk, mv = pc.keys[seat], pc.vals[seat]
        ranked: list[tuple[float, Move]] = []
        if view.phase is Phase.PLACE:
            assert view.held is not None
            ck, cv = _kv(view.held, view.rules)
            for move in legal:
                if isinstance(move, Swap) and 0 <= move.position < len(mk):
                    k0, v0 = mk[move.position], mv[move.position]
                    mk[move.position], mv[move.position] = ck, cv
                    ranked.append((policy.score(mk, mv), move))
                    mk[move.position], mv[move.position] = k0, v0
            if Discard() in legal and Discard() != greedy:
                out.append(Discard())
        else:
            n = len(mk)
            ranked = [(0.0, m) for m in legal if isinstance(m, Pass) or (isinstance(m, Flip) and 0 <= m.position < n)]
        ranked.sort(key=lambda item: item[0])
        for _, move in ranked:
            if len(out) >= self.max_candidates + 1:
                break
            if move not in out:
                out.append(move)
        return out

    def _bias(self, view: SeatView, pc: Perception, move: Move) -> float:
        """The personality's taste for ``move``, in points (positive: preferred)."""
        t = self.tuning
        if t is None or not (t.down_bonus or t.pair_bonus):
            return 0.0
        up = view.face_up[pc.seat]
        if isinstance(move, Flip | FlipAll):
            return t.down_bonus
        if isinstance(move, Swap) and view.held is not None:
            bonus = t.down_bonus if not up[move.position] else 0.0
            key = card_key(view.held, view.rules)
            mates = policy_for(view.rules).mates[move.position]
            if t.pair_bonus and any(pc.keys[pc.seat][q] == key for q in mates):
                bonus += t.pair_bonus
            return bonus
        return 0.0

    def _determinize(self, view: SeatView, pc: Perception, erratic: list[float] | None, known: _Known) -> Sim:
        """One deal of the unseen cards into the face-down places and the stock."""
        pool = list(known.pool)
        self.rng.shuffle(pool)
        keys: list[list[int]] = []
        vals: list[list[float]] = []
        for grid in known.grids:
            ks: list[int] = []
            vs: list[float] = []
            for kv in grid:
                k, v = kv if kv is not None else pool.pop()
                ks.append(k)
                vs.append(v)
            keys.append(ks)
            vals.append(vs)
        assert view.to_move is not None
        sim = Sim(
            policy_for(view.rules),
            keys,
            vals,
            [list(u) for u in view.face_up],
            pool,
            list(known.discard),
            view.to_move,
            view.ender,
            view.turns,
            pc.ev,
            self.rng,
            erratic,
        )
        if view.phase is Phase.PLACE:
            sim.phase = PLACE
            sim.held = known.held
            sim.held_from_discard = view.held_from is Source.DISCARD
        elif view.phase is Phase.FLIP:
            sim.phase = FLIP
        else:
            sim.phase = DRAW
        return sim


@dataclass(frozen=True, slots=True)
class _Known:
    """What a seat's view shows, as keys and values, computed once per decision."""

    pool: tuple[CardKV, ...]
    grids: tuple[tuple[CardKV | None, ...], ...]
    discard: tuple[CardKV, ...]
    held: CardKV | None

    @staticmethod
    def of(view: SeatView, pc: Perception) -> _Known:
        rules = view.rules
        memo: dict[GCard, CardKV] = {}

        def kv(card: GCard) -> CardKV:
            out = memo.get(card)
            if out is None:
                out = memo[card] = _kv(card, rules)
            return out

        return _Known(
            tuple(kv(c) for c in pc.pool),
            tuple(tuple(kv(c) if c is not None else None for c in grid) for grid in view.grids),
            tuple(kv(c) for c in view.discard),
            kv(view.held) if view.held is not None else None,
        )


_SIMULATED: dict[Phase, tuple[type, ...]] = {
    Phase.DRAW: (DrawStock, DrawDiscard, Knock, FlipAll, Flip),
    Phase.PLACE: (Swap, Discard),
    Phase.FLIP: (Flip, Pass),
}
"""The kinds of move the simulation plays in each phase; any other (powers, peeks, keeps) is left to the greedy
policy."""


def _simulated(move: Move, view: SeatView) -> bool:
    """Whether the simulation plays ``move`` as the engine would (a kind it knows, on a place of the grid)."""
    if not isinstance(move, _SIMULATED.get(view.phase, ())):
        return False
    if isinstance(move, Swap | Flip):
        return 0 <= move.position < view.rules.cards_per_grid
    if isinstance(move, DrawDiscard):
        return bool(view.discard)
    return True


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
        sim.flip(move.position)  # after a discard, or as a whole turn (the simulation's flip ends the turn)
    elif isinstance(move, FlipAll):
        sim.flip_all()
    elif isinstance(move, Pass):
        sim.flip(-1)
