"""Playing cards as small immutable values, written as two-character codes such as ``AS``, ``TD``, ``KH``."""

from __future__ import annotations

from typing import NamedTuple

RANK_CHARS = "A23456789TJQK"
SUIT_CHARS = "CDHS"
ACE, KING, QUEEN = 1, 13, 12


class Card(NamedTuple):
    """A card: ``rank`` 1 (ace) to 13 (king), ``suit`` 0..3 in the order clubs, diamonds, hearts, spades."""

    rank: int
    suit: int

    @property
    def code(self) -> str:
        """The two-character code clients draw from, e.g. ``"QH"``."""
        return RANK_CHARS[self.rank - 1] + SUIT_CHARS[self.suit]

    def __str__(self) -> str:
        return self.code

    @classmethod
    def parse(cls, code: str) -> Card:
        """Card from its code; accepts ``10`` for ten. Raises ``ValueError`` on anything else."""
        text = code.strip().upper()
        if text.startswith("10"):
            text = "T" + text[2:]
        if len(text) != 2 or text[0] not in RANK_CHARS or text[1] not in SUIT_CHARS:
            raise ValueError(f"not a card code: {code!r}")
        return cls(RANK_CHARS.index(text[0]) + 1, SUIT_CHARS.index(text[1]))


def new_deck(decks: int = 1) -> list[Card]:
    """``decks`` full 52-card packs, ordered by suit then rank (the order shuffles start from)."""
    return [Card(rank, suit) for _ in range(decks) for suit in range(4) for rank in range(1, 14)]


def parse_cards(text: str) -> list[Card]:
    """Cards from a space-separated list of codes."""
    return [Card.parse(part) for part in text.split()]
