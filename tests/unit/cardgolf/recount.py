"""An independent recount of a grid's score, written from the rules of Card Golf without the engine's scorer."""

from __future__ import annotations

from collections import Counter

from golf.engine.cardgolf.cards import GCard, is_joker
from golf.engine.cardgolf.options import FourAlikeScope
from golf.engine.cardgolf.rules import GolfRules


def _lines(rules: GolfRules) -> list[tuple[str, list[int]]]:
    r, c = rules.rows, rules.cols
    out: list[tuple[str, list[int]]] = []
    if rules.block_of_four_value is not None:
        for i in range(r - 1):
            for j in range(c - 1):
                out.append(("block", [i * c + j, i * c + j + 1, (i + 1) * c + j, (i + 1) * c + j + 1]))
    if rules.match_columns:
        out += [("line", [i * c + j for i in range(r)]) for j in range(c)]
    if rules.match_rows:
        out += [("line", [i * c + j for j in range(c)]) for i in range(r)]
    if rules.match_diagonals:
        out.append(("line", [i * c + i for i in range(r)]))
        out.append(("line", [i * c + (c - 1 - i) for i in range(r)]))
    if rules.match_adjacent_pairs:
        pairs = [[i * c + j, i * c + j + 1] for i in range(r) for j in range(c - 1)]
        pairs += [[i * c + j, (i + 1) * c + j] for i in range(r - 1) for j in range(c)]
        out += [("line", p) for p in sorted(pairs)]
    return out


def recount(cards: list[GCard], rules: GolfRules) -> tuple[int, int]:
    """(grid total, four-alike count)."""
    wild = [rules.is_wild(x) for x in cards]
    values = [rules.card_value(x) for x in cards]
    zeroed: set[int] = set()
    extra = 0
    for kind, line in _lines(rules):
        ranks = {cards[p].rank for p in line if not wild[p]}
        if len(ranks) > 1:
            continue
        zeroed.update(line)
        if kind == "block":
            extra += rules.block_of_four_value or 0
        elif rules.joker_pair_value is not None and all(is_joker(cards[p]) for p in line):
            extra += rules.joker_pair_value
    fours = 0
    if rules.four_alike_scope is FourAlikeScope.ANYWHERE:
        # Four alike goes by rank: a wild one-eyed jack is still a jack (being wild only lets it match others).
        counts = Counter(x.rank for x in cards)
        fours = sum(n // 4 for n in counts.values())
    else:
        c = rules.cols
        for i in range(rules.rows - 1):
            for j in range(c - 1):
                block = [i * c + j, i * c + j + 1, (i + 1) * c + j, (i + 1) * c + j + 1]
                if len({cards[p].rank for p in block}) == 1:
                    fours += 1
    total = sum(v for p, v in enumerate(values) if p not in zeroed) + extra + rules.four_alike_self * fours
    return total, fours
