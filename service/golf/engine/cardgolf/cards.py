"""Cards of multi-player Card Golf: the 52 of ``golf.engine.cards`` plus jokers, and the decks they come in.

A joker is a :class:`Joker` with rank 0; its ``suit`` is 0 (black) or 1 (red) so two jokers of a pack differ.
``Card`` and ``Joker`` share the fields ``rank`` and ``suit``, so code reads ``card.rank`` on either.
"""

from __future__ import annotations

from typing import NamedTuple

from golf.engine.cards import RANK_CHARS, Card

JOKER_RANK = 0
JOKER_CODES = ("XB", "XR")
"""Codes of the black and the red joker."""


class Joker(NamedTuple):
    """A joker: ``rank`` is always 0, ``suit`` 0 for the black one and 1 for the red one."""

    rank: int
    suit: int

    @property
    def code(self) -> str:
        """``XB`` or ``XR``."""
        return JOKER_CODES[self.suit]

    def __str__(self) -> str:
        return self.code


GCard = Card | Joker
"""Any card of a Card Golf deck."""


def is_joker(card: GCard) -> bool:
    """Whether ``card`` is a joker."""
    return card.rank == JOKER_RANK


def rank_char(card: GCard) -> str:
    """``A23456789TJQK`` for plain cards, ``X`` for a joker: the key power tables and value tables use."""
    return "X" if card.rank == JOKER_RANK else RANK_CHARS[card.rank - 1]


def parse_card(code: str) -> GCard:
    """A card from its code (``AS``, ``10H``, ``XB``, ``XR``); raises ``ValueError`` on anything else."""
    text = code.strip().upper()
    if text in JOKER_CODES:
        return Joker(JOKER_RANK, JOKER_CODES.index(text))
    return Card.parse(text)


def parse_cards(text: str) -> list[GCard]:
    """Cards from a space-separated list of codes."""
    return [parse_card(part) for part in text.split()]


def build_deck(decks: int, jokers: int) -> list[GCard]:
    """``decks`` packs in suit then rank order, then ``jokers`` jokers alternating black and red."""
    out: list[GCard] = [Card(rank, suit) for _ in range(decks) for suit in range(4) for rank in range(1, 14)]
    out.extend(Joker(JOKER_RANK, k % 2) for k in range(jokers))
    return out


ONE_EYED_JACKS = frozenset({Card(11, 2), Card(11, 3)})
"""The jack of hearts and the jack of spades are drawn in profile (one eye)."""
