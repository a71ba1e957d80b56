"""The one view function for solitaire: what a player may see of a position.

Column cards are face up and the pile is public. The stock's order and the deal's seed stay on the server until
the game ends; then both are revealed so the player can check the deal against its commitment.
"""

from __future__ import annotations

from dataclasses import dataclass

from golf.engine.cards import Card
from golf.engine.solitaire.moves import Draw, Move
from golf.engine.solitaire.state import State, Status


@dataclass(frozen=True, slots=True)
class SolitaireView:
    columns: tuple[tuple[Card, ...], ...]
    pile_top: Card
    pile_count: int
    stock_count: int
    status: Status
    score: int
    legal_moves: tuple[Move, ...]
    revealed_stock: tuple[Card, ...] | None
    """The whole stock in turning order, only once the game is over."""
    revealed_seed: str | None


def view(state: State, seed: str | None = None) -> SolitaireView:
    """What the player of ``state`` may see. ``seed`` is the deal's seed; it is shown only after the game."""
    over = state.status is not Status.IN_PROGRESS
    return SolitaireView(
        columns=tuple(col[:h] for col, h in zip(state.layout.columns, state.heights, strict=True)),
        pile_top=state.top,
        pile_count=len(state.pile),
        stock_count=state.stock_left,
        status=state.status,
        score=state.score,
        # A legal draw never names its card: that would show the stock's next card.
        legal_moves=tuple(Draw() if isinstance(m, Draw) else m for m in state.legal_moves()),
        revealed_stock=state.layout.stock if over else None,
        revealed_seed=seed if over else None,
    )
