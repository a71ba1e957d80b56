"""Exact solver for Golf solitaire, for every option of :class:`SolitaireRules`.

Positions are ``(column heights, stock cards turned, pile top)``. Only the top card's *rank* matters (suits are
ignored by every rule), so it is the whole of the pile in the key, and a top on which no card left in the columns
can ever go is keyed as "dead" (only a draw can follow). The key is packed into one ``int``; two-deck deals with
duplicate cards need nothing special.

The search is a recursive depth-first search on mutable arrays, with every position stored with a proven lower
bound on the cards it must leave in the columns (a transposition table). First it asks "can this be won?" (cut
every position whose bound is one card or more). When it cannot, a branch and bound search, reusing that table,
finds the line leaving the fewest cards: the best line so far is the bound to beat, and it stops at once when a
line reaches the lower bound already proven for the start.

Lower bounds (never above the truth, so nothing that could do better is ever cut):

* **Unreachable ranks.** A run of plays starts on a starter (the live pile top or a stock card still to come on
  which something fits) and goes from rank to adjacent rank. Column cards whose rank cannot be reached from any
  starter through ranks still in the columns can never be played; they and every card behind them in their
  column stay (repeated until nothing changes).
* **Predecessor matching.** Every column card that is played goes straight onto a card of a rank it fits on: the
  pile top, a stock card still to come, or another column card, and no card takes two. Column cards are matched,
  by rank, to the cards that could precede them; what the maximum matching leaves unmatched stays in the
  columns. Demand and supply alternate along two paths of ranks (odd and even; this includes the rule that a run
  alternates odd and even ranks), or around one cycle of 26 nodes with wrap, where it is cut at its smallest node.
* **Kings end runs.** When nothing goes on a king, each king played ends its run, so no more kings can be played
  than there are starters left.

When no card is stuck, the bound depends only on the counts per rank, the stock position and the top, so it is
cached on those.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from golf.engine.solitaire.moves import Draw, Move, PlayColumn
from golf.engine.solitaire.state import State

if TYPE_CHECKING:
    from golf.engine.solitaire._search import Search

CompiledSearch: type[Search] | None
try:
    from golf.engine.solitaire._search import Search as CompiledSearch
except ImportError:  # not built: the pure Python search below does the same work, more slowly
    CompiledSearch = None

_DRAW = -1
_INF = 1 << 30
_STATUS_BUDGET = 1
_STATUS_STOPPED = 2
STOP_CHECK_EVERY = 4096
"""Positions searched between two calls of a search's ``stop`` function (a few milliseconds of search)."""


class _BudgetExceeded(Exception):
    """Raised inside the search when the position budget is used up."""


class SearchStopped(Exception):
    """The search was stopped by its ``stop`` function (nobody wants its answer any more): there is no result."""


def _never() -> bool:
    return False


@dataclass(frozen=True, slots=True)
class SolveResult:
    """What the solver found for a position.

    ``winnable`` is ``True`` or ``False`` when the search was exhaustive and ``None`` when the budget ran out
    first (never read that as "no"). ``line`` is a winning line when ``winnable`` is true; otherwise the line
    leaving the fewest cards (when ``winnable`` is false) or the best line seen (when the budget ran out). Its
    moves name their cards and can be given to :meth:`State.apply` one after the other, and it ends the game.
    """

    winnable: bool | None
    line: tuple[Move, ...]
    positions: int
    """Positions searched (expanded), over every round of the search."""
    cards_left: int
    """Cards the line leaves in the columns (0 for a win)."""
    stock_left: int
    """Stock cards not turned at the end of the line."""
    fewest_proven: bool
    """Whether ``cards_left`` is proven to be the fewest possible; false when the budget ran out first."""
    lower_bound: int
    """A proven lower bound on the cards any line leaves (equal to ``cards_left`` when ``fewest_proven``)."""
    budget_exceeded: bool = False
    """Whether the position budget ran out before the search ended."""

    @property
    def hint(self) -> Move | None:
        """The first move of the line: the suggested next move, or ``None`` when the game is over."""
        return self.line[0] if self.line else None

    @property
    def score(self) -> int:
        """The deal's score at the end of ``line``: cards left, or minus the stock left after a win."""
        return self.cards_left if self.cards_left else -self.stock_left


class _Search:
    """The search over one position: tables built once, then depth-first searches on mutable arrays."""

    def __init__(
        self, state: State, budget: int | None, stop: Callable[[], bool] | None = None, compiled: bool = True
    ) -> None:
        rules = state.rules
        layout = state.layout
        self.state = state
        self.budget = budget if budget is not None else _INF
        self.stop = stop if stop is not None else _never
        self.stop_every = STOP_CHECK_EVERY if stop is not None else _INF
        self.positions = 0
        # colranks[c][h]: rank of column c's front card when the column holds h cards (index 0 unused).
        self.colranks = [[0] + [card.rank for card in col] for col in layout.columns]
        self.stockranks = [card.rank for card in layout.stock[state.turned :]]
        self.heights = list(state.heights)
        self.top0 = state.top.rank
        self.stuck_only = rules.draw_only_when_stuck
        self.fits = fits = rules.fits
        # fitranks[t]: ranks that may go on a top of rank t.
        self.fitranks: list[tuple[int, ...]] = [()] + [
            tuple(r for r in range(1, 14) if fits(r, t)) for t in range(1, 14)
        ]
        self.fitmask = [sum(1 << r for r in fr) for fr in self.fitranks]
        self.memo: dict[int, int] = {}
        self.bound_cache: dict[int, int] = {}
        self.best_left = _INF
        self.best_path: list[int] = []
        self.compiled = self._compiled() if compiled else None

    def _compiled(self) -> Search | None:
        """The compiled search of this position, when it is built and the position's keys fit in its 64 bits."""
        if CompiledSearch is None:
            return None
        try:
            return CompiledSearch(
                self.colranks,
                self.stockranks,
                self.heights,
                self.top0,
                self.fitmask,
                self.stuck_only,
                self.budget,
                self.stop_every,
                self.stop,
            )
        except ValueError:  # too large for it: the pure Python search below
            return None

    def run(self, k: int, floor: int) -> int:
        """``run_python``'s search, compiled when it can be (the same positions in the same order)."""
        fast = self.compiled
        if fast is None:
            return self.run_python(k, floor)
        value, status = fast.run(k, floor)
        self.positions = fast.positions
        self.best_left = fast.best_left
        self.best_path = fast.best_path
        if status == _STATUS_BUDGET:
            raise _BudgetExceeded
        if status == _STATUS_STOPPED:
            raise SearchStopped
        return int(value)

    def run_python(self, k: int, floor: int) -> int:
        """Depth-first search for a line leaving fewer than ``k`` cards.

        A line leaving ``floor`` cards or fewer (a proven lower bound) ends the search, which returns -1. Any
        other line found lowers ``k`` to its cards left and the search goes on (branch and bound). A search that
        ends without a line leaving ``floor`` or fewer returns a proven lower bound on the cards left: at least
        ``k`` when no line was found, else the fewest cards left. The best line
        is kept in ``best_path`` / ``best_left``; ``memo`` keeps a proven lower bound for every position seen.
        """
        ncol = len(self.colranks)
        colranks = self.colranks
        stockranks = self.stockranks
        nstock = len(stockranks)
        heights = self.heights[:]
        fitranks = self.fitranks
        fitmask = self.fitmask
        fits = self.fits
        stuck_only = self.stuck_only
        budget = self.budget
        stop = self.stop
        stop_every = self.stop_every
        memo = self.memo
        hbits = max(max(heights, default=0), 1).bit_length()
        tbits = max(nstock, 1).bit_length()
        units = [1 << (hbits * c) for c in range(ncol)]

        colcnt = [0] * 15
        for c in range(ncol):
            for h in range(1, heights[c] + 1):
                colcnt[colranks[c][h]] += 1
        present = 0
        for r in range(1, 14):
            if colcnt[r]:
                present |= 1 << r
        frontcols = [0] * 15
        for c in range(ncol):
            if heights[c]:
                frontcols[colranks[c][heights[c]]] |= 1 << c
        bitcol = {1 << c: c for c in range(ncol)}

        # supply[t][top][r]: cards of rank r that may precede a column card, from the stock (index t on) and the
        # top (a live top rank, or 0); the column cards are added at each position.
        stock_rows = [[0] * 15 for _ in range(nstock + 1)]
        for i in range(nstock - 1, -1, -1):
            stock_rows[i][:] = stock_rows[i + 1]
            stock_rows[i][stockranks[i]] += 1
        supply: list[list[list[int]]] = []
        for row in stock_rows:
            per_top = [row]
            for top in range(1, 14):
                with_top = row[:]
                with_top[top] += 1
                per_top.append(with_top)
            supply.append(per_top)
        # Ranks of stock cards, from index t on, on which a card may go (they can start a run); their count.
        open_mask = [sum(1 << r for r in range(1, 14) if row[r] and fitmask[r]) for row in stock_rows]
        open_count = [sum(row[r] for r in range(1, 14) if fitmask[r]) for row in stock_rows]
        kings_sink = not fitmask[13]
        # Ranks q whose card may go on a card of rank q - 1 / q + 1, as masks and per rank.
        down_ok = [False] + [q > 1 and fits(q, q - 1) for q in range(1, 14)] + [False]
        up_ok = [False] + [q < 13 and fits(q, q + 1) for q in range(1, 14)] + [False]
        down_mask = sum(1 << q for q in range(1, 14) if down_ok[q])
        up_mask = sum(1 << q for q in range(1, 14) if up_ok[q])
        ace_on_king = fits(1, 13)
        king_on_ace = fits(13, 1)
        cyclic = ace_on_king and king_on_ace and all(down_ok[q] and up_ok[q] for q in range(2, 13))
        cycle_nodes = [(j % 2 == half, j + 1) for half in (0, 1) for j in range(13)]
        wrap_mask_a = 2 if ace_on_king else 0
        wrap_mask_k = 1 << 13 if king_on_ace else 0

        # The bound depends on the column cards' counts per rank: packed into ``cntkey``.
        cbits = max(max(colcnt), 1).bit_length()
        cunits = [1 << (cbits * r) for r in range(15)]
        cntkey = sum(colcnt[r] << (cbits * r) for r in range(15))
        bound_cache = self.bound_cache

        best_left = self.best_left
        path: list[int] = []
        best_path = self.best_path
        positions = self.positions
        # One comparison per position covers both the budget and the stop check: ``limit`` is the nearer of the two.
        limit = min(budget, positions + stop_every)

        def bound(t: int, ctop: int, bkey: int) -> int:
            """Lower bound on the cards left: unreachable ranks, kings that end runs, the predecessor matching."""
            st = supply[t][ctop]
            cnt = colcnt
            pres = present
            stuck = 0
            starters = open_mask[t] | (1 << ctop if ctop else 0)
            while True:
                # Ranks of column cards reachable from the starters through column cards.
                reach = 0
                src = starters
                while src:
                    nxt = (((src << 1) & down_mask) | ((src >> 1) & up_mask)) & pres & ~reach
                    if wrap_mask_a | wrap_mask_k:
                        nxt |= (((src >> 12) & wrap_mask_a) | ((src << 12) & wrap_mask_k)) & pres & ~reach
                    reach |= nxt
                    src = nxt
                dead = pres & ~reach
                if not dead:
                    break
                bkey = -1
                # Cards of an unreachable rank and all behind them stay; they no longer need or give a predecessor.
                if cnt is colcnt:
                    cnt = colcnt[:]
                    cut = [0] * ncol
                for c in range(ncol):
                    cr = colranks[c]
                    for h in range(heights[c], cut[c], -1):
                        if dead >> cr[h] & 1:
                            stuck += h - cut[c]
                            for i in range(cut[c] + 1, h + 1):
                                cnt[cr[i]] -= 1
                            cut[c] = h
                            break
                pres = 0
                for r in range(1, 14):
                    if cnt[r]:
                        pres |= 1 << r
            kings_over = 0
            if kings_sink:
                kings_over = cnt[13] - open_count[t] - (1 if ctop else 0)
            unmatched = 0
            r_prev = 0
            r_cur = cnt[1] + st[1]
            for q in range(1, 14):
                s_next = cnt[q + 1] + st[q + 1]
                d = cnt[q]
                if d:
                    if r_prev and down_ok[q]:
                        d -= r_prev if r_prev < d else d
                    if d and s_next and up_ok[q]:
                        u = s_next if s_next < d else d
                        d -= u
                        s_next -= u
                    unmatched += d
                r_prev = r_cur
                r_cur = s_next
            if unmatched and cyclic:
                # With wrap, aces and kings precede each other too: demand and supply alternate around one
                # cycle of 26 nodes (D1 S2 .. D13 S1 D2 .. S13). Cut it at its smallest node: greedy on the
                # path left is exact, and the cut node matches at most its capacity more.
                caps = [cnt[r] if is_d else cnt[r] + st[r] for is_d, r in cycle_nodes]
                low = min(caps)
                z = caps.index(low)
                matched = low
                carry = 0
                for j in range(z + 1, z + 26):
                    cap = caps[j % 26]
                    if carry:
                        u = carry if carry < cap else cap
                        matched += u
                        cap -= u
                    carry = cap
                unmatched = sum(cnt) - matched
                if unmatched < 0:
                    unmatched = 0
            if kings_over > unmatched:
                # Nothing goes on a king, so each king played ends a run, and a run needs a starter.
                unmatched = kings_over
            if bkey >= 0:
                # Without stuck cards the bound depends only on the counts per rank, the stock and the top.
                bound_cache[bkey] = unmatched
            return stuck + unmatched

        def dfs(top: int, t: int, hkey: int, left: int) -> int:
            nonlocal present, positions, best_left, best_path, k, cntkey, limit
            if not left:
                best_left = 0
                best_path = path[:]
                return -1
            ctop = top if fitmask[top] & present else 0
            key = (((hkey << tbits) | t) << 4) | ctop
            known = memo.get(key)
            if known is not None and known >= k:
                return known
            positions += 1
            if positions > limit:
                if positions > budget:
                    raise _BudgetExceeded
                if stop():
                    raise SearchStopped
                limit = min(budget, positions + stop_every)
            bkey = (((cntkey << tbits) | t) << 4) | ctop
            lb = bound_cache.get(bkey)
            if lb is None:
                lb = bound(t, ctop, bkey)
            if lb >= k:
                memo[key] = lb
                return lb
            value = _INF
            cols = 0
            if ctop:
                for r in fitranks[ctop]:
                    cols |= frontcols[r]
            moved = cols != 0
            while cols:
                bit = cols & -cols
                cols ^= bit
                c = bitcol[bit]
                h = heights[c]
                cr = colranks[c]
                r = cr[h]
                heights[c] = h - 1
                frontcols[r] ^= bit
                if h > 1:
                    frontcols[cr[h - 1]] |= bit
                n = colcnt[r] - 1
                colcnt[r] = n
                if not n:
                    present ^= 1 << r
                cntkey -= cunits[r]
                path.append(c)
                got = dfs(r, t, hkey - units[c], left - 1)
                path.pop()
                if not n:
                    present |= 1 << r
                colcnt[r] = n + 1
                cntkey += cunits[r]
                if h > 1:
                    frontcols[cr[h - 1]] ^= bit
                frontcols[r] |= bit
                heights[c] = h
                if got < 0:
                    return -1
                if got < value:
                    value = got
            if t < nstock and not (moved and stuck_only):
                path.append(_DRAW)
                got = dfs(stockranks[t], t + 1, hkey, left)
                path.pop()
                if got < 0:
                    return -1
                if got < value:
                    value = got
            elif not moved:
                # The game is over here.
                if left < best_left:
                    best_left = left
                    best_path = path[:]
                if left < k:
                    if left <= floor:
                        return -1
                    k = left
                value = left
            if value < lb:
                value = lb
            memo[key] = value
            return value

        hkey0 = 0
        for c in range(ncol):
            hkey0 |= heights[c] << (hbits * c)
        left0 = sum(heights)
        old_limit = sys.getrecursionlimit()
        need = left0 + nstock + 200
        if need > old_limit:
            sys.setrecursionlimit(need)
        try:
            return dfs(self.top0, 0, hkey0, left0)
        finally:
            self.positions = positions
            self.best_left = best_left
            self.best_path = best_path
            if need > old_limit:
                sys.setrecursionlimit(old_limit)

    def moves_of(self, codes: list[int]) -> tuple[tuple[Move, ...], int, int]:
        """Engine moves for line codes, and the cards and stock left at its end."""
        state = self.state
        moves: list[Move] = []
        heights = list(state.heights)
        turned = state.turned
        for code in codes:
            if code == _DRAW:
                moves.append(Draw(state.layout.stock[turned]))
                turned += 1
            else:
                h = heights[code]
                moves.append(PlayColumn(code, state.layout.columns[code][h - 1]))
                heights[code] = h - 1
        return tuple(moves), sum(heights), len(state.layout.stock) - turned


def _finish_line(state: State, moves: tuple[Move, ...]) -> tuple[Move, ...]:
    """Extend a line that stops before the game's end by turning the stock (playing when the rules force it)."""
    end = state.replay(list(moves))
    extra: list[Move] = []
    while True:
        legal = end.legal_moves()
        if not legal:
            return moves + tuple(extra)
        move = legal[-1] if isinstance(legal[-1], Draw) else legal[0]
        extra.append(move)
        end = end.apply(move)


def solve(
    state: State,
    budget: int | None = None,
    *,
    fewest_cards: bool = True,
    stop: Callable[[], bool] | None = None,
    compiled: bool = True,
) -> SolveResult:
    """Solve ``state`` exactly: can it still be won? Gives a winning line, or the line leaving the fewest cards.

    ``budget`` caps the positions searched; when it runs out the result has ``winnable=None`` (or ``False``
    when that was already proven) and the best line seen so far, played out to the end of the game. With
    ``fewest_cards=False`` only the verdict is exact: a position that cannot be won gets the best line the
    verdict search happened to see (``fewest_proven`` says whether it is known to be the best).

    ``stop`` is asked at the start and then every ``STOP_CHECK_EVERY`` positions whether the answer is still
    wanted; when it says no, the search ends at once with ``SearchStopped``.

    ``compiled=False`` uses the pure Python search even when the compiled one is built (the reference: both give
    the same result, positions included).
    """
    if stop is not None and stop():
        raise SearchStopped
    search = _Search(state, budget, stop, compiled)
    winnable: bool | None = None
    proven = 0
    exceeded = False
    try:
        got = search.run(1, 0)
        winnable = got < 0
        proven = 0 if winnable else got
        if not winnable and fewest_cards and search.best_left > proven:
            got = search.run(search.best_left, proven)
            proven = search.best_left if got < 0 else got
    except _BudgetExceeded:
        exceeded = True
    moves, cards, stock_left = search.moves_of(search.best_path)
    if search.best_left == _INF:
        # No line reached the end of the game (the search was cut short): play this one out.
        moves = _finish_line(state, moves)
        moves, cards, stock_left = search.moves_of([_DRAW if isinstance(m, Draw) else m.column for m in moves])
    return SolveResult(winnable, moves, search.positions, cards, stock_left, cards == proven, proven, exceeded)


def hint(state: State, budget: int | None = None) -> Move | None:
    """The first move of a winning line (or of the line leaving the fewest cards), ``None`` when the game is over."""
    return solve(state, budget).hint
