"""Bot levels and personalities on the wire: ``BotLevel`` and ``BotPersonality`` to the engine's bot names and back,
and a table whose bots have personalities playing its match through the app layer."""

from __future__ import annotations

import pytest

from golf.api.table_convert import (
    BOT_LEVELS,
    BOT_PERSONALITIES,
    bot_from_proto,
    bot_level_to_proto,
    bot_personality_to_proto,
)
from golf.app.errors import InvalidArgument
from golf.app.tables import TableOptions, TableStatus, add_bot, new_table, play_bots, start, view_for
from golf.engine.cardgolf.bots import PERSONALITIES, catalogue
from golf.v1 import card_golf_pb2 as cg


def test_every_personality_has_a_wire_value_and_every_value_a_personality() -> None:
    assert set(BOT_PERSONALITIES) == {p.name for p in PERSONALITIES}
    named = {cg.BotPersonality.Name(v) for v in BOT_PERSONALITIES.values()}
    assert named == set(cg.BotPersonality.keys()) - {"BOT_PERSONALITY_UNSPECIFIED"}


def test_every_catalogue_bot_round_trips_through_its_level_and_personality() -> None:
    for name, _rank, _description in catalogue():
        level, personality = bot_level_to_proto(name), bot_personality_to_proto(name)
        assert bot_from_proto(level, personality) == name


def test_old_levels_keep_their_numbers_and_the_unspecified_personality_is_the_plain_bot() -> None:
    assert (BOT_LEVELS["random"], BOT_LEVELS["greedy"], BOT_LEVELS["strong"]) == (1, 2, 3)
    assert bot_from_proto(cg.BOT_LEVEL_STRONG, cg.BOT_PERSONALITY_UNSPECIFIED) == "strong"
    assert bot_from_proto(cg.BOT_LEVEL_ADVANCED, cg.BOT_PERSONALITY_RACER) == "advanced+racer"
    assert bot_personality_to_proto(None) == cg.BOT_PERSONALITY_UNSPECIFIED
    assert bot_personality_to_proto("greedy") == cg.BOT_PERSONALITY_UNSPECIFIED


@pytest.mark.parametrize(
    ("level", "personality", "field"),
    [
        (cg.BOT_LEVEL_UNSPECIFIED, cg.BOT_PERSONALITY_UNSPECIFIED, "level"),
        (cg.BOT_LEVEL_GREEDY, 99, "personality"),
        (cg.BOT_LEVEL_RANDOM, cg.BOT_PERSONALITY_GAMBLER, "personality"),
    ],
)
def test_a_bot_the_engine_does_not_have_is_refused_naming_the_field(level: int, personality: int, field: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        bot_from_proto(level, personality)
    assert refused.value.field == field


def test_a_table_of_bots_with_personalities_plays_its_match() -> None:
    table = new_table(TableOptions.build("six-card", seats=3, holes=1), "personalities")
    for name in ("strong+racer", "beginner+gambler", "advanced+pair-hunter"):
        table, _ = add_bot(table, name)
    table, _ = start(table)
    table, _ = play_bots(table)
    assert table.status is TableStatus.OVER
    seats = view_for(table, None).seats
    assert [s.bot for s in seats] == ["strong+racer", "beginner+gambler", "advanced+pair-hunter"]
    assert [bot_personality_to_proto(s.bot) for s in seats] == [
        cg.BOT_PERSONALITY_RACER,
        cg.BOT_PERSONALITY_GAMBLER,
        cg.BOT_PERSONALITY_PAIR_HUNTER,
    ]
