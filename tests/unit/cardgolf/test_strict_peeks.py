"""``peeks_stay_visible``: by default a seat's view keeps showing the face-down cards it has seen; in the strict game
(false) it shows one only right after the move that let the seat see it, and players remember."""

from __future__ import annotations

from dataclasses import replace

from golf.engine.cardgolf import DrawStock, Power, Reveal, UsePower, deal, parse_card, preset, view
from golf.engine.cardgolf.rules import GolfRules

FOUR = preset("four-card")


def shown(state: object, seat: int, slot: tuple[int, int]) -> bool:
    return view(state, seat).grids[slot[0]][slot[1]] is not None  # type: ignore[arg-type]


def peeked(rules: GolfRules) -> tuple[object, object]:
    """Both seats peek at their start cards, then seat 0 draws: the state after the peek and after the draw."""
    s = deal(rules, 2, "strict").apply(0, Reveal((0, 1)))
    after_peek = s
    s = s.apply(1, Reveal((0, 1))).apply(0, DrawStock())
    return after_peek, s


def test_by_default_peeked_cards_stay_visible_to_their_seat() -> None:
    after_peek, later = peeked(FOUR)
    assert shown(after_peek, 0, (0, 0)) and shown(later, 0, (0, 0)) and shown(later, 0, (0, 1))
    assert not shown(later, 1, (0, 0))


def test_in_the_strict_game_a_peeked_card_is_shown_only_right_after_the_peek() -> None:
    after_peek, later = peeked(replace(FOUR, peeks_stay_visible=False))
    assert shown(after_peek, 0, (0, 0)) and shown(after_peek, 0, (0, 1))
    assert not shown(after_peek, 1, (0, 0))
    assert not shown(later, 0, (0, 0)) and not shown(later, 0, (0, 1)), "the player must remember"
    assert (0, 0) in later.known[0]  # the server still knows what the seat has seen (bots, scoring, replays)


def test_a_power_peek_in_the_strict_game() -> None:
    rules = replace(preset("powers"), powers=(("J", Power.PEEK_OPPONENT),), peeks_stay_visible=False)
    s = deal(rules, 2, "power")
    for seat in range(2):
        if not s.ready[seat]:
            s = s.apply(seat, Reveal(tuple(range(rules.start_cards))))
    s = replace(s, stock=(*s.stock, parse_card("JS"))).apply(0, DrawStock())
    p = next(p for p in range(rules.cards_per_grid) if not s.face_up[1][p])
    seen = s.apply(0, UsePower(1, p))
    assert shown(seen, 0, (1, p))
    nxt = seen.apply(1, DrawStock())
    assert not shown(nxt, 0, (1, p))
