"""A fast, mutable simulation of the rest of a hole for the ``strong`` bot's rollouts.

Cards are (key, value) pairs; every player follows the greedy policy, except that each player ``q`` makes a
share ``erratic[q]`` of its decisions at random (as the ``random`` bot does: a kind of move, then a target), which
is how ``strong`` models an opponent that plays worse than greedy (see ``opponents``); players know only face-up
cards (peeks are not modelled); the hole ends as in the engine (all face up with or without final turns, knocking,
the round limit); an empty stock is reshuffled from the discards with the simulation's own ``random.Random``.
Hole-level extras (knocker penalties, four alike against opponents) are not scored here.
"""

from __future__ import annotations

import random

from golf.engine.cardgolf.bots.policy import Policy
from golf.engine.cardgolf.options import FlipRule
from golf.engine.cardgolf.scoring import UNKNOWN

CardKV = tuple[int, float]

DRAW, PLACE, FLIP, OVER = 0, 1, 2, 3


class Sim:
    """The state of a simulated hole."""

    __slots__ = (
        "discard",
        "ender",
        "erratic",
        "est",
        "ev",
        "held",
        "held_from_discard",
        "keys",
        "max_turns",
        "mk",
        "mv",
        "phase",
        "players",
        "policy",
        "rng",
        "steps",
        "stock",
        "turn",
        "turns",
        "up",
        "vals",
    )

    def __init__(
        self,
        policy: Policy,
        keys: list[list[int]],
        vals: list[list[float]],
        up: list[list[bool]],
        stock: list[CardKV],
        discard: list[CardKV],
        turn: int,
        ender: int | None,
        turns: int,
        ev: float,
        rng: random.Random,
        erratic: list[float] | None = None,
    ) -> None:
        self.policy = policy
        self.players = len(keys)
        self.keys = keys
        self.vals = vals
        self.up = up
        self.stock = stock
        self.discard = discard
        self.turn = turn
        self.ender = ender
        self.turns = turns
        self.max_turns = policy.rules.max_rounds * self.players
        self.ev = ev
        self.rng = rng
        self.erratic = erratic if erratic is not None and any(erratic) else None
        self.phase = DRAW
        self.held: CardKV | None = None
        self.held_from_discard = False
        self.steps = 0
        # What each player sees of its own grid (face-up cards), and every grid's estimated score, kept current.
        self.mk: list[list[int]] = []
        self.mv: list[list[float]] = []
        for q in range(self.players):
            mk, mv = policy.mask(keys[q], vals[q], up[q], ev)
            self.mk.append(mk)
            self.mv.append(mv)
        self.est = [policy.score(self.mk[q], self.mv[q]) for q in range(self.players)]

    def copy(self) -> Sim:
        """An independent copy (the rng is shared: rollouts draw from one stream)."""
        new = Sim.__new__(Sim)
        new.policy = self.policy
        new.players = self.players
        new.keys = [list(k) for k in self.keys]
        new.vals = [list(v) for v in self.vals]
        new.up = [list(u) for u in self.up]
        new.stock = list(self.stock)
        new.discard = list(self.discard)
        new.turn = self.turn
        new.ender = self.ender
        new.turns = self.turns
        new.max_turns = self.max_turns
        new.ev = self.ev
        new.rng = self.rng
        new.erratic = self.erratic
        new.phase = self.phase
        new.held = self.held
        new.held_from_discard = self.held_from_discard
        new.steps = 0
        new.mk = [list(k) for k in self.mk]
        new.mv = [list(v) for v in self.mv]
        new.est = list(self.est)
        return new

    # -- what a player sees --------------------------------------------------------------------------------
    def seen(self, q: int) -> tuple[list[int], list[float]]:
        """Player ``q``'s grid as ``q`` sees it (face-up cards only); the lists are the simulation's own."""
        return self.mk[q], self.mv[q]

    def min_opponent(self, q: int) -> float:
        """The lowest estimated score among ``q``'s opponents."""
        est = self.est
        if self.players == 2:
            return est[1 - q]
        return min(est[o] for o in range(self.players) if o != q)

    def _reveal(self, q: int, p: int) -> None:
        self.mk[q][p] = self.keys[q][p]
        self.mv[q][p] = self.vals[q][p]
        self.est[q] = self.policy.score(self.mk[q], self.mv[q])

    def scores(self) -> list[float]:
        """The true score of every grid."""
        score = self.policy.score
        return [score(self.keys[q], self.vals[q]) for q in range(self.players)]

    # -- actions -------------------------------------------------------------------------------------------
    def draw_stock(self) -> None:
        """Take the top of the stock."""
        self.held = self.stock.pop()
        self.held_from_discard = False
        self.phase = PLACE

    def draw_discard(self) -> None:
        """Take the top of the discard pile."""
        self.held = self.discard.pop()
        self.held_from_discard = True
        self.phase = PLACE

    def knock(self) -> None:
        """Knock instead of a turn."""
        self.ender = self.turn
        if not self.policy.rules.final_turns:
            self.phase = OVER
            return
        self._end_turn(check_out=False)

    def swap(self, p: int) -> None:
        """Put the card in hand at ``p``."""
        q = self.turn
        held = self.held
        assert held is not None
        self.discard.append((self.keys[q][p], self.vals[q][p]))
        self.keys[q][p], self.vals[q][p] = held
        self.up[q][p] = self.policy.swap_up
        if self.policy.swap_up:
            self._reveal(q, p)
        else:
            self.mk[q][p], self.mv[q][p] = UNKNOWN + p, self.ev
            self.est[q] = self.policy.score(self.mk[q], self.mv[q])
        self.held = None
        self._end_turn()

    def throw(self) -> None:
        """Discard the card in hand (then flip, when the rules say so)."""
        held = self.held
        assert held is not None
        self.discard.append(held)
        self.held = None
        if self.policy.rules.flip_after_discard is not FlipRule.NONE and not all(self.up[self.turn]):
            self.phase = FLIP
        else:
            self._end_turn()

    def flip(self, p: int) -> None:
        """Turn up ``p`` (-1: pass)."""
        if p >= 0:
            self.up[self.turn][p] = True
            self._reveal(self.turn, p)
        self._end_turn()

    def flip_all(self) -> None:
        """Go out early: turn up every face-down card (a whole turn)."""
        q = self.turn
        for p, up in enumerate(self.up[q]):
            if not up:
                self.up[q][p] = True
                self.mk[q][p] = self.keys[q][p]
                self.mv[q][p] = self.vals[q][p]
        self.est[q] = self.policy.score(self.mk[q], self.mv[q])
        self._end_turn()

    def _end_turn(self, check_out: bool = True) -> None:
        q = self.turn
        self.turns += 1
        self.phase = DRAW
        if check_out and self.ender is None and self.policy.ends_on_up and all(self.up[q]):
            self.ender = q
            if not self.policy.rules.final_turns:
                self.phase = OVER
                return
        nxt = (q + 1) % self.players
        if nxt == self.ender or self.turns >= self.max_turns:
            self.phase = OVER
            return
        self.turn = nxt
        if not self.stock:
            if len(self.discard) <= 1:
                self.phase = OVER
                return
            top = self.discard.pop()
            self.rng.shuffle(self.discard)
            self.stock, self.discard = self.discard, [top]

    # -- the greedy policy ---------------------------------------------------------------------------------
    def random_step(self) -> None:
        """One decision at random, as the ``random`` bot makes it: a kind of move, then one of its targets."""
        q = self.turn
        rng = self.rng
        rules = self.policy.rules
        if self.phase == DRAW:
            kinds = 1 + (1 if self.discard else 0) + (1 if rules.knocking and self.ender is None else 0)
            k = rng.randrange(kinds)
            if k == 0:
                self.draw_stock()
            elif k == 1 and self.discard:
                self.draw_discard()
            else:
                self.knock()
        elif self.phase == PLACE:
            can_discard = not self.held_from_discard or not rules.taken_discard_must_swap
            if can_discard and rng.random() < 0.5:
                self.throw()
            else:
                self.swap(rng.randrange(self.policy.n))
        else:
            downs = [p for p, up in enumerate(self.up[q]) if not up]
            optional = rules.flip_after_discard is not FlipRule.COMPULSORY
            if not downs or (optional and rng.random() < 0.5):
                self.flip(-1)
            else:
                self.flip(rng.choice(downs))

    def policy_step(self) -> None:
        """One decision of the player to move: greedy, or at random for its erratic share."""
        q = self.turn
        pol = self.policy
        self.steps += 1
        erratic = self.erratic
        if erratic is not None and erratic[q] > 0.0 and self.rng.random() < erratic[q]:
            self.random_step()
            return
        mk, mv = self.mk[q], self.mv[q]
        up = self.up[q]
        final = self.ender is not None
        min_opp = self.min_opponent(q)
        if self.phase == DRAW:
            if (
                pol.rules.knocking
                and self.ender is None
                and pol.should_knock(self.est[q], min_opp, self.turns, self.players)
            ):
                self.knock()
                return
            top = self.discard[-1] if self.discard else None
            if pol.wants_discard(mk, mv, up, top, min_opp, final):
                self.draw_discard()
            else:
                self.draw_stock()
        elif self.phase == PLACE:
            assert self.held is not None
            p = pol.place(mk, mv, up, self.held, self.held_from_discard, min_opp, final)
            if p >= 0:
                self.swap(p)
            else:
                self.throw()
        else:
            compulsory = pol.rules.flip_after_discard is FlipRule.COMPULSORY
            self.flip(pol.flip(mk, mv, up, compulsory, min_opp, final))

    def rollout(self) -> list[float]:
        """Play greedily to the end of the hole; the true scores."""
        while self.phase != OVER:
            self.policy_step()
        return self.scores()
