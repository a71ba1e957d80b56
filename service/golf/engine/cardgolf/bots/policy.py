"""The greedy policy, written on plain lists so the ``greedy`` bot and the ``strong`` bot's simulations share it.

A player sees its grid as rank keys and values where a card it does not know has a key that never matches and
the expected value ``ev`` of the cards it has not seen. Each decision compares the grid's score before and after:
take the discard when it improves the grid by ``take`` points or more, keep a drawn card when it improves the grid
by ``keep``, and never turn the last card up (which ends the hole) unless the resulting score is below every
opponent's estimate by ``out_margin`` (or the hole is ending anyway).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from golf.engine.cardgolf.grid import geometry
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.scoring import UNKNOWN, scorer

ScoreFn = Callable[[Sequence[int], Sequence[float]], float]
INF = float("inf")


def fast_score(rules: GolfRules) -> ScoreFn:
    """A grid scorer on keys and values; a quick path for plain column matching, else ``Scorer.total``."""
    plain = (
        rules.match_columns
        and not (rules.match_rows or rules.match_diagonals or rules.match_adjacent_pairs)
        and rules.block_of_four_value is None
        and rules.joker_pair_value is None
        and not (rules.four_alike_self or rules.wild_one_eyed_jacks or rules.negative_pairs_keep_value)
        and not (rules.four_jacks_value or rules.four_in_two_columns_value or rules.four_kings_line_value)
        and rules.straight_value is None
    )
    n = rules.cards_per_grid
    if plain and rules.rows == 2:
        pairs = geometry(rules.rows, rules.cols).col_lines

        def two_rows(keys: Sequence[int], vals: Sequence[float]) -> float:
            t = 0.0
            for a, b in pairs:
                ka = keys[a]
                if ka != keys[b] or ka >= UNKNOWN:
                    t += vals[a] + vals[b]
            if len(vals) > n:  # places added beyond the grid (the ace of Powers) are single cards
                t += sum(vals[n:])
            return t

        return two_rows
    if plain:
        lines = geometry(rules.rows, rules.cols).col_lines

        def columns(keys: Sequence[int], vals: Sequence[float]) -> float:
            t = 0.0
            for line in lines:
                t += _line_score(keys, vals, line)
            if len(vals) > n:
                t += sum(vals[n:])
            return t

        return columns
    return scorer(rules).total


def _line_score(keys: Sequence[int], vals: Sequence[float], line: Sequence[int]) -> float:
    """A column's points: 0 when its cards are known and of one key, else their sum."""
    k = keys[line[0]]
    if k < UNKNOWN:
        for p in line:
            if keys[p] != k:
                break
        else:
            return 0.0
    t = 0.0
    for p in line:
        t += vals[p]
    return t


@dataclass(frozen=True, slots=True)
class Tuning:
    """Thresholds of the greedy policy."""

    take: float = 1.5
    """Take the discard when it lowers the grid's estimate by at least this much."""
    keep: float = 0.5
    """Keep a card drawn from the stock when it lowers the estimate by at least this much."""
    out_margin: float = 0.0
    """Go out only when the grid scores below every opponent's estimate less this margin."""
    knock_margin: float = 3.0
    """Knock when the grid's estimate is below every opponent's by this much ..."""
    knock_cap_per_card: float = 1.0
    """... and at most this much per card."""
    down_bonus: float = 0.0
    """A swap into a face-down place counts this much better (a racer's or gambler's taste; negative: cautious)."""
    pair_bonus: float = 0.0
    """A swap that makes a matched line or pair counts this much better (the pair hunter's taste)."""
    flip_by_partner: bool = False
    """Turn up first a face-down card whose line partner is known (it may pair) rather than the first one."""
    flip_as_turn: bool = False
    """Where the rules allow it, turn a card up as a whole turn when the discard is not worth taking."""


class Policy:
    """The greedy decisions for one set of rules."""

    def __init__(self, rules: GolfRules, tuning: Tuning | None = None) -> None:
        self.rules = rules
        self.n = rules.cards_per_grid
        self.score = fast_score(rules)
        self.t = tuning or Tuning()
        self.swap_up = rules.swap_face_up
        self.ends_on_up = rules.end_on_all_face_up
        # Two rows matched by column only: a swap changes one column's score, computed on the spot.
        self.partner: list[int] | None = None
        if rules.rows == 2 and self.score.__name__ == "two_rows":
            self.partner = [(p + rules.cols) % self.n for p in range(self.n)]
        # Any other grid matched by column only: a swap changes one column's score.
        self.column: list[tuple[int, ...]] | None = None
        self.col_lines = geometry(rules.rows, rules.cols).col_lines
        self.col_of = [p % rules.cols for p in range(self.n)]
        self.others = [tuple(q for q in self.col_lines[p % rules.cols] if q != p) for p in range(self.n)]
        if self.partner is None and self.score.__name__ == "columns":
            self.column = [self.col_lines[p % rules.cols] for p in range(self.n)]
        self.fast = self.partner is not None or self.column is not None
        """Whether a swap's score is computed from its column alone (the rollouts' cheap path)."""
        # Where each position may match (for the pair bonus and the choice of a card to turn up).
        self.mates: list[tuple[int, ...]] = [() for _ in range(self.n)]
        g = geometry(rules.rows, rules.cols)
        lines: list[tuple[int, ...]] = []
        if rules.match_columns:
            lines += g.col_lines
        if rules.match_rows:
            lines += g.row_lines
        if rules.match_diagonals:
            lines += g.diagonals
        if rules.match_adjacent_pairs:
            lines += g.adjacent_pairs
        if rules.block_of_four_value is not None:
            lines += g.blocks
        for line in lines:
            for p in line:
                self.mates[p] += tuple(q for q in line if q != p and q not in self.mates[p])

    def mask(
        self, keys: Sequence[int], vals: Sequence[float], known: Sequence[bool], ev: float
    ) -> tuple[list[int], list[float]]:
        """Keys and values as a player sees them: unknown cards get a unique key and the value ``ev``."""
        mk = [k if kn else UNKNOWN + p for p, (k, kn) in enumerate(zip(keys, known, strict=True))]
        mv = [v if kn else ev for v, kn in zip(vals, known, strict=True)]
        return mk, mv

    def best_swap(
        self,
        mk: list[int],
        mv: list[float],
        up: Sequence[bool],
        ck: int,
        cv: float,
        min_opp: float,
        final: bool,
    ) -> tuple[float, int]:
        """(change of score, position) of the best swap of card (ck, cv), the change including the personality's
        bonuses; position -1 when every swap would end the hole while behind."""
        downs = up.count(False)
        # Only a swap that leaves no card face down can end the hole: check it only then.
        guard = self.ends_on_up and self.swap_up and not final and downs <= 1
        best_d, best_p = INF, -1
        score = self.score
        partner = self.partner
        t = self.t
        down_bonus, pair_bonus = t.down_bonus, t.pair_bonus
        if partner is not None and not (down_bonus or pair_bonus or guard):
            # The hot path of the rollouts: one column changes, nothing else to weigh.
            for p in range(self.n):
                q = partner[p]
                kq, vq = mk[q], mv[q]
                if kq < UNKNOWN:
                    old = 0.0 if mk[p] == kq else mv[p] + vq
                    new = 0.0 if ck == kq else cv + vq
                    d = new - old
                else:
                    d = cv - mv[p]
                if d < best_d:
                    best_d, best_p = d, p
            return best_d, best_p
        column = self.column
        base = score(mk, mv)
        if column is not None:  # each column's score and sum once; a swap then changes one of them
            col_of, others = self.col_of, self.others
            col_old = [_line_score(mk, mv, line) for line in self.col_lines]
            col_sum = [sum(mv[q] for q in line) for line in self.col_lines]
        for p in range(self.n):
            if partner is not None:
                q = partner[p]
                kq, vq = mk[q], mv[q]
                old = 0.0 if (mk[p] == kq and kq < UNKNOWN) else mv[p] + vq
                new = 0.0 if (ck == kq and kq < UNKNOWN) else cv + vq
                s = base + new - old
            elif column is not None:
                c = col_of[p]
                if ck < UNKNOWN and all(mk[q] == ck for q in others[p]):
                    s = base - col_old[c]
                else:
                    s = base - col_old[c] + col_sum[c] - mv[p] + cv
            else:
                k0, v0 = mk[p], mv[p]
                mk[p], mv[p] = ck, cv
                s = score(mk, mv)
                mk[p], mv[p] = k0, v0
            if guard and downs - (0 if up[p] else 1) == 0 and s >= min_opp - self.t.out_margin:
                continue
            d = s - base
            if down_bonus and not up[p]:
                d -= down_bonus
            if pair_bonus and ck < UNKNOWN and any(mk[q] == ck for q in self.mates[p]):
                d -= pair_bonus
            if d < best_d:
                best_d, best_p = d, p
        return best_d, best_p

    def any_swap(self, mk: list[int], mv: list[float], ck: int, cv: float) -> int:
        """The position where card (ck, cv) lowers the score most, whatever the consequence."""
        return self.best_swap(mk, mv, [True] * self.n, ck, cv, INF, True)[1]

    def should_knock(self, my_est: float, min_opp: float, turns: int, players: int) -> bool:
        """Knock when the grid looks well below every opponent's and low in absolute terms."""
        if turns < players:
            return False
        return my_est <= min_opp - self.t.knock_margin and my_est <= self.t.knock_cap_per_card * self.n

    def wants_discard(
        self,
        mk: list[int],
        mv: list[float],
        up: Sequence[bool],
        top: tuple[int, float] | None,
        min_opp: float,
        final: bool,
    ) -> bool:
        """Whether to take the top of the discard pile rather than the stock."""
        if top is None:
            return False
        d, p = self.best_swap(mk, mv, up, top[0], top[1], min_opp, final)
        return p >= 0 and d <= -self.t.take

    def place(
        self,
        mk: list[int],
        mv: list[float],
        up: Sequence[bool],
        card: tuple[int, float],
        from_discard: bool,
        min_opp: float,
        final: bool,
    ) -> int:
        """Where to put the card in hand, or -1 to discard it."""
        d, p = self.best_swap(mk, mv, up, card[0], card[1], min_opp, final)
        if from_discard:
            return p if p >= 0 else self.any_swap(mk, mv, card[0], card[1])
        if p >= 0 and d <= -self.t.keep:
            return p
        return -1

    def flip(
        self, mk: list[int], mv: list[float], up: Sequence[bool], compulsory: bool, min_opp: float, final: bool
    ) -> int:
        """Which face-down card to turn up after discarding, or -1 to pass (when allowed)."""
        downs = [p for p in range(self.n) if not up[p]]
        if not downs:
            return -1
        if len(downs) == 1 and self.ends_on_up and not final:
            if self.score(mk, mv) < min_opp - self.t.out_margin or compulsory:
                return downs[0]
            return -1
        if self.t.flip_by_partner:  # a card beside a known one may turn out to pair
            for p in downs:
                if any(mk[q] < UNKNOWN for q in self.mates[p]):
                    return p
        return downs[0]
