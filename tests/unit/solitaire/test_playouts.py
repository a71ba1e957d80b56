"""Random playouts under every preset and option: cards conserved, games end, scores match a recount."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from golf.engine.solitaire.moves import Draw, IllegalMove, PlayColumn
from golf.engine.solitaire.rules import PRESETS, SolitaireRules
from golf.engine.solitaire.state import Layout, State, Status

rules_strategy = st.builds(
    lambda base, wrap, qok, stuck: replace(PRESETS[base], wrap=wrap, queens_on_kings=qok, draw_only_when_stuck=stuck),
    st.sampled_from(sorted(PRESETS)),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)


def recount(state: State) -> int:
    """Score from first principles: cards still in columns, else minus the untouched stock."""
    in_columns = sum(len(col) for col in state.layout.columns) - (len(state.pile) - 1 - state.turned)
    return in_columns if in_columns else -(len(state.layout.stock) - state.turned)


def independent_fits(rules: SolitaireRules, card: int, top: int) -> bool:
    if abs(card - top) == 1:
        return top != 13 or rules.queens_on_kings or rules.wrap
    return rules.wrap and {card, top} == {1, 13}


@settings(max_examples=150, deadline=None)
@given(rules=rules_strategy, seed=st.text(min_size=1, max_size=12), choice_seed=st.integers(0, 2**32))
def test_random_playout(rules: SolitaireRules, seed: str, choice_seed: int) -> None:
    chooser = random.Random(choice_seed)
    state = State.initial(rules, Layout.from_seed(rules, seed))
    everything = Counter(state.layout.all_cards())
    steps = 0
    while state.status is Status.IN_PROGRESS:
        moves = state.legal_moves()
        assert moves, "a game in progress always has a move"
        # Legal moves are exactly the moves the rules allow.
        for col in range(rules.columns):
            front = state.front(col)
            allowed = front is not None and independent_fits(rules, front.rank, state.top.rank)
            assert allowed == any(isinstance(m, PlayColumn) and m.column == col for m in moves)
        move = chooser.choice(moves)
        state = state.apply(move)
        steps += 1
        assert steps <= 52 * rules.decks, "every game ends"
        # Every card is in a column, on the pile or in the stock, exactly once.
        left = [c for col, h in zip(state.layout.columns, state.heights, strict=True) for c in col[:h]]
        in_stock = list(state.layout.stock[state.turned :])
        assert Counter(left) + Counter(state.pile) + Counter(in_stock) == everything
        assert state.score == recount(state)
    assert state.legal_moves() == []
    assert (state.status is Status.WON) == (state.cards_in_columns == 0)
    if state.status is Status.LOST:
        assert state.stock_left == 0
        try:
            state.apply(Draw())
        except IllegalMove:
            pass
        else:
            raise AssertionError("a lost game accepted a move")
