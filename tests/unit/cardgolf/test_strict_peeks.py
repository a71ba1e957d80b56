"""``peeks_stay_visible``: by default a seat's view keeps showing the face-down cards it has seen; in the strict game
(false) it shows one only from the move that let the seat see it until the seat's next move, and players remember.
A peek always shows its card, even one the seat saw before."""

from __future__ import annotations

from dataclasses import replace

from golf.engine.cardgolf import (
    Discard,
    DrawStock,
    HoleState,
    PeekStroke,
    Power,
    Reveal,
    Swap,
    UsePower,
    deal,
    parse_card,
    preset,
    view,
)
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
    p = next(p for p in range(rules.cards_per_grid) if not s.face_up[1][p] and (1, p) not in s.known[1])
    seen = s.apply(0, UsePower(1, p))
    assert shown(seen, 0, (1, p)) and not shown(seen, 1, (1, p))
    nxt = seen.apply(1, DrawStock())
    assert shown(nxt, 0, (1, p)), "shown until the peeker's next move (the answer to a peek comes after bots move)"
    later = nxt.apply(1, Discard()).apply(0, DrawStock())
    assert not shown(later, 0, (1, p))


STROKE = replace(FOUR, peek_stroke=1, peeks_stay_visible=False)


def test_a_peek_stroke_shows_a_card_the_seat_saw_before() -> None:
    # Seed 004's four-card house rule: "players may take a stroke (gain one point) to look at one of these cards
    # again". The look shows the card, though the seat peeked at it at the start.
    s = deal(STROKE, 2, "again").apply(0, Reveal((0, 1))).apply(1, Reveal((0, 1)))
    s = s.apply(0, DrawStock()).apply(0, Discard()).apply(1, DrawStock()).apply(1, Discard())
    assert not shown(s, 0, (0, 0)) and (0, 0) in s.known[0]
    again = s.apply(0, PeekStroke(0))
    assert again.strokes[0] == 1 and shown(again, 0, (0, 0)) and not shown(again, 1, (0, 0))
    assert view(again, 0).grids[0][0] == again.grids[0][0]
    assert shown(again.apply(1, DrawStock()), 0, (0, 0))
    assert not shown(again.apply(1, DrawStock()).apply(1, Discard()).apply(0, DrawStock()), 0, (0, 0))


def _powers_strict(power: Power) -> HoleState:
    rules = replace(preset("powers"), powers=(("J", power), ("T", power)), peeks_stay_visible=False)
    s = deal(rules, 2, "again")
    for seat in range(2):
        if not s.ready[seat]:
            s = s.apply(seat, Reveal(tuple(range(rules.start_cards))))
    return s


def _draw(state: HoleState, code: str) -> HoleState:
    return replace(state, stock=(*state.stock, parse_card(code))).apply(state.turn, DrawStock())


def test_the_jack_peek_shows_a_card_the_seat_knew() -> None:
    s = _powers_strict(Power.PEEK_OWN)
    s = _draw(s, "JS").apply(0, Discard())
    s = _draw(s, "3C").apply(1, Discard())
    assert not shown(s, 0, (0, 0)) and (0, 0) in s.known[0]  # seen at the start, not shown now
    again = _draw(s, "JH").apply(0, UsePower(position=0))
    assert shown(again, 0, (0, 0)) and view(again, 0).grids[0][0] == again.grids[0][0]


def test_the_ten_peek_shows_an_opponent_card_seen_before() -> None:
    s = _powers_strict(Power.PEEK_OPPONENT)
    p = next(p for p in range(6) if not s.face_up[1][p])
    s = _draw(s, "TS").apply(0, UsePower(1, p))
    s = _draw(s, "3C").apply(1, Discard())
    s = _draw(s, "4C").apply(0, Discard())
    s = _draw(s, "3D").apply(1, Discard())
    assert not shown(s, 0, (1, p)) and (1, p) in s.known[0]
    again = _draw(s, "TH").apply(0, UsePower(1, p))
    assert shown(again, 0, (1, p)) and not shown(again, 1, (1, p))


def test_a_card_swapped_face_down_where_the_seat_knew_the_old_one_is_shown() -> None:
    s = _powers_strict(Power.PEEK_OWN)  # powers: a card swapped in lies face down
    assert (0, 0) in s.known[0]
    s = _draw(s, "3C").apply(0, Discard())
    s = _draw(s, "4C").apply(1, Discard())
    swapped = _draw(s, "5D").apply(0, Swap(0))
    assert not swapped.face_up[0][0] and view(swapped, 0).grids[0][0] == parse_card("5D")
