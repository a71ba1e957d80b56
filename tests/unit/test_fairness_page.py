"""docs/fairness.md stays true: its tables of options are the engine's, its procedure (tests/fairness_spec.py, written
from the page) makes the server's rules text from what the API shows for every preset and house rule, and its
PySolFC dealing is PySolFC's (the pysol-cards package) for every kind of deal number."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from enum import Enum
from pathlib import Path

import pytest
from google.protobuf import json_format
from pysol_cards.cards import CardRenderer
from pysol_cards.deal_game import Game
from pysol_cards.random_base import RandomBase

from golf.api.convert import rules_to_proto as solitaire_rules_to_proto
from golf.api.table_rules_convert import rules_overrides, rules_to_proto
from golf.engine.cardgolf import options as card_golf_options
from golf.engine.cardgolf.house_rules import HOUSE_RULES
from golf.engine.cardgolf.presets import HISTORY, PRESETS
from golf.engine.cardgolf.rules import ADDED_OPTIONS, GolfRules
from golf.engine.solitaire.rules import PRESETS as SOLITAIRE_PRESETS
from golf.engine.solitaire.rules import SolitaireRules
from golf.v1 import card_golf_pb2 as cg
from tests import fairness_spec as spec

PAGE = (Path(__file__).parents[2] / "docs" / "fairness.md").read_text()


def table_after(heading: str) -> dict[str, str]:
    """The first column (a key) and second (its default) of the table that follows ``heading`` on the page."""
    rest = PAGE[PAGE.index(heading) :]
    rows = re.findall(r"^\| `([a-z_]+)` \| `([^`]*)`", rest[: rest.index("\n\n", rest.index("| ---"))], re.M)
    return dict(rows)


FIRST = table_after("**Always written**")
LATER = table_after("**Written only when different from the default**")
SOLITAIRE = table_after("### Solitaire")


def as_text(value: object) -> str:
    return json.dumps(value.value if isinstance(value, Enum) else value, separators=(",", ":"))


def test_the_pages_card_golf_tables_are_every_option_with_its_default() -> None:
    defaults = {f.name: f.default for f in fields(GolfRules)}
    assert set(LATER) == set(ADDED_OPTIONS), "options added later: the page's second table"
    assert set(FIRST) == set(defaults) - set(ADDED_OPTIONS), "options of the first release: the page's first table"
    for key, shown in {**FIRST, **LATER}.items():
        assert shown == as_text(defaults[key]), key
    assert {key: json.loads(shown) for key, shown in LATER.items()} == spec.LATER_OPTIONS


def test_the_pages_solitaire_table_is_every_option_with_its_default() -> None:
    standard = json.loads(SolitaireRules().canonical())
    assert {key: as_text(value) for key, value in standard.items()} == SOLITAIRE
    assert set(spec.SOLITAIRE_KEYS) == set(SOLITAIRE)


def test_the_rules_enumerations_are_written_as_the_page_says() -> None:
    enums = {f.enum_type.name for f in cg.CardGolfRules.DESCRIPTOR.fields if f.enum_type is not None}
    power = cg.CardGolfRules.PowerPair.DESCRIPTOR.fields_by_name["power"].enum_type
    assert power is not None
    enums.add(power.name)
    prefixes = {re.sub(r"(?<!^)([A-Z])", r"_\1", name).upper() + "_" for name in enums}
    assert prefixes == set(spec.ENUM_PREFIXES)
    for enum in vars(card_golf_options).values():
        if isinstance(enum, type) and issubclass(enum, Enum) and enum is not Enum:
            assert all(member.value == member.name.lower() for member in enum), enum


def every_table_rules() -> list[GolfRules]:
    versions = [rules for history in HISTORY.values() for rules in history]
    house = [rule.apply(PRESETS["six-card"]) for rule in HOUSE_RULES.values()]
    asked = [
        PRESETS["cambio"].with_options(**rules_overrides(msg))
        for msg in (
            cg.CardGolfRules(powers={"Q": cg.POWER_PEEK_OWN, "J": cg.POWER_BLIND_SWAP}, special_values={"QS": 40}),
            cg.CardGolfRules(
                ordered_powers=[
                    cg.CardGolfRules.PowerPair(key="Q", power=cg.POWER_PEEK_OWN),
                    cg.CardGolfRules.PowerPair(key="J", power=cg.POWER_BLIND_SWAP),
                ],
                straight_value=-12,
                joker_pair_value=-4,
                shoot_the_moon=True,
            ),
        )
    ]
    return versions + house + asked


@pytest.mark.parametrize("rules", every_table_rules())
@pytest.mark.parametrize("holes", [1, 18])
def test_the_procedure_makes_the_servers_card_golf_text_from_what_the_api_shows(rules: GolfRules, holes: int) -> None:
    rules = rules.with_options(holes=holes)
    shown = json_format.MessageToDict(rules_to_proto(rules))  # a Table's `rules`, as REST shows them
    assert spec.card_golf_text(shown, holes) == rules.canonical()


@pytest.mark.parametrize("name", sorted(SOLITAIRE_PRESETS))
def test_the_procedure_makes_the_servers_solitaire_text_from_what_the_api_shows(name: str) -> None:
    rules = SOLITAIRE_PRESETS[name]
    assert spec.solitaire_text(json_format.MessageToDict(solitaire_rules_to_proto(rules))) == rules.canonical()


def test_the_pages_example_texts_are_the_servers() -> None:
    assert f"`{SolitaireRules().canonical()}`" in PAGE
    assert f"`{PRESETS['six-card'].with_options(holes=9).canonical()}`" in PAGE


def pysol_cards_deal(number: int) -> spec.Deal:
    """PySolFC's own Golf deal ``number`` (the pysol-cards package), as the page's procedure gives it."""
    text = str(Game("golf", number, RandomBase.DEALS_PYSOLFC).calc_layout_string(CardRenderer(True)))
    lines = text.strip().splitlines()
    stock = lines[0].removeprefix("Talon: ").split()
    start = lines[1].removeprefix("Foundations: ")
    return [line.split() for line in lines[2:]], start, stock


@pytest.mark.parametrize("number", [1, 2, 11, 617, 31999, 32000, 32001, 50_000, 2**31, 2**32 + 7, 10**12, 10**19])
def test_the_pages_pysol_dealing_is_pysolfcs(number: int) -> None:
    assert spec.pysol_deal(number) == pysol_cards_deal(number)


def test_the_pages_pysol_examples() -> None:
    text = SolitaireRules().canonical()
    for number, digest in [
        (1, "75758eb1aa79e5661af3c5834c6bd70784fe8e590bec397f72978d89254c42b5"),
        (50_000, "023f477b7997deaf083cafb03c1850775bb190298e890db5e03ec7ae2a1e30d9"),
    ]:
        assert digest in PAGE and spec.commitment("pysolfc", spec.pysol_seed(number), text) == digest
    columns, start, stock = spec.pysol_deal(1)
    assert columns[:2] == [["JD", "5H", "KH", "AS", "4H"], ["2D", "KD", "3H", "AH", "AC"]]
    assert start == "TH" and stock[:3] == ["8H", "2C", "JH"]
    columns, start, stock = spec.pysol_deal(50_000)
    assert columns[:2] == [["JS", "7S", "4D", "4C", "5H"], ["TC", "9H", "QS", "6H", "6D"]]
    assert start == "6C" and stock[:3] == ["TS", "2D", "KS"]


def test_the_pages_match_example() -> None:
    text = PRESETS["six-card"].with_options(holes=9).canonical()
    assert spec.commitment("golf-shuffle-v1", "example-match", text) == (
        "fabbee7ac314782d3a4519e81c488a7adf66f55d3fa572fc6d651b76ef46a423"
    )
    first, second = (spec.hole_deal(text, 2, "example-match", k) for k in (0, 1))
    assert first["grids"] == [["8C", "4C", "2C", "7H", "QC", "3C"], ["JD", "TD", "6H", "QH", "3D", "JS"]]
    assert first["pile"] == "AH" and first["stock"][0] == "3S"
    assert second["grids"][0] == ["TC", "7H", "9S", "6H", "KS", "6S"] and second["pile"] == "KD"
    assert second["first"] == 1
