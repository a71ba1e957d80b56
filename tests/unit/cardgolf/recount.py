"""An independent recount of a grid's and a hole's score, written from the rules of Card Golf
(``docs/card-golf-rules.md``) without the engine's scorer: no keys, no running cancellation, each rule read as the
rules page states it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from golf.engine.cardgolf.cards import GCard, is_joker
from golf.engine.cardgolf.options import FourAlikeScope, KnockerBonus, KnockerPenalty
from golf.engine.cardgolf.rules import GolfRules

Grid = Sequence[GCard | None]


def _value(card: GCard | None, rules: GolfRules) -> int:
    """A card's points on its own (an empty place: 0), from the rules' tables."""
    if card is None:
        return 0
    special = dict(rules.special_values)
    if card.code in special:
        return special[card.code]
    return rules.joker_value if is_joker(card) else rules.values[card.rank - 1]


def _kind(card: GCard, rules: GolfRules) -> tuple[str, int]:
    """What makes two cards "alike": the rank, or under the like-value reading the value (jokers alike only with
    jokers). A wild jack is, for this, the jack it is."""
    if is_joker(card):
        return ("joker", 0)
    if rules.pairs_by_value:
        return ("value", _value(card, rules))
    return ("rank", card.rank)


def _wild(card: GCard, rules: GolfRules) -> bool:
    return rules.wild_one_eyed_jacks and card.rank == 11 and card.code in ("JH", "JS")


def _matches(cards: list[GCard | None], rules: GolfRules) -> bool:
    """Whether the cards of one line (or pair, or block) match: no empty place, and every card not wild alike."""
    if any(c is None for c in cards):
        return False
    kinds = {_kind(c, rules) for c in cards if c is not None and not _wild(c, rules)}
    return len(kinds) <= 1


def _blocks(rules: GolfRules) -> list[list[int]]:
    r, c = rules.rows, rules.cols
    return [
        [i * c + j, i * c + j + 1, (i + 1) * c + j, (i + 1) * c + j + 1] for i in range(r - 1) for j in range(c - 1)
    ]


def _columns(rules: GolfRules) -> list[list[int]]:
    return [[i * rules.cols + j for i in range(rules.rows)] for j in range(rules.cols)]


def _rows(rules: GolfRules) -> list[list[int]]:
    return [[i * rules.cols + j for j in range(rules.cols)] for i in range(rules.rows)]


def _groups(grid: Grid, rules: GolfRules) -> list[tuple[str, list[int]]]:
    """The matched groups that score, in the rules' order: disjoint blocks (reading order), then columns, rows,
    diagonals, adjacent pairs."""
    r, c = rules.rows, rules.cols
    out: list[tuple[str, list[int]]] = []
    if rules.block_of_four_value is not None:
        taken: set[int] = set()
        for block in _blocks(rules):
            if _matches([grid[p] for p in block], rules) and not taken & set(block):
                taken |= set(block)
                out.append(("block", block))
    lines: list[list[int]] = []
    if rules.match_columns:
        lines += _columns(rules)
    if rules.match_rows:
        lines += _rows(rules)
    if rules.match_diagonals:
        lines += [[i * c + i for i in range(r)], [i * c + (c - 1 - i) for i in range(r)]]
    if rules.match_adjacent_pairs:
        pairs = [[i * c + j, i * c + j + 1] for i in range(r) for j in range(c - 1)]
        pairs += [[i * c + j, (i + 1) * c + j] for i in range(r - 1) for j in range(c)]
        lines += sorted(pairs)
    out += [("line", line) for line in lines if _matches([grid[p] for p in line], rules)]
    return out


def four_alikes(grid: Grid, rules: GolfRules) -> int:
    """Four alike: four cards of one kind in a group of four (blocks sharing no card) or anywhere (eight is two)."""
    if rules.four_alike_scope is FourAlikeScope.ANYWHERE:
        counts = Counter(_kind(c, rules) for c in grid if c is not None)
        return sum(n // 4 for n in counts.values())
    found = 0
    taken: set[int] = set()
    for block in _blocks(rules):
        cards = [grid[p] for p in block]
        if any(c is None for c in cards) or taken & set(block):
            continue
        if len({_kind(c, rules) for c in cards if c is not None}) == 1:
            taken |= set(block)
            found += 1
    return found


def _straight(grid: Grid, rules: GolfRules) -> bool:
    n = rules.rows * rules.cols
    if len(grid) != n or any(c is None or is_joker(c) for c in grid):
        return False
    ranks = sorted(c.rank for c in grid if c is not None)
    return ranks == list(range(ranks[0], ranks[0] + n))


def recount(cards: Grid, rules: GolfRules) -> tuple[int, int]:
    """(grid total, four-alike count)."""
    grid = list(cards)
    values = [_value(c, rules) for c in grid]
    groups = _groups(grid, rules)
    removed: set[int] = set()
    bonus = 0
    for kind, group in groups:
        jokers_line = (
            kind == "line"
            and rules.joker_pair_value is not None
            and all(c is not None and is_joker(c) for c in (grid[p] for p in group))
        )
        if kind == "block":
            bonus += rules.block_of_four_value or 0
        elif jokers_line:
            bonus += rules.joker_pair_value or 0
        for p in group:
            if jokers_line or not (rules.negative_pairs_keep_value and values[p] < 0):
                removed.add(p)
    total = sum(v for p, v in enumerate(values) if p not in removed) + bonus
    fours = four_alikes(grid, rules)
    total += rules.four_alike_self * fours
    jacks = sum(1 for c in grid if c is not None and c.rank == 11)
    total += rules.four_jacks_value * (jacks // 4)
    if rules.four_in_two_columns_value and rules.match_columns:
        kinds: Counter[tuple[str, int]] = Counter()
        for column in _columns(rules):
            cards_in = [grid[p] for p in column]
            if _matches(cards_in, rules):
                plain = [c for c in cards_in if c is not None and not _wild(c, rules)]
                first = plain[0] if plain else cards_in[0]
                assert first is not None
                kinds[_kind(first, rules)] += 1
        total += rules.four_in_two_columns_value * sum(n // 2 for n in kinds.values())
    if rules.four_kings_line_value:
        for line in _rows(rules) + _columns(rules):
            if len(line) == 4 and all((c := grid[p]) is not None and c.rank == 13 for p in line):
                total += rules.four_kings_line_value
    if rules.straight_value is not None and _straight(grid, rules):
        total = rules.straight_value
    return total, fours


def _most(rules: GolfRules) -> int:
    """The most a grid scores: every card at the highest single value, nothing matched."""
    singles = list(rules.values) + [v for code, v in rules.special_values if rules.jokers or not code.startswith("X")]
    if rules.jokers:
        singles.append(rules.joker_value)
    return rules.rows * rules.cols * max(singles)


def recount_hole(
    grids: Sequence[Grid],
    rules: GolfRules,
    strokes: Sequence[int] = (),
    ender: int | None = None,
    went_out: int | None = None,
) -> tuple[list[int], list[int]]:
    """(each seat's hole score, the seats whose four alike wins the match), applying the hole rules in their order:
    grid, peek strokes, four alike against the opponents, shooting the moon, blackjack, the knocker, the first out,
    underdog, tied shame."""
    n = len(grids)
    counted = [recount(g, rules) for g in grids]
    score = [t for t, _ in counted]
    for s in range(n):
        score[s] += strokes[s] if strokes else 0
    for owner, (_, fours) in enumerate(counted):
        for s in range(n):
            if s != owner:
                score[s] += rules.four_alike_opponents * fours
    wins = [s for s, (_, fours) in enumerate(counted) if fours] if rules.four_alike_wins_match else []
    if rules.shoot_the_moon:
        most = _most(rules)
        moon = [s for s, (t, _) in enumerate(counted) if most > 0 and t >= most]
        if moon:
            score = [0 if s in moon else most for s in range(n)]
    if rules.blackjack:
        score = [0 if t == 21 else t for t in score]
    if ender is not None:
        mine = score[ender]
        others = [t for s, t in enumerate(score) if s != ender]
        if min(others) < mine:
            penalty = rules.knocker_penalty
            if penalty is KnockerPenalty.PLUS_10:
                score[ender] += 10
            elif penalty is KnockerPenalty.PLUS_20:
                score[ender] += 20
            elif penalty is KnockerPenalty.DOUBLE_PLUS_5:
                score[ender] = 2 * mine + 5
            elif penalty is KnockerPenalty.TAKE_HIGHEST:
                score[ender] = max(mine, *others)
            elif penalty is KnockerPenalty.PLUS_TWICE_PLAYERS:
                score[ender] += 2 * n
        elif rules.knocker_bonus is KnockerBonus.ZERO_IF_POSITIVE:
            score[ender] = min(mine, 0)
        elif rules.knocker_bonus is KnockerBonus.MINUS_PLAYERS:
            score[ender] -= n
    if went_out is not None:
        score[went_out] += rules.first_out_bonus
    low = min(score)
    score = [t + rules.underdog_bonus if t == low else t for t in score]
    ties = Counter(score)
    score = [t + rules.tied_penalty if ties[t] > 1 else t for t in score]
    return score, wins
