"""How a bot values a power move (``UsePower``) from its seat's view: a rough gain in points, where discarding the
card instead gains 0. The gain is "my score down" plus "an opponent's score up, shared among the opponents", plus a
little for what a look teaches; moves a bot cannot value get ``None`` and are not chosen (unless nothing else is
legal, see ``decide.fallback_move``)."""

from __future__ import annotations

from golf.engine.cardgolf.bots.perception import Perception
from golf.engine.cardgolf.grid import geometry
from golf.engine.cardgolf.moves import UsePower
from golf.engine.cardgolf.options import Power
from golf.engine.cardgolf.scoring import UNKNOWN
from golf.engine.cardgolf.view import SeatView

LOOK = 1.0
"""What a look at one of my own face-down cards is worth (it turns a guess into a fact the next swaps use)."""
LOOK_OPPONENT = 0.4
"""What a look at an opponent's face-down card is worth (a better estimate of when to knock)."""


def power_named(move: UsePower, held_power: Power | None) -> Power | None:
    """The power ``move`` uses: the one it names (a card granting a choice), else the card's own."""
    if move.power is not None:
        try:
            return Power(move.power)
        except ValueError:
            return None
    return held_power


def power_gain(
    view: SeatView, pc: Perception, move: UsePower, power: Power | None, card: tuple[int, float]
) -> float | None:
    """The rough gain of ``move`` for the viewer (``None``: not valued). ``card`` is the power card's key and
    points (it goes to an opponent's grid with the give and trade powers)."""
    seat = pc.seat
    mine_k, mine_v = pc.keys[seat], pc.vals[seat]
    share = 1.0 / max(1, view.players - 1)
    target = move.seat
    pos = move.position
    own = move.own
    if power is None:
        return None
    if power is Power.PEEK_OWN:
        if pos is None or pos >= len(mine_k):
            return None
        return LOOK if mine_k[pos] >= UNKNOWN else 0.0
    if power is Power.PEEK_OPPONENT:
        if target is None or pos is None or pos >= len(pc.keys[target]):
            return None
        return LOOK_OPPONENT if pc.keys[target][pos] >= UNKNOWN else 0.0
    if power is Power.BLIND_SWAP:
        if target is None or pos is None or own is None:
            return None
        if pos >= len(pc.vals[target]) or own >= len(mine_v):
            return None
        mine = _score_with(pc, seat, own, pc.keys[target][pos], pc.vals[target][pos])
        theirs = _score_with(pc, target, pos, mine_k[own], mine_v[own])
        return (pc.estimates[seat] - mine) + share * (theirs - pc.estimates[target])
    if power is Power.GIVE_TO_OPPONENT:
        if target is None or pos is None or pos >= len(pc.vals[target]):
            return None
        theirs = _score_with(pc, target, pos, card[0], card[1])
        return share * (theirs - pc.estimates[target])
    if power is Power.TRADE_FOR_UP_CARD:
        if target is None or pos is None or own is None:
            return None
        if pos >= len(pc.vals[target]) or own >= len(mine_v):
            return None
        mine = _score_with(pc, seat, own, pc.keys[target][pos], pc.vals[target][pos])
        theirs = _score_with(pc, target, pos, card[0], card[1])
        return (pc.estimates[seat] - mine) + share * (theirs - pc.estimates[target])
    if power is Power.SWAP_LINES:
        if target is None or pos is None or own is None:
            return None
        swapped = _swapped_lines_score(view, pc, target, pos, own)
        return None if swapped is None else share * (swapped - pc.estimates[target])
    if power is Power.SHUFFLE_OPPONENT:
        if target is None:
            return None
        # It undoes what the opponent knows of its face-down cards: worth something against a leader only.
        leading = pc.estimates[target] <= pc.estimates[seat]
        return 0.3 * share if leading else -0.1
    if power is Power.TURN_UP_OR_DOWN:
        if target is not None and pos is not None and pos < len(pc.keys[target]):
            return LOOK_OPPONENT * 0.5 if pc.keys[target][pos] >= UNKNOWN else 0.0
        return None  # turning one of my own cards face down hides nothing I do not know
    if power is Power.DRAW_TWO:
        return 1.0  # three cards to choose from instead of one
    if power is Power.SHIELD:
        if pos is None or pos >= len(mine_v):
            return None
        # Protect a known low card from opponents' swaps.
        return 0.4 if mine_k[pos] < UNKNOWN and mine_v[pos] <= 1 else 0.0
    if power is Power.ADD_OR_REMOVE:
        if target is not None:
            return share * pc.ev * 0.8  # an opponent gets a card it cannot see
        if pos is None or pos >= len(mine_v):
            return None
        return _removal_gain(pc, seat, pos)
    return None


def _score_with(pc: Perception, owner: int, pos: int, key: int, value: float) -> float:
    keys, vals = list(pc.keys[owner]), list(pc.vals[owner])
    keys[pos], vals[pos] = key, value
    return pc.score(keys, vals)


def _removal_gain(pc: Perception, owner: int, pos: int) -> float:
    keys, vals = list(pc.keys[owner]), list(pc.vals[owner])
    keys[pos], vals[pos] = UNKNOWN + 64 + pos, 0.0  # an empty place: matches nothing, scores 0
    return pc.estimates[owner] - pc.score(keys, vals)


def _swapped_lines_score(view: SeatView, pc: Perception, owner: int, a: int, b: int) -> float | None:
    rules = view.rules
    g = geometry(rules.rows, rules.cols)
    lines = list(g.row_lines) + list(g.col_lines)
    if not (0 <= a < len(lines) and 0 <= b < len(lines)) or len(lines[a]) != len(lines[b]):
        return None
    keys, vals = list(pc.keys[owner]), list(pc.vals[owner])
    if max(max(lines[a]), max(lines[b])) >= len(keys):
        return None
    for p, q in zip(lines[a], lines[b], strict=True):
        keys[p], keys[q] = keys[q], keys[p]
        vals[p], vals[q] = vals[q], vals[p]
    return pc.score(keys, vals)
