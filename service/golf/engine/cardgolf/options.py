"""The enumerated options of Card Golf: how a hole starts, the flip after a discard, knocker scoring, powers."""

from __future__ import annotations

from enum import Enum


class StartMode(Enum):
    """How the start cards of each grid become known."""

    TURN_UP = "turn_up"
    """Turned face up for everyone to see (six-card, nine-card)."""
    PEEK = "peek"
    """Looked at privately, then left face down (four-card, Cambio, Powers)."""


class FlipRule(Enum):
    """Whether a player turns up one of their face-down cards after discarding a drawn card."""

    NONE = "none"
    OPTIONAL = "optional"
    COMPULSORY = "compulsory"
    """"Speed golf": a player who discards always turns up a card."""
    ENDGAME = "endgame"
    """Optional, but only once some player has at most one face-down card left."""


class StockOut(Enum):
    """What happens when the stock runs out."""

    RESHUFFLE = "reshuffle"
    """The discard pile, less its top card, is shuffled into a new stock."""
    END_HOLE = "end_hole"
    """The hole ends at once."""


class KnockerPenalty(Enum):
    """What the player who ended the hole pays when another player scored strictly less."""

    NONE = "none"
    PLUS_10 = "plus_10"
    PLUS_20 = "plus_20"
    DOUBLE_PLUS_5 = "double_plus_5"
    TAKE_HIGHEST = "take_highest"
    PLUS_TWICE_PLAYERS = "plus_twice_players"


class KnockerBonus(Enum):
    """What the player who ended the hole gains when nobody scored less (ties count as lowest)."""

    NONE = "none"
    ZERO_IF_POSITIVE = "zero_if_positive"
    MINUS_PLAYERS = "minus_players"


class FourAlikeScope(Enum):
    """Where four cards of one rank must lie to count as "four alike"."""

    BLOCK = "block"
    """In a 2x2 block of adjacent cards (a "group of four")."""
    ANYWHERE = "anywhere"
    """Anywhere in the grid."""


class Power(Enum):
    """What a card drawn from the stock may do when discarded for its power (Cambio, Cabo, Powers)."""

    PEEK_OWN = "peek_own"
    """Look at one of your own cards (``UsePower(position=own)``)."""
    PEEK_OPPONENT = "peek_opponent"
    """Look at one of an opponent's cards (``UsePower(seat, position=theirs)``)."""
    BLIND_SWAP = "blind_swap"
    """Swap one of your cards with one of an opponent's, unseen (``UsePower(seat, position=theirs, own=mine)``)."""
    SHUFFLE_OPPONENT = "shuffle_opponent"
    """Shuffle an opponent's cards so nobody knows what lies where (``UsePower(seat)``)."""
    GIVE_TO_OPPONENT = "give_to_opponent"
    """The power card replaces one of an opponent's cards, which is discarded (``UsePower(seat, position)``)."""
    SWAP_LINES = "swap_lines"
    """Swap two rows or two columns of an opponent's grid (``UsePower(seat, position=line, own=line)``; lines
    0..rows-1 are rows, then the columns)."""
    TURN_UP_OR_DOWN = "turn_up_or_down"
    """Turn an opponent's card face up (``UsePower(seat, position)``) or one of yours face down
    (``UsePower(position=yours)``)."""
    DRAW_TWO = "draw_two"
    """Powers' 8: take the next two cards of the stock and keep one of the three (``UsePower()``, then
    ``Keep(choice, position)``); the others go to the discard pile."""
    SHIELD = "shield"
    """Powers' 5: shield one of your places (``UsePower(position=mine)``): opponents' powers may not look at, take
    or move the card there for the rest of the hole. The 5 is kept aside, face up, and scores nothing."""
    TWO_POWERS = "two_powers"
    """Powers' 2: use two different powers of the table's other power cards, one after the other
    (``UsePower(power=..., ...)`` twice; ``Pass`` skips the second)."""
    ADD_OR_REMOVE = "add_or_remove"
    """Powers' ace: add the top card of the stock, face down, to an opponent's grid in an empty place or beside it
    (``UsePower(seat)``), or remove one of your cards to the discard pile (``UsePower(position=mine)``)."""
    CANCEL_KNOCK = "cancel_knock"
    """Powers' black king: cancels a knock when it is drawn from the stock or turned up in an opponent's grid
    (it works by being seen, not by a move: the knocker's hole goes on as if they had not knocked)."""
    TRADE_FOR_UP_CARD = "trade_for_up_card"
    """Cutthroat's king: give it to an opponent in place of one of their face-up cards, and put that card in your
    own grid (``UsePower(seat, position=theirs, own=mine)``)."""
