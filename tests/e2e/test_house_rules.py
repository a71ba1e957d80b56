"""House rules by name and the newer rule options over both transports: a table created with house rules shows
their changes in its rules (after the preset, before the explicit options), unknown, repeated and conflicting names
are INVALID_ARGUMENT / 400 naming the field, and the presets and house rules are listed with their descriptions
(``ListTablePresets``, ``ListHouseRules``, also in the OpenAPI document), as are the bots ``AddBot`` takes
(``ListBots``)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from golf.v1 import card_golf_pb2 as cg
from golf.v1 import table_service_pb2 as tpb
from tests.e2e.identity import new_client
from tests.e2e.support import R, Reply, Server
from tests.e2e.tables import Tables, move


@pytest.fixture(params=["rest", "grpc"])
def host(server: Server, request: pytest.FixtureRequest) -> Iterator[Tables]:
    """A new player on each transport in turn."""
    client = new_client(server, str(request.param))
    yield Tables(client)
    client.close()


def _table(reply: Reply) -> cg.Table:
    table: cg.Table = reply.expect_ok().table
    return table


def test_a_table_with_house_rules_shows_their_changes(host: Tables) -> None:
    table = _table(
        host.create(
            preset="six-card",
            seats=2,
            house_rules=["super_kings", "speed_golf", "wolfpack", "initial_flips_1", "nine_card_straight"],
            rules=cg.CardGolfRules(tied_penalty=7, underdog_bonus=-2),
        )
    )
    rules = table.rules
    assert table.preset == "six-card"
    assert list(rules.values)[12] == -2 and list(rules.values)[1] == -2  # kings -2, twos still -2
    assert rules.flip_after_discard == cg.FLIP_RULE_COMPULSORY and rules.start_cards == 1
    assert rules.four_jacks_value == -20 and rules.straight_value == -12
    assert (rules.tied_penalty, rules.underdog_bonus) == (7, -2)
    # The explicit options win over a house rule's.
    won = _table(host.create(seats=2, house_rules=["lucky_swing"], rules=cg.CardGolfRules(joker_value=-3)))
    assert (won.rules.jokers, won.rules.joker_value) == (1, -3)
    # And the table plays: bots and a start with the house rules in force.
    _table(host.add_bot(table.id, cg.BOT_LEVEL_GREEDY))
    started = _table(host.start(table.id))
    assert started.status == cg.TABLE_STATUS_PLAYING and started.rules == rules


@pytest.mark.parametrize(
    ("names", "field"),
    [
        (["super_kings", "no_such_rule"], "houseRules[1]"),
        (["initial_flips_0", "initial_flips_2"], "houseRules[1]"),
        (["underdog", "underdog"], "houseRules"),  # the contract's own rule: unique names
        (["x" * 65], "houseRules[0]"),  # the contract's own rule: at most 64 characters
    ],
)
def test_bad_house_rules_are_refused_naming_the_field(host: Tables, names: list[str], field: str) -> None:
    error = host.create(seats=2, house_rules=names).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert error.field == field and error.status == "INVALID_ARGUMENT"
    if "no_such_rule" in names:
        assert "no_such_rule" in error.message and "super_kings" in error.message  # the known names are listed


def test_a_house_rule_the_preset_cannot_take_names_the_option(host: Tables) -> None:
    error = host.create(preset="four-card", seats=2, house_rules=["early_out"]).expect_error(
        R.ERROR_REASON_INVALID_ARGUMENT
    )
    assert error.field == "rules.earlyOut"


def test_presets_and_house_rules_are_listed_with_descriptions(host: Tables) -> None:
    presets = host.call("ListTablePresets", tpb.ListTablePresetsRequest()).expect_ok().presets
    assert presets[0].name == "six-card" and {"four-card", "cambio", "powers"} <= {p.name for p in presets}
    for preset in presets:
        assert preset.description and preset.version >= 1 and len(preset.rules.values) == 13
    house = host.call("ListHouseRules", tpb.ListHouseRulesRequest()).expect_ok().house_rules
    by_name = {r.name: r for r in house}
    assert {"super_kings", "speed_golf", "eagle_eye", "tied_shame", "four_alike_wins"} <= set(by_name)
    assert all(r.description for r in house)
    assert by_name["tied_shame"].rules.tied_penalty == 5 and not by_name["tied_shame"].rules.HasField("jokers")
    assert list(by_name["lucky_swing"].conflicts) == ["eagle_eye"]
    # Every listed name is accepted by CreateTable.
    _table(host.create(seats=2, house_rules=["tied_shame", "knock_penalty"]))


def test_bot_levels_and_personalities_are_listed_and_each_can_be_seated(host: Tables) -> None:
    listed = host.call("ListBots", tpb.ListBotsRequest()).expect_ok()
    levels = [info.level for info in listed.levels]
    assert levels[0] == cg.BOT_LEVEL_RANDOM and levels[-1] == cg.BOT_LEVEL_STRONG and len(set(levels)) >= 4
    assert all(info.title and info.description for info in (*listed.levels, *listed.personalities))
    personalities = [info.personality for info in listed.personalities]
    assert cg.BOT_PERSONALITY_PAIR_HUNTER in personalities and cg.BOT_PERSONALITY_RACER in personalities
    table = _table(host.create(seats=3))
    seated = host.call(
        "AddBot",
        tpb.AddBotRequest(table_id=table.id, level=levels[1], personality=personalities[0], idempotency_key="bot-1"),
    ).expect_ok()
    bots = [s for s in seated.table.seats if s.bot]
    assert [(s.bot, s.bot_personality) for s in bots] == [(levels[1], personalities[0])]


def test_the_listing_routes_are_in_the_openapi_document(server: Server) -> None:
    doc = httpx.get(f"{server.http_url}/openapi.json", timeout=10).json()
    for path in ("/v1/tablePresets", "/v1/houseRules", "/v1/bots"):
        assert doc["paths"][path]["get"]["tags"] == ["TableService"], path


def test_the_new_moves_are_refused_with_a_reason_where_they_do_not_belong(host: Tables) -> None:
    """Keep, flip-all and a named power sent at the wrong time, or out of bounds: 4xx with the reason, never 5xx."""
    table = _table(host.create(preset="six-card", seats=2, rules=cg.CardGolfRules(start_cards=0)))
    _table(host.add_bot(table.id))
    started = _table(host.start(table.id))
    assert started.status == cg.TABLE_STATUS_PLAYING and started.your_seat in started.awaiting
    cases = [
        (move("keep", choice=0, position=0), R.ERROR_REASON_WRONG_PHASE),  # no draw-two power in play
        (move("flipAll"), R.ERROR_REASON_EARLY_OUT_NOT_ALLOWED),  # the house rule is off
        (move("usePower", power="POWER_SHIELD", position=0), R.ERROR_REASON_WRONG_PHASE),  # nothing drawn
        (move("keep", choice=3, position=0), R.ERROR_REASON_INVALID_ARGUMENT),  # choice is 0 to 2
        (move("keep", choice=0, position=16), R.ERROR_REASON_INVALID_ARGUMENT),  # places are 0 to 15
    ]
    for sent, reason in cases:
        error = host.act(table.id, sent).expect_error(reason)
        assert error.table.id == table.id or reason == R.ERROR_REASON_INVALID_ARGUMENT, sent
    drawn = _table(host.act(table.id, move("drawStock")))
    error = host.act(drawn.id, move("usePower", power="POWER_DRAW_TWO")).expect_error(R.ERROR_REASON_NO_POWER)
    assert "power" in error.message
