"""The newer card Golf options on the wire (``golf.api.table_convert``, ``golf.api.table_handlers``): every rule
option added after the first contract round trips both ways, new enum values map by name, the power cards' view
fields (shields, cards kept aside, offered cards, charges, empty places) reach the message, house rules apply in a
table's options between the preset and the explicit options, and the presets and house rules are listed."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest
from google.protobuf import json_format

from golf.api.rpc import CallContext
from golf.api.table_convert import hole_to_proto, move_from_proto, move_to_proto
from golf.api.table_handlers import TableHandlers
from golf.api.table_rules_convert import house_rule_rules, rules_overrides, rules_to_proto
from golf.app.errors import InvalidArgument
from golf.app.identity import Caller
from golf.app.tables import TableOptions
from golf.app.tables.options import DEFAULT_PRESET
from golf.app.tables.service import TableService
from golf.engine.cardgolf.cards import GCard, parse_card
from golf.engine.cardgolf.house_rules import HOUSE_RULES, conflicts_of
from golf.engine.cardgolf.moves import UsePower
from golf.engine.cardgolf.options import FlipRule, KnockerPenalty, Power
from golf.engine.cardgolf.presets import DESCRIPTIONS, PRESETS, preset_version
from golf.engine.cardgolf.rules import ADDED_OPTIONS, STANDARD_VALUES, GolfRules
from golf.engine.cardgolf.state import Phase, deal
from golf.engine.cardgolf.view import SeatView, view
from golf.v1 import card_golf_pb2 as cg
from golf.v1 import table_service_pb2 as pb
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore

SIX = PRESETS["six-card"]
NEW_OPTIONS = {
    "flip_as_turn": True,
    "early_out": True,
    "pairs_by_value": True,
    "negative_pairs_keep_value": True,
    "four_jacks_value": -20,
    "four_in_two_columns_value": -21,
    "four_kings_line_value": -16,
    "straight_value": -12,
    "shoot_the_moon": True,
    "blackjack": True,
    "four_alike_wins_match": True,
    "first_out_bonus": -5,
    "underdog_bonus": -3,
    "tied_penalty": 5,
}
"""Every option added with the house rules, at a value other than its default."""


# -- rules -------------------------------------------------------------------------------------------------------
def test_every_added_option_has_its_field_and_is_tested() -> None:
    proto_fields = {f.name for f in cg.CardGolfRules.DESCRIPTOR.fields}
    assert set(ADDED_OPTIONS) <= proto_fields
    assert set(NEW_OPTIONS) <= set(ADDED_OPTIONS)
    # And every engine option has a field of the same name (``holes`` is the table's own field).
    assert {f.name for f in fields(GolfRules)} - {"holes"} <= proto_fields


def test_the_added_options_round_trip_in_binary_and_json() -> None:
    rules = SIX.with_options(**NEW_OPTIONS)
    msg = rules_to_proto(rules)
    for name, value in NEW_OPTIONS.items():
        assert msg.HasField(name) and getattr(msg, name) == value, name  # type: ignore[arg-type]
    for again in (
        cg.CardGolfRules.FromString(msg.SerializeToString()),
        json_format.Parse(json_format.MessageToJson(msg), cg.CardGolfRules()),
    ):
        overrides = rules_overrides(again)
        assert {name: overrides[name] for name in NEW_OPTIONS} == NEW_OPTIONS
        assert TableOptions.build("six-card", overrides, 4).rules == rules
    as_json = json_format.MessageToDict(msg)
    assert as_json["fourInTwoColumnsValue"] == -21 and as_json["straightValue"] == -12 and as_json["earlyOut"]


def test_an_unset_straight_value_is_no_such_rule_and_zero_is_a_value() -> None:
    assert not rules_to_proto(SIX).HasField("straight_value")
    assert "straight_value" not in rules_overrides(cg.CardGolfRules())
    zero = rules_overrides(cg.CardGolfRules(straight_value=0))
    assert zero == {"straight_value": 0}
    assert TableOptions.build("six-card", zero, 2).rules.straight_value == 0
    # The bonuses at 0 are sent (every field is set in a response) and mean no bonus.
    msg = rules_to_proto(SIX)
    assert msg.HasField("underdog_bonus") and msg.underdog_bonus == 0 and msg.HasField("blackjack")


def test_every_flip_rule_and_power_travels_by_name() -> None:
    for flip in FlipRule:
        msg = rules_to_proto(SIX.with_options(flip_after_discard=flip))
        assert cg.FlipRule.Name(msg.flip_after_discard) == "FLIP_RULE_" + flip.name
        assert rules_overrides(msg)["flip_after_discard"] is flip
    every_power = tuple((rank, power) for rank, power in zip("A23456789TJQK", Power, strict=False))
    assert len(every_power) == len(Power) <= 13
    msg = rules_to_proto(SIX.with_options(powers=every_power))
    assert {key: cg.Power.Name(value) for key, value in msg.powers.items()} == {
        rank: "POWER_" + power.name for rank, power in every_power
    }
    assert dict(rules_overrides(msg)["powers"]) == dict(every_power)


def test_every_phase_of_the_engine_is_a_hole_phase() -> None:
    for phase in Phase:
        assert cg.HolePhase.Value("HOLE_PHASE_" + phase.name)


# -- moves -------------------------------------------------------------------------------------------------------
def test_a_use_power_names_its_power_only_when_the_move_does() -> None:
    plain = move_to_proto(UsePower(position=1))
    assert plain.use_power.power == cg.POWER_UNSPECIFIED
    assert json_format.MessageToDict(plain) == {"usePower": {"position": 1}}
    named = move_to_proto(UsePower(seat=1, position=0, power=Power.SHIELD.value))
    assert json_format.MessageToDict(named) == {"usePower": {"seat": 1, "position": 0, "power": "POWER_SHIELD"}}
    assert move_from_proto(named) == UsePower(seat=1, position=0, power="shield")
    for power in Power:
        sent = json_format.ParseDict({"usePower": {"power": "POWER_" + power.name}}, cg.CardGolfMove())
        assert move_from_proto(sent) == UsePower(power=power.value)


def test_a_power_number_of_no_power_is_refused_naming_the_field() -> None:
    msg = cg.CardGolfMove(use_power=cg.CardGolfMove.UsePower(power=99))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument) as refused:
        move_from_proto(msg)
    assert refused.value.field == "move.usePower.power"


def test_flip_all_and_keep_in_json() -> None:
    flip_all = json_format.ParseDict({"flipAll": {}}, cg.CardGolfMove())
    assert move_from_proto(flip_all).code == "flip-all"
    keep = json_format.ParseDict({"keep": {"choice": 2, "position": 4}}, cg.CardGolfMove())
    assert move_from_proto(keep).code == "keep 2 4"
    assert json_format.MessageToDict(move_to_proto(move_from_proto(keep))) == {"keep": {"choice": 2, "position": 4}}
    # Choice 0 (the power card) and position 0 are values, not absent fields.
    zero = json_format.ParseDict({"keep": {}}, cg.CardGolfMove())
    assert move_from_proto(zero).code == "keep 0 0"


# -- the power cards' view ---------------------------------------------------------------------------------------
def _a_view(phase: Phase = Phase.DRAW) -> SeatView:
    rules = PRESETS["powers"]
    return replace(view(deal(rules, 2, "seed-for-the-view"), 0), phase=phase)


def test_shields_aside_offered_and_charges_reach_the_message() -> None:
    five, eight, queen, two = (parse_card(code) for code in ("5H", "8C", "QD", "2S"))
    seen = replace(
        _a_view(Phase.CHOOSE),
        shields=(frozenset({1, 4}), frozenset()),
        aside=((five,), ()),
        offered=(eight, queen, two),
        charges=0,
    )
    msg = hole_to_proto(seen, 1)
    assert msg.phase == cg.HOLE_PHASE_CHOOSE
    assert [c.shielded for c in msg.grids[0].cards] == [p in (1, 4) for p in range(6)]
    assert not any(c.shielded for c in msg.grids[1].cards)
    assert [c.code for c in msg.grids[0].aside] == ["5H"] and not msg.grids[1].aside
    assert [c.code for c in msg.offered] == ["8C", "QD", "2S"]
    powered = hole_to_proto(replace(_a_view(Phase.POWER), charges=1), 1)
    assert powered.phase == cg.HOLE_PHASE_POWER and powered.charges == 1 and not powered.offered
    as_json = json_format.MessageToDict(msg)
    assert as_json["phase"] == "HOLE_PHASE_CHOOSE" and len(as_json["offered"]) == 3


def test_a_view_without_power_fields_sends_none() -> None:
    msg = hole_to_proto(_a_view(), 1)
    assert not msg.offered and msg.charges == 0
    for grid in msg.grids:
        assert not grid.aside and not any(c.shielded or c.empty for c in grid.cards)


def test_an_empty_place_is_empty_and_an_unknown_card_is_not() -> None:
    seen = _a_view()
    grids: list[tuple[GCard | None, ...]] = list(seen.grids)
    face_up = list(seen.face_up)
    # Seat 1's place 2 is empty (no card, face up: nothing to hide), and it has a seventh place (the ace's).
    extra = parse_card("7D")
    grids[1] = (*grids[1][:2], None, *grids[1][3:], None)
    face_up[1] = (*face_up[1][:2], True, *face_up[1][3:], False)
    msg = hole_to_proto(replace(seen, grids=tuple(grids), face_up=tuple(face_up)), 1)
    cards = msg.grids[1].cards
    assert len(cards) == 7
    assert cards[2].empty and not cards[2].face_up and not cards[2].HasField("card")
    assert not cards[6].empty and not cards[6].HasField("card")  # face down, not known to seat 0
    # Once the hole is over every card is shown: a place without one is empty, face up or not.
    over_grids: list[tuple[GCard | None, ...]] = [tuple(c if c is not None else extra for c in g) for g in grids]
    over_grids[1] = (*over_grids[1][:5], None, extra)
    over = replace(seen, phase=Phase.OVER, grids=tuple(over_grids), face_up=tuple(face_up))
    shown = hole_to_proto(over, 1).grids[1].cards
    assert shown[5].empty and not shown[5].HasField("card") and shown[6].card.code == "7D"


# -- house rules in a table's options ----------------------------------------------------------------------------
def test_house_rules_apply_after_the_preset_and_before_the_explicit_options() -> None:
    options = TableOptions.build("six-card-jokers", house_rules=["super_kings", "knock_penalty", "eagle_eye"])
    rules = options.rules
    assert rules.values[12] == -2 and rules.knocker_penalty is KnockerPenalty.PLUS_10
    assert rules.jokers == PRESETS["six-card-jokers"].jokers and rules.joker_value == 2
    assert options.custom and options.preset == "six-card-jokers"
    # An explicit option wins over a house rule's.
    won = TableOptions.build("six-card", {"values": STANDARD_VALUES}, house_rules=["super_kings"])
    assert won.rules.values == STANDARD_VALUES
    both = TableOptions.build("six-card", rules_overrides(cg.CardGolfRules(joker_value=-7)), house_rules=["eagle_eye"])
    assert (both.rules.joker_value, both.rules.joker_pair_value, both.rules.jokers) == (-7, -4, 2)


@pytest.mark.parametrize(
    ("names", "field", "words"),
    [
        (["super_kings", "hyper_kings"], "houseRules[1]", "unknown house rule 'hyper_kings'"),
        (["underdog", "underdog"], "houseRules[1]", "given twice"),
        (["speed_golf", "blackjack", "flip_endgame"], "houseRules[2]", "conflict"),
        ("super_kings", "houseRules", "a list of names"),
    ],
)
def test_bad_house_rules_are_refused_naming_the_field(names: list[str], field: str, words: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        TableOptions.build("six-card", house_rules=names)
    assert refused.value.field == field and words in refused.value.message


def test_a_house_rule_the_preset_cannot_take_is_refused_naming_the_option() -> None:
    with pytest.raises(InvalidArgument) as refused:
        TableOptions.build("four-card", house_rules=["early_out"], seats=2)
    assert refused.value.field == "rules.earlyOut"


def test_a_house_rules_message_sets_only_its_options() -> None:
    for rule in HOUSE_RULES.values():
        msg = house_rule_rules(rule, SIX)
        # A map's ordered list (``orderedSpecialValues``) is set with its map.
        set_fields = {f.name.removeprefix("ordered_") for f, _ in msg.ListFields()}
        assert set_fields <= set(rule.options), rule.name
        # Sent back as rule options over six-card, it makes what the house rule makes.
        assert TableOptions.build("six-card", rules_overrides(msg)).rules == rule.apply(SIX), rule.name
    kings = house_rule_rules(HOUSE_RULES["super_kings"], SIX)
    assert list(kings.values)[12] == -2 and len(kings.values) == 13
    assert json_format.MessageToDict(house_rule_rules(HOUSE_RULES["lucky_swing"], SIX)) == {
        "jokers": 1,
        "jokerValue": -5,
    }


# -- listing presets and house rules -----------------------------------------------------------------------------
@pytest.fixture
def handlers() -> TableHandlers:
    return TableHandlers(TableService(FakeStore(), FakeClock(), FakeLimiter()))


CTX = CallContext(Caller("player-ann"), "127.0.0.1")


async def test_every_preset_is_listed_with_its_description_rules_and_version(handlers: TableHandlers) -> None:
    listed = (await handlers.list_table_presets(pb.ListTablePresetsRequest(), CTX)).presets
    assert listed[0].name == DEFAULT_PRESET
    assert sorted(p.name for p in listed) == sorted(PRESETS)
    for preset in listed:
        assert preset.description == DESCRIPTIONS[preset.name] and preset.description.endswith(".")
        assert preset.version == preset_version(preset.name) >= 1
        # Sent back as rule options, the same rules (maps compare as maps: their order carries no meaning).
        built = TableOptions.build(preset.name, rules_overrides(preset.rules)).rules
        assert rules_to_proto(built) == preset.rules == rules_to_proto(PRESETS[preset.name])


def test_every_preset_has_a_description() -> None:
    assert set(DESCRIPTIONS) == set(PRESETS)


async def test_every_house_rule_is_listed_with_its_description_and_conflicts(handlers: TableHandlers) -> None:
    listed = (await handlers.list_house_rules(pb.ListHouseRulesRequest(), CTX)).house_rules
    assert [r.name for r in listed] == list(HOUSE_RULES)
    for shown in listed:
        rule = HOUSE_RULES[shown.name]
        assert shown.description == rule.description
        assert tuple(shown.conflicts) == conflicts_of(rule.name)
        assert shown.rules == house_rule_rules(rule, SIX)
    by_name = {r.name: r for r in listed}
    assert by_name["tied_shame"].rules.tied_penalty == 5 and list(by_name["initial_flips_1"].conflicts) == [
        "initial_flips_0",
        "initial_flips_2",
    ]


async def test_create_table_takes_house_rules(handlers: TableHandlers) -> None:
    req = pb.CreateTableRequest(preset="eight-card", house_rules=["wolfpack", "initial_flips_1"], seats=2)
    table = (await handlers.create_table(req, CTX)).table
    assert table.rules.four_jacks_value == -20 and table.rules.start_cards == 1
    assert (table.rules.rows, table.rules.cols) == (2, 4)
    with pytest.raises(InvalidArgument) as refused:
        await handlers.create_table(pb.CreateTableRequest(house_rules=["wolfpack", "wolf_pack"]), CTX)
    assert refused.value.field == "houseRules[1]"
