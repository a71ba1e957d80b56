"""Computer opponents for Card Golf. Each decides from its seat's view only (``golf.engine.cardgolf.view``)."""

from golf.engine.cardgolf.bots.base import BOT_NAMES, Bot, make_bot

__all__ = ["BOT_NAMES", "Bot", "make_bot"]
