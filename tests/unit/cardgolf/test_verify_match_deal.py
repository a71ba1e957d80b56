"""docs/fairness.md's procedure for checking a card Golf match's deals, implemented here from its steps alone (this
module's helpers import nothing of the service), against the page's worked example and against the engine."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from golf.engine.cardgolf.match import deal_hole
from golf.engine.cardgolf.presets import PRESETS
from golf.engine.cardgolf.state import HoleState
from golf.engine.shuffle import shuffled
from tests.shuffle_spec import golf_shuffle_v1

RANKS = "A23456789TJQK"
SUITS = "CDHS"

# -- the procedure, from the page ------------------------------------------------------------------------------


def commitment(seed: str, rules_text: str) -> str:
    return hashlib.sha256(f"golf-shuffle-v1\n{seed}\n{rules_text}".encode()).hexdigest()


def deck(rules: dict[str, Any], players: int) -> list[str]:
    packs = rules["decks"]
    if packs == 0:
        packs = 1 if players <= 4 and rules["rows"] * rules["cols"] != 9 else 2
    cards = [rank + suit for _ in range(packs) for suit in SUITS for rank in RANKS]
    return cards + ["XB" if k % 2 == 0 else "XR" for k in range(rules["jokers"])]


def deal(rules_text: str, players: int, match_seed: str, hole: int) -> dict[str, Any]:
    """Hole ``hole`` (0-based): each seat's grid (positions 0 .. n-1), the pile's first card, the stock in drawing
    order and the seat that plays first."""
    rules = json.loads(rules_text)
    cards = golf_shuffle_v1(deck(rules, players), f"{match_seed}:hole:{hole}")
    n = rules["rows"] * rules["cols"]
    grids = [[cards[s + i * players] for i in range(n)] for s in range(players)]
    return {"grids": grids, "pile": cards[players * n], "stock": cards[players * n + 1 :], "first": hole % players}


# -- checks ----------------------------------------------------------------------------------------------------
def engine_view(hole: HoleState) -> dict[str, Any]:
    return {
        "grids": [[c.code for c in grid] for grid in hole.grids],
        "pile": hole.discard[0].code,
        "stock": [c.code for c in reversed(hole.stock)],  # the engine keeps the stock's top last
        "first": hole.first,
    }


def test_the_readme_example() -> None:
    text = PRESETS["six-card"].with_options(holes=9).canonical()
    assert text.startswith('{"block_of_four_value":null,"cols":3,"decks":0,') and '"holes":9' in text
    assert commitment("example-match", text) == "fabbee7ac314782d3a4519e81c488a7adf66f55d3fa572fc6d651b76ef46a423"
    first = deal(text, 2, "example-match", 0)
    assert [" ".join(g) for g in first["grids"]] == ["8C 4C 2C 7H QC 3C", "JD TD 6H QH 3D JS"]
    assert first["pile"] == "AH" and first["stock"][0] == "3S" and first["first"] == 0
    second = deal(text, 2, "example-match", 1)
    assert " ".join(second["grids"][0]) == "TC 7H 9S 6H KS 6S" and second["pile"] == "KD" and second["first"] == 1


_TABLES = [(2, "a"), (3, "ünïcode seed"), (5, "x" * 64), (8, "eight")]
_SEATABLE = [
    (preset, players, seed)
    for preset in sorted(PRESETS)
    for players, seed in _TABLES
    # Only tables the rules can seat (enough players, a grid each, a pile card and a stock card).
    if players >= PRESETS[preset].min_players
    and players * PRESETS[preset].cards_per_grid + 2 <= PRESETS[preset].deck_size(players)
]


@pytest.mark.parametrize(("preset", "players", "seed"), _SEATABLE)
def test_the_procedure_deals_what_the_engine_deals(preset: str, players: int, seed: str) -> None:
    rules = PRESETS[preset]
    for hole in range(3):
        assert deal(rules.canonical(), players, seed, hole) == engine_view(deal_hole(rules, players, seed, hole))


def test_a_reshuffled_stock_and_a_shuffled_grid_follow_the_text() -> None:
    # Step 7's two shuffles are golf-shuffle-v1 under the named seeds: the same as the engine's for the same lists.
    pile = ["AH", "2C", "9D", "KS", "4H"]
    assert golf_shuffle_v1(pile[:-1], "s:hole:0:stock:1") == shuffled(pile[:-1], "s:hole:0:stock:1")
    assert golf_shuffle_v1(list(range(6)), "s:hole:2:power:1") == shuffled(list(range(6)), "s:hole:2:power:1")
