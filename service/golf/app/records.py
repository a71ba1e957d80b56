"""What the use cases store and load: deals, games and the append-only move log."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from golf.engine.cards import Card, parse_cards
from golf.engine.solitaire.moves import Move, parse_move
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.state import Layout, State


def layout_to_text(layout: Layout) -> str:
    """``start|stock|column0|column1|...``, cards as space-separated codes (server-side storage only)."""
    parts = [layout.start.code, " ".join(c.code for c in layout.stock)]
    parts += [" ".join(c.code for c in col) for col in layout.columns]
    return "|".join(parts)


def layout_from_text(text: str) -> Layout:
    start, stock, *columns = text.split("|")
    return Layout(tuple(tuple(parse_cards(c)) for c in columns), Card.parse(start), tuple(parse_cards(stock)))


@dataclass(frozen=True, slots=True)
class DealRecord:
    id: str
    preset: str
    preset_version: int
    rules: SolitaireRules
    seed: str
    algorithm: str
    commitment: str
    layout: Layout
    created_at: datetime
    pysol_number: int | None = None


@dataclass(slots=True)
class GameRecord:
    """A game row. ``line`` is the moves in effect, as codes; the state is the deal replayed through it."""

    id: str
    deal_id: str
    version: int
    status: str
    score: int
    line: list[str]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """One entry of a game's append-only log. ``seq`` is the game version the move produced."""

    game_id: str
    seq: int
    code: str
    idempotency_key: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class GameSnapshot:
    """A game at one version, with everything the view needs."""

    game: GameRecord
    deal: DealRecord
    state: State
    as_of: datetime
    made: Move | None = field(default=None)
    replayed: bool = False

    @property
    def seed(self) -> str:
        return self.deal.seed


def replay_line(deal: DealRecord, line: list[str]) -> State:
    """The state of ``deal`` after the move codes in ``line``."""
    state = State.initial(deal.rules, deal.layout)
    for code in line:
        state = state.apply(parse_move(code))
    return state
