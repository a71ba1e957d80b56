"""House rules by name (``golf.engine.cardgolf.house_rules``): each name makes exactly its change, house rules
compose in order (with the preset and with each other), and unknown, repeated or conflicting names are refused
with the offending name's index."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from golf.engine.cardgolf.house_rules import (
    HOUSE_RULES,
    HouseRuleError,
    apply_house_rules,
    check_house_rules,
    conflicts_of,
)
from golf.engine.cardgolf.options import FlipRule, KnockerPenalty
from golf.engine.cardgolf.presets import PRESETS
from golf.engine.cardgolf.rules import STANDARD_VALUES, GolfRules

SIX = PRESETS["six-card"]
KING, TEN = 12, 9
"""Indexes of ``values``."""


def _values(**changes: int) -> tuple[int, ...]:
    values = list(STANDARD_VALUES)
    for index, points in ((KING, changes.get("king")), (TEN, changes.get("ten"))):
        if points is not None:
            values[index] = points
    return tuple(values)


# What each house rule does to six-card (an option already at the house rule's value is left out: no change).
ON_SIX_CARD: dict[str, dict[str, Any]] = {
    "initial_flips_0": {"start_cards": 0},
    "initial_flips_1": {"start_cards": 1},
    "initial_flips_2": {},  # six-card already turns up two
    "flip_never": {},  # six-card already has no flip after a discard
    "speed_golf": {"flip_after_discard": FlipRule.COMPULSORY},
    "flip_endgame": {"flip_after_discard": FlipRule.ENDGAME},
    "flip_as_turn": {"flip_as_turn": True},
    "early_out": {"early_out": True},
    "lucky_swing": {"jokers": 1, "joker_value": -5},
    "super_kings": {"values": _values(king=-2)},
    "ten_penny": {"values": _values(ten=1)},
    "one_eyed_jacks_zero": {"special_values": (("JH", 0), ("JS", 0))},
    "eagle_eye": {"jokers": 2, "joker_value": 2, "joker_pair_value": -4},
    "negative_pairs_keep_value": {"negative_pairs_keep_value": True},
    "like_value_pairs": {"pairs_by_value": True},
    "blackjack": {"blackjack": True},
    "wolfpack": {"four_jacks_value": -20},
    "four_of_a_kind": {"four_in_two_columns_value": -20},
    "nine_card_straight": {"straight_value": -12},
    "shoot_the_moon": {"shoot_the_moon": True},
    "four_kings": {"four_kings_line_value": -16},
    "four_alike_wins": {"four_alike_wins_match": True},
    "knock_bonus": {"first_out_bonus": -5},
    "underdog": {"underdog_bonus": -3},
    "tied_shame": {"tied_penalty": 5},
    "knock_penalty": {"knocker_penalty": KnockerPenalty.PLUS_10},
}


def _changed(before: GolfRules, after: GolfRules) -> dict[str, Any]:
    return {
        f.name: getattr(after, f.name) for f in fields(GolfRules) if getattr(before, f.name) != getattr(after, f.name)
    }


def test_the_catalogue_is_the_one_tested() -> None:
    assert list(HOUSE_RULES) == list(ON_SIX_CARD)


@pytest.mark.parametrize("name", list(ON_SIX_CARD))
def test_each_house_rule_makes_exactly_its_change(name: str) -> None:
    rule = HOUSE_RULES[name]
    assert rule.name == name and rule.description.endswith(".") and "\n" not in rule.description
    after = apply_house_rules(SIX, [name])
    assert _changed(SIX, after) == ON_SIX_CARD[name]
    assert set(ON_SIX_CARD[name]) <= set(rule.options)
    after.validate(4)  # every house rule makes a playable six-card game
    assert GolfRules.from_canonical(after.canonical()) == after  # and rules that can be stored


def test_house_rules_at_their_value_on_six_card_change_other_presets() -> None:
    nine = PRESETS["nine-card"]
    assert apply_house_rules(nine, ["initial_flips_2"]).start_cards == 2 != nine.start_cards
    flip = PRESETS["six-card-flip"]
    assert apply_house_rules(flip, ["flip_never"]).flip_after_discard is FlipRule.NONE


def test_no_names_leave_the_rules_as_they_are() -> None:
    for preset in PRESETS.values():
        assert apply_house_rules(preset, []) == preset


def test_house_rules_compose_in_order_with_each_other_and_the_preset() -> None:
    many = [
        "super_kings",
        "ten_penny",
        "one_eyed_jacks_zero",
        "speed_golf",
        "knock_penalty",
        "underdog",
        "tied_shame",
        "blackjack",
    ]
    rules = apply_house_rules(SIX, many)
    assert rules.values == _values(king=-2, ten=1)
    assert rules.special_values == (("JH", 0), ("JS", 0))
    assert rules.flip_after_discard is FlipRule.COMPULSORY and rules.knocker_penalty is KnockerPenalty.PLUS_10
    assert (rules.underdog_bonus, rules.tied_penalty, rules.blackjack) == (-3, 5, True)
    # The order of names that do not conflict makes no difference.
    assert apply_house_rules(SIX, list(reversed(many))) == rules
    # Changes compose one after the other: each is the change of its own rule.
    step = SIX
    for name in many:
        step = HOUSE_RULES[name].apply(step)
    assert step == rules


def test_value_changes_keep_the_presets_other_values() -> None:
    cutthroat_like = SIX.with_options(values=(*STANDARD_VALUES[:12], 15))
    assert apply_house_rules(cutthroat_like, ["ten_penny"]).values == (*STANDARD_VALUES[:9], 1, 10, 10, 15)
    # Special values merge: the powers preset's red kings stay -1 beside the one-eyed jacks' 0.
    powers = PRESETS["powers"]
    merged = apply_house_rules(powers, ["one_eyed_jacks_zero"])
    assert dict(merged.special_values) == {**dict(powers.special_values), "JH": 0, "JS": 0}
    assert [code for code, _ in merged.special_values] == sorted(code for code, _ in merged.special_values)
    # An existing entry for a one-eyed jack is replaced, not doubled.
    assert apply_house_rules(SIX.with_options(special_values=(("JH", 9),)), ["one_eyed_jacks_zero"]).special_values == (
        ("JH", 0),
        ("JS", 0),
    )


def test_eagle_eye_adds_jokers_only_to_rules_without_them() -> None:
    with_jokers = PRESETS["six-card-jokers"]
    eagle = apply_house_rules(with_jokers, ["eagle_eye"])
    assert (eagle.jokers, eagle.joker_value, eagle.joker_pair_value) == (with_jokers.jokers, 2, -4)
    assert apply_house_rules(SIX, ["eagle_eye"]).jokers == 2


@pytest.mark.parametrize(
    ("names", "index", "words"),
    [
        (["no_such_rule"], 0, "unknown house rule 'no_such_rule'"),
        (["super_kings", "Super_Kings"], 1, "unknown house rule 'Super_Kings'"),
        (["blackjack", "wolfpack", "blackjack"], 2, "'blackjack' is given twice"),
        (["initial_flips_0", "initial_flips_1"], 1, "'initial_flips_0' and 'initial_flips_1' conflict"),
        (["flip_never", "tied_shame", "speed_golf"], 2, "'flip_never' and 'speed_golf' conflict"),
        (["flip_endgame", "flip_never"], 1, "'flip_endgame' and 'flip_never' conflict"),
        (["lucky_swing", "eagle_eye"], 1, "'lucky_swing' and 'eagle_eye' conflict"),
    ],
)
def test_unknown_repeated_and_conflicting_names_are_refused(names: list[str], index: int, words: str) -> None:
    with pytest.raises(HouseRuleError) as refused:
        apply_house_rules(SIX, names)
    assert refused.value.index == index and words in str(refused.value)
    assert isinstance(refused.value, ValueError)


def test_an_unknown_name_lists_the_known_ones_and_a_long_one_is_cut() -> None:
    with pytest.raises(HouseRuleError) as refused:
        check_house_rules(["x" * 500])
    text = str(refused.value)
    assert "super_kings" in text and "x" * 61 + "..." in text and "x" * 62 not in text


def test_conflicts_are_mutual_and_only_between_rules_deciding_the_same_thing() -> None:
    for name in HOUSE_RULES:
        for other in conflicts_of(name):
            assert name in conflicts_of(other)
            assert set(HOUSE_RULES[name].decides) & set(HOUSE_RULES[other].decides)
            with pytest.raises(HouseRuleError):
                check_house_rules([name, other])
    assert conflicts_of("initial_flips_1") == ("initial_flips_0", "initial_flips_2")
    assert conflicts_of("eagle_eye") == ("lucky_swing",)
    # super_kings and ten_penny both change values, but different entries of it: they combine.
    assert conflicts_of("super_kings") == () and conflicts_of("ten_penny") == ()
    with pytest.raises(HouseRuleError):
        conflicts_of("nope")


def test_every_house_rule_but_the_conflicting_ones_combine_into_a_playable_game() -> None:
    chosen: list[str] = []
    for name in HOUSE_RULES:
        if not set(conflicts_of(name)) & set(chosen):
            chosen.append(name)
    rules = apply_house_rules(SIX, chosen)
    rules.validate(4)
    assert rules.start_cards == 0 and rules.flip_after_discard is FlipRule.NONE and rules.jokers == 1


def test_a_house_rule_that_does_not_fit_the_preset_is_left_to_validation() -> None:
    """``early_out`` goes out by turning every card up: four-card's holes end only by knocking."""
    rules = apply_house_rules(PRESETS["four-card"], ["early_out"])
    with pytest.raises(ValueError, match="early_out"):
        rules.validate(2)
