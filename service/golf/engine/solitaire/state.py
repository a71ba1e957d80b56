"""Golf solitaire positions: the deal, what has been played, legal moves, applying a move, the end and the score."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from golf.engine.cards import KING, Card, new_deck
from golf.engine.shuffle import shuffled
from golf.engine.solitaire.moves import Draw, IllegalMove, Move, PlayColumn, Refusal
from golf.engine.solitaire.pysol import pysol_golf_deal
from golf.engine.solitaire.rules import SolitaireRules


class Status(Enum):
    IN_PROGRESS = "in_progress"
    WON = "won"
    LOST = "lost"


@dataclass(frozen=True, slots=True)
class Layout:
    """A deal: columns listed back to front, the card that starts the pile, the stock in turning order."""

    columns: tuple[tuple[Card, ...], ...]
    start: Card
    stock: tuple[Card, ...]

    @classmethod
    def from_seed(cls, rules: SolitaireRules, seed: str) -> Layout:
        """Shuffle ``rules.decks`` packs with ``golf-shuffle-v1`` and deal columns row by row."""
        cards = shuffled(new_deck(rules.decks), seed)
        n = rules.columns * rules.column_height
        columns = tuple(tuple(cards[c : n : rules.columns]) for c in range(rules.columns))
        return cls(columns, cards[n], tuple(cards[n + 1 :]))

    @classmethod
    def from_pysol(cls, number: int) -> Layout:
        """PySolFC's Golf deal ``number`` (one deck, 7 columns of 5)."""
        columns, start, stock = pysol_golf_deal(number)
        return cls(tuple(tuple(c) for c in columns), start, tuple(stock))

    def all_cards(self) -> list[Card]:
        return [c for col in self.columns for c in col] + [self.start, *self.stock]


@dataclass(frozen=True, slots=True)
class State:
    """A position. ``heights[i]`` cards remain in column i; ``turned`` stock cards have been turned."""

    rules: SolitaireRules
    layout: Layout
    heights: tuple[int, ...]
    pile: tuple[Card, ...]
    turned: int

    @classmethod
    def initial(cls, rules: SolitaireRules, layout: Layout) -> State:
        return cls(rules, layout, tuple(len(c) for c in layout.columns), (layout.start,), 0)

    # -- queries -------------------------------------------------------------------------------------------
    @property
    def top(self) -> Card:
        return self.pile[-1]

    @property
    def stock_left(self) -> int:
        return len(self.layout.stock) - self.turned

    @property
    def cards_in_columns(self) -> int:
        return sum(self.heights)

    def front(self, column: int) -> Card | None:
        h = self.heights[column]
        return self.layout.columns[column][h - 1] if h else None

    def fronts(self) -> list[Card | None]:
        return [self.front(i) for i in range(len(self.heights))]

    def column_plays(self) -> list[PlayColumn]:
        """Column cards that fit on the pile now, as moves naming the card."""
        top = self.pile[-1].rank
        fits = self.rules.fits
        out = []
        for i, h in enumerate(self.heights):
            if h:
                card = self.layout.columns[i][h - 1]
                if fits(card.rank, top):
                    out.append(PlayColumn(i, card))
        return out

    def legal_moves(self) -> list[Move]:
        """Every move the rules allow now (none once the game is over)."""
        if not any(self.heights):
            return []
        plays: list[Move] = list(self.column_plays())
        if self.stock_left and not (plays and self.rules.draw_only_when_stuck):
            plays.append(Draw(self.layout.stock[self.turned]))
        return plays

    @property
    def status(self) -> Status:
        if not any(self.heights):
            return Status.WON
        if self.stock_left == 0 and not self.column_plays():
            return Status.LOST
        return Status.IN_PROGRESS

    @property
    def score(self) -> int:
        """Cards left in the columns; when they are cleared, minus one for each card left in the stock."""
        left = self.cards_in_columns
        return left if left else -self.stock_left

    # -- moves ---------------------------------------------------------------------------------------------
    def check(self, move: Move) -> Move:
        """The move as it will be made (with its card), or ``IllegalMove`` saying why not."""
        if self.status is not Status.IN_PROGRESS:
            raise IllegalMove(Refusal.GAME_OVER, f"the game is over ({self.status.value})")
        if isinstance(move, Draw):
            if not self.stock_left:
                raise IllegalMove(Refusal.STOCK_EMPTY, "the stock is empty")
            if self.rules.draw_only_when_stuck and self.column_plays():
                raise IllegalMove(Refusal.DRAW_NOT_ALLOWED, "these rules allow drawing only when no card fits")
            turned = self.layout.stock[self.turned]
            if move.card is not None and move.card != turned:
                raise IllegalMove(Refusal.CARD_MISMATCH, "the stock's next card is not the one named")
            return Draw(turned)
        col = move.column
        if not 0 <= col < len(self.heights):
            raise IllegalMove(Refusal.NO_SUCH_COLUMN, f"column {col} does not exist (0 to {len(self.heights) - 1})")
        card = self.front(col)
        if card is None:
            raise IllegalMove(Refusal.COLUMN_EMPTY, f"column {col} is empty")
        if move.card is not None and move.card != card:
            raise IllegalMove(Refusal.CARD_MISMATCH, f"column {col}'s front card is {card.code}, not {move.card.code}")
        top = self.pile[-1]
        if not self.rules.fits(card.rank, top.rank):
            if top.rank == KING and abs(card.rank - top.rank) == 1:
                raise IllegalMove(Refusal.NOTHING_ON_KING, "nothing may go on a king under these rules")
            raise IllegalMove(Refusal.NOT_ADJACENT_RANK, f"{card.code} is not one rank from {top.code}")
        return PlayColumn(col, card)

    def apply(self, move: Move) -> State:
        """The position after ``move``; raises ``IllegalMove`` (and this state is unchanged) when it is refused."""
        made = self.check(move)
        if isinstance(made, Draw):
            assert made.card is not None
            return State(self.rules, self.layout, self.heights, (*self.pile, made.card), self.turned + 1)
        heights = list(self.heights)
        heights[made.column] -= 1
        assert made.card is not None
        return State(self.rules, self.layout, tuple(heights), (*self.pile, made.card), self.turned)

    def replay(self, moves: list[Move]) -> State:
        state = self
        for m in moves:
            state = state.apply(m)
        return state
