"""The one observation function: what a seat (or a spectator) may see of a hole.

Face-up cards, the discard pile (every card in it was shown face up), counts, the card in the viewer's own hand,
and only the face-down cards the viewer has been allowed to see (its peeks, cards it put there). The stock's
order, the seed and other players' private knowledge never appear. At the end of the hole every card is revealed
with the result and its breakdown.
"""

from __future__ import annotations

from dataclasses import dataclass

from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.moves import Move
from golf.engine.cardgolf.outcome import HoleResult, hole_result
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.state import EndReason, HoleState, Phase, Source


@dataclass(frozen=True, slots=True)
class SeatView:
    """A hole as seen by ``seat`` (``None``: a spectator). Unknown cards are ``None``."""

    seat: int | None
    rules: GolfRules
    players: int
    phase: Phase
    to_move: int | None
    ready: tuple[bool, ...]
    grids: tuple[tuple[GCard | None, ...], ...]
    """Per seat, its cards by place; ``None`` where the viewer may not know the card, or, at a face-up place, where
    the place is empty (the ace of Powers removed its card)."""
    face_up: tuple[tuple[bool, ...], ...]
    discard: tuple[GCard, ...]
    """The discard pile, top last."""
    stock_count: int
    held: GCard | None
    """The card in the mover's hand, when the viewer may see it."""
    held_from: Source | None
    ender: int | None
    end_reason: EndReason | None
    turns: int
    strokes: tuple[int, ...]
    legal_moves: tuple[Move, ...]
    """The viewer's legal moves now (empty when it is not the viewer's move)."""
    result: HoleResult | None
    """Set once the hole is over."""
    shields: tuple[frozenset[int], ...] = ()
    """Per seat, its shielded places (public)."""
    aside: tuple[tuple[GCard, ...], ...] = ()
    """Per seat, the shield cards it keeps aside, face up (public)."""
    offered: tuple[GCard, ...] = ()
    """The cards the mover chooses from after the draw-two power: shown to the mover only."""
    charges: int = 0
    """Powers the mover has left this turn (the 2 of Powers)."""

    @property
    def discard_top(self) -> GCard | None:
        """The top card of the discard pile."""
        return self.discard[-1] if self.discard else None

    def visible_cards(self) -> list[GCard]:
        """Every card this view shows (grids, discard pile, a visible card in hand)."""
        out = [c for g in self.grids for c in g if c is not None] + list(self.discard) + list(self.offered)
        out += [c for cards in self.aside for c in cards]
        if self.held is not None:
            out.append(self.held)
        return out


def view(state: HoleState, seat: int | None) -> SeatView:
    """What ``seat`` (``None`` for a spectator) may see of ``state``."""
    if seat is not None and not 0 <= seat < state.players:
        raise ValueError(f"seat {seat} does not exist")
    if state.phase is Phase.OVER:
        grids: tuple[tuple[GCard | None, ...], ...] = state.grids  # every card is shown once the hole is over
    else:  # ``state.knows`` for every position, in one pass: face up, or known to the viewer's seat
        known: frozenset[tuple[int, int]] = frozenset()
        if seat is not None:  # strict rules: a face-down card is shown from the move that showed it to the seat's next
            known = state.known[seat] if state.rules.peeks_stay_visible else state.glimpsed[seat]
        grids = tuple(
            tuple(
                card if up or (owner, p) in known else None
                for p, (card, up) in enumerate(zip(grid, face_up, strict=True))
            )
            for owner, (grid, face_up) in enumerate(zip(state.grids, state.face_up, strict=True))
        )
    held = None
    if state.held is not None and (state.held_from is Source.DISCARD or seat == state.turn):
        held = state.held
    over = state.phase is Phase.OVER
    return SeatView(
        seat=seat,
        rules=state.rules,
        players=state.players,
        phase=state.phase,
        to_move=state.to_move,
        ready=state.ready,
        grids=grids,
        face_up=state.face_up,
        discard=state.discard,
        stock_count=len(state.stock),
        held=held,
        held_from=state.held_from,
        ender=state.ender,
        end_reason=state.end_reason,
        turns=state.turns,
        strokes=state.strokes,
        legal_moves=tuple(state.legal_moves(seat)) if seat is not None else (),
        result=hole_result(state) if over else None,
        shields=state.shields,
        aside=state.aside,
        offered=state.offered if seat is not None and seat == state.turn else (),
        charges=state.charges,
    )
