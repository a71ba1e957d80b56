"""Computer opponents for Card Golf: levels from ``random`` and ``beginner`` to ``strong`` (``expert``), each with
optional personalities (see ``catalogue``). Each decides from its seat's view only (``golf.engine.cardgolf.view``)."""

from golf.engine.cardgolf.bots.base import BOT_NAMES, Bot, make_bot
from golf.engine.cardgolf.bots.catalogue import (
    LEVELS,
    PERSONALITIES,
    BotSpec,
    LevelInfo,
    PersonalityInfo,
    bot_cost,
    bot_name,
    canonical_name,
    catalogue,
    is_bot_name,
    parse_bot_name,
)

__all__ = [
    "BOT_NAMES",
    "LEVELS",
    "PERSONALITIES",
    "Bot",
    "BotSpec",
    "LevelInfo",
    "PersonalityInfo",
    "bot_cost",
    "bot_name",
    "canonical_name",
    "catalogue",
    "is_bot_name",
    "make_bot",
    "parse_bot_name",
]
