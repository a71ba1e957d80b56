"""Every option of Golf solitaire, and the named, versioned presets."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from enum import Enum

from golf.engine.cards import ACE, KING, QUEEN
from golf.engine.solitaire.moves import IllegalMove, Refusal


class UndoPolicy(Enum):
    """How far a player may take moves back."""

    UNLIMITED = "unlimited"
    LIMITED = "limited"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class SolitaireRules:
    """The parameters of Golf solitaire (layout, adjacency, drawing, undo). Defaults are the ``standard`` game."""

    decks: int = 1
    columns: int = 7
    column_height: int = 5
    wrap: bool = False
    """Ranks are circular: a king and an ace go on each other, and cards go on kings."""
    queens_on_kings: bool = False
    """A queen (and so a run) may go on a king; without it nothing goes on a king."""
    draw_only_when_stuck: bool = False
    """The stock may be turned only when no column card fits."""
    undo_policy: UndoPolicy = UndoPolicy.UNLIMITED
    undo_limit: int = 0
    """Undos allowed per game when ``undo_policy`` is ``LIMITED``."""

    def validate(self) -> None:
        """Raise ``ValueError`` naming the field when the rules cannot make a game."""
        if not 1 <= self.decks <= 4:
            raise ValueError("decks: must be 1 to 4")
        if not 1 <= self.columns <= 20:
            raise ValueError("columns: must be 1 to 20")
        if not 1 <= self.column_height <= 20:
            raise ValueError("column_height: must be 1 to 20")
        if self.columns * self.column_height + 1 > 52 * self.decks:
            raise ValueError("columns: the layout needs more cards than the decks hold")
        if self.undo_limit < 0:
            raise ValueError("undo_limit: must not be negative")

    def undos_left(self, used: int) -> int | None:
        """Undos still allowed after ``used``; None when unlimited."""
        if self.undo_policy is UndoPolicy.UNLIMITED:
            return None
        if self.undo_policy is UndoPolicy.NONE:
            return 0
        return max(self.undo_limit - used, 0)

    def check_undo(self, used: int) -> None:
        """Raise ``IllegalMove`` when the undo policy forbids another undo."""
        if self.undo_policy is UndoPolicy.NONE:
            raise IllegalMove(Refusal.UNDO_NOT_ALLOWED, "these rules allow no undo")
        if self.undos_left(used) == 0:
            raise IllegalMove(Refusal.UNDO_LIMIT_REACHED, f"these rules allow {self.undo_limit} undo(s) a game")

    def fits(self, card_rank: int, top_rank: int) -> bool:
        """Whether a card of ``card_rank`` may go on a pile whose top has ``top_rank``."""
        diff = card_rank - top_rank
        if diff == 1 or diff == -1:
            if top_rank == KING:
                return self.queens_on_kings or self.wrap
            return True
        # With wrap an ace goes on a king and a king on an ace.
        return self.wrap and (diff == 12 or diff == -12)

    @property
    def stock_size(self) -> int:
        return 52 * self.decks - self.columns * self.column_height - 1

    def canonical(self) -> str:
        """Stable text of every field, used in deal commitments."""
        data = asdict(self)
        data["undo_policy"] = self.undo_policy.value
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_canonical(cls, text: str) -> SolitaireRules:
        data = json.loads(text)
        data["undo_policy"] = UndoPolicy(data.get("undo_policy", "unlimited"))
        return cls(**data)

    def is_pysol_layout(self) -> bool:
        """PySolFC deal numbers exist only for one deck in 7 columns of 5."""
        return (self.decks, self.columns, self.column_height) == (1, 7, 5)


_STANDARD = SolitaireRules()

PRESETS: dict[str, SolitaireRules] = {
    "standard": _STANDARD,
    "queens-on-kings": replace(_STANDARD, queens_on_kings=True),
    "wrap": replace(_STANDARD, wrap=True),
    "two-decks": replace(_STANDARD, decks=2, columns=9, column_height=7),
}
PRESET_VERSION = 1
"""Bumped whenever a preset's fields change; stored with every deal so old deals keep their rules."""

__all__ = ["ACE", "KING", "PRESETS", "PRESET_VERSION", "QUEEN", "SolitaireRules", "UndoPolicy"]
