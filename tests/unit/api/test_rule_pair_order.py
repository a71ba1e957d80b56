"""The pairs of ``specialValues`` and ``powers`` in the order of the rules text (which a table's commitment covers):
a map keeps no order, so ``orderedSpecialValues`` and ``orderedPowers`` carry it, in responses and in requests."""

from __future__ import annotations

import pytest

from golf.api.table_rules_convert import house_rule_rules, rules_overrides, rules_to_proto
from golf.app.errors import InvalidArgument
from golf.engine.cardgolf.house_rules import HOUSE_RULES
from golf.engine.cardgolf.options import Power
from golf.engine.cardgolf.presets import PRESETS
from golf.v1 import card_golf_pb2 as cg

Pair = cg.CardGolfRules.PowerPair
Points = cg.CardGolfRules.SpecialValue


def test_a_response_lists_the_pairs_in_the_order_of_the_rules_text() -> None:
    rules = PRESETS["powers"]  # its pairs are in no sorted order: J, T, 9, ... and KH before KD
    msg = rules_to_proto(rules)
    assert [(p.key, p.power) for p in msg.ordered_powers] == [
        (key, cg.Power.Value("POWER_" + power.name)) for key, power in rules.powers
    ]
    assert [(p.code, p.points) for p in msg.ordered_special_values] == list(rules.special_values)
    assert dict(msg.powers) == {p.key: p.power for p in msg.ordered_powers}  # the map holds the same pairs
    assert list(rules_to_proto(PRESETS["six-card"]).ordered_powers) == []


def test_a_request_keeps_the_order_of_its_ordered_pairs() -> None:
    msg = cg.CardGolfRules(
        ordered_powers=[Pair(key="Q", power=cg.POWER_PEEK_OWN), Pair(key="10", power=cg.POWER_BLIND_SWAP)],
        ordered_special_values=[Points(code="QS", points=40), Points(code="10H", points=-1)],
    )
    out = rules_overrides(msg)
    assert out["powers"] == (("Q", Power.PEEK_OWN), ("T", Power.BLIND_SWAP))
    assert out["special_values"] == (("QS", 40), ("TH", -1))


def test_a_map_alone_is_taken_in_the_order_of_its_keys() -> None:
    out = rules_overrides(cg.CardGolfRules(powers={"Q": cg.POWER_PEEK_OWN, "J": cg.POWER_BLIND_SWAP}))
    assert out["powers"] == (("J", Power.BLIND_SWAP), ("Q", Power.PEEK_OWN))


def test_the_rules_a_response_shows_make_the_same_rules_again() -> None:
    # The whole message sent back (map and list both set) gives the pairs in the same order: the same rules text.
    rules = PRESETS["powers"]
    out = rules_overrides(rules_to_proto(rules))
    assert out["powers"] == rules.powers and out["special_values"] == rules.special_values
    assert rules.with_options(**out).canonical() == rules.canonical()


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        (
            cg.CardGolfRules(powers={"J": cg.POWER_PEEK_OWN}, ordered_powers=[Pair(key="Q", power=cg.POWER_PEEK_OWN)]),
            "rules.orderedPowers",
        ),
        (
            cg.CardGolfRules(
                ordered_powers=[Pair(key="10", power=cg.POWER_PEEK_OWN), Pair(key="T", power=cg.POWER_BLIND_SWAP)]
            ),
            "rules.orderedPowers",
        ),
        (cg.CardGolfRules(ordered_powers=[Pair(key="Z", power=cg.POWER_PEEK_OWN)]), "rules.orderedPowers['Z']"),
        (cg.CardGolfRules(ordered_powers=[Pair(key="J")]), "rules.orderedPowers['J']"),
        (
            cg.CardGolfRules(special_values={"QS": 40}, ordered_special_values=[Points(code="QS", points=30)]),
            "rules.orderedSpecialValues",
        ),
        (cg.CardGolfRules(ordered_special_values=[Points(code="Q", points=3)]), "rules.orderedSpecialValues['Q']"),
    ],
)
def test_ordered_pairs_that_cannot_be_rules_are_refused_naming_the_field(msg: cg.CardGolfRules, field: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        rules_overrides(msg)
    assert refused.value.field == field


def test_a_house_rule_shows_its_ordered_pairs_with_its_map() -> None:
    rule = next(r for r in HOUSE_RULES.values() if "special_values" in r.options)
    msg = house_rule_rules(rule, PRESETS["six-card"])
    assert msg.special_values and dict(msg.special_values) == {p.code: p.points for p in msg.ordered_special_values}
    assert not msg.ordered_powers  # a field the house rule does not set stays unset
