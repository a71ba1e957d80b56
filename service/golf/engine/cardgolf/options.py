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
