"""Moves are intents: play a column's front card, or turn the next stock card. Refusals carry a typed reason."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from golf.engine.cards import Card


@dataclass(frozen=True, slots=True)
class PlayColumn:
    """Play the front card of ``column`` (0-based) onto the pile.

    ``card``, when given, is the card the player saw there; a different card refuses the move (``CARD_MISMATCH``).
    """

    column: int
    card: Card | None = None

    @property
    def code(self) -> str:
        return f"{self.column}:{self.card.code}" if self.card else str(self.column)


@dataclass(frozen=True, slots=True)
class Draw:
    """Turn the next stock card onto the pile. ``card`` is filled in once the move is made."""

    card: Card | None = None

    @property
    def code(self) -> str:
        return f"T:{self.card.code}" if self.card else "T"


Move = PlayColumn | Draw


def parse_move(code: str) -> Move:
    """A move from its code: ``"3"`` or ``"3:AH"`` for column 3, ``"T"`` or ``"T:3S"`` for the stock."""
    head, _, card_text = code.strip().partition(":")
    card = Card.parse(card_text) if card_text else None
    if head.upper() == "T":
        return Draw(card)
    if head.isdigit():
        return PlayColumn(int(head), card)
    raise ValueError(f"not a move code: {code!r}")


class Refusal(Enum):
    """Why a move was refused. The names are the wire contract's reason codes."""

    NO_SUCH_COLUMN = "NO_SUCH_COLUMN"
    COLUMN_EMPTY = "COLUMN_EMPTY"
    NOT_ADJACENT_RANK = "NOT_ADJACENT_RANK"
    NOTHING_ON_KING = "NOTHING_ON_KING"
    CARD_MISMATCH = "CARD_MISMATCH"
    STOCK_EMPTY = "STOCK_EMPTY"
    DRAW_NOT_ALLOWED = "DRAW_NOT_ALLOWED"
    GAME_OVER = "GAME_OVER"
    NOTHING_TO_UNDO = "NOTHING_TO_UNDO"
    UNDO_NOT_ALLOWED = "UNDO_NOT_ALLOWED"
    UNDO_LIMIT_REACHED = "UNDO_LIMIT_REACHED"
    NOTHING_TO_PLAY = "NOTHING_TO_PLAY"


class IllegalMove(Exception):
    """A refused move; the state it was tried on is unchanged."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
