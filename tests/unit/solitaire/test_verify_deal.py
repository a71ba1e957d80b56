"""docs/fairness.md's recipe for checking a solitaire deal, followed by an implementation written from its steps alone
(tests/e2e/support.py; it imports nothing of the service), against the page's worked example and the engine."""

from __future__ import annotations

import pytest

from golf.engine.solitaire.rules import PRESETS
from golf.engine.solitaire.state import Layout
from golf.v1 import solitaire_pb2
from tests.e2e.support import canonical_rules, commitment, deal_from_seed

STANDARD = solitaire_pb2.SolitaireRules(
    decks=1, columns=7, column_height=5, undo_policy=solitaire_pb2.UNDO_POLICY_UNLIMITED
)
STANDARD_TEXT = (
    '{"column_height":5,"columns":7,"decks":1,"draw_only_when_stuck":false,"queens_on_kings":false,'
    '"undo_limit":0,"undo_policy":"unlimited","wrap":false}'
)


def test_the_readme_example() -> None:
    assert canonical_rules(STANDARD) == STANDARD_TEXT
    assert commitment("golf-shuffle-v1", "example-seed", STANDARD) == (
        "bb2295f9eb618b3c3e35a47db63a3b351ec41dbd485905d291f0eeada6d8b891"
    )
    columns, start, stock = deal_from_seed(STANDARD, "example-seed")
    assert columns[0] == ["4S", "8S", "6S", "JS", "3H"] and start == "5C" and stock[:3] == ["JH", "6H", "AC"]


@pytest.mark.parametrize("seed", ["a", "example-seed", "ünïcode seed", "x" * 128])
@pytest.mark.parametrize("preset", ["standard", "two-decks"])
def test_the_recipe_deals_what_the_engine_deals(seed: str, preset: str) -> None:
    rules = PRESETS[preset]
    layout = Layout.from_seed(rules, seed)
    msg = solitaire_pb2.SolitaireRules(decks=rules.decks, columns=rules.columns, column_height=rules.column_height)
    columns, start, stock = deal_from_seed(msg, seed)
    assert columns == [[c.code for c in col] for col in layout.columns]
    assert start == layout.start.code and stock == [c.code for c in layout.stock]
