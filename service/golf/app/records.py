"""What the use cases store and load: deals, games, rounds, hints and the append-only action log.

A log entry's ``code`` is a move (``3:AH`` plays column 3's ace of hearts, ``T:5C`` turns the five of clubs),
an undo (``U``, taking back the latest entry still in effect) or an AutoPlay run (``A:3:AH+5:2C``). A game's
``line`` is the entries in effect, so its state is the deal replayed through the line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import Enum

from golf.engine.cards import Card, parse_cards
from golf.engine.solitaire.moves import Draw, Move, PlayColumn, parse_move
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.state import Layout, State

UNDO = "U"
AUTOPLAY = "A:"


def layout_to_text(layout: Layout) -> str:
    """``start|stock|column0|column1|...``, cards as space-separated codes (server-side storage only)."""
    parts = [layout.start.code, " ".join(c.code for c in layout.stock)]
    parts += [" ".join(c.code for c in col) for col in layout.columns]
    return "|".join(parts)


def layout_from_text(text: str) -> Layout:
    start, stock, *columns = text.split("|")
    return Layout(tuple(tuple(parse_cards(c)) for c in columns), Card.parse(start), tuple(parse_cards(stock)))


def autoplay_code(moves: tuple[Move, ...]) -> str:
    return AUTOPLAY + "+".join(m.code for m in moves)


def action_moves(code: str) -> list[Move]:
    """The moves of a move or AutoPlay entry."""
    if code.startswith(AUTOPLAY):
        return [parse_move(c) for c in code[len(AUTOPLAY) :].split("+")]
    return [parse_move(code)]


def shows_stock(code: str) -> bool:
    """Whether undoing the entry ``code`` shows the player a stock card: the entry turned one (a draw, or an
    AutoPlay run with a draw in it), so after the undo the player knows what the stock holds next."""
    return code != UNDO and any(isinstance(m, Draw) for m in action_moves(code))


Intent = Move | str
"""What a request asks for, to compare a retry with the stored entry: a move, ``UNDO`` or ``AUTOPLAY``."""


def same_intent(asked: Intent, code: str) -> bool:
    """Whether a retried request asks for what is stored under its idempotency key (the entry ``code``)."""
    if isinstance(asked, str):
        return code == asked or (asked == AUTOPLAY and code.startswith(AUTOPLAY))
    if code == UNDO or code.startswith(AUTOPLAY):
        return False
    made = parse_move(code)
    if isinstance(asked, Draw):
        return isinstance(made, Draw) and asked.card in (None, made.card)
    return isinstance(made, PlayColumn) and asked.column == made.column and asked.card in (None, made.card)


def effective(codes: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The (seq, code) entries of a log still in effect: each undo takes back the latest one."""
    stack: list[tuple[int, str]] = []
    for seq, code in codes:
        if code == UNDO:
            stack.pop()
        else:
            stack.append((seq, code))
    return stack


@dataclass(frozen=True, slots=True)
class Verdict:
    """The solver's verdict on a deal from its start. ``winnable`` is None when the budget ran out."""

    winnable: bool | None
    solution: tuple[str, ...] = ()
    """A winning line when winnable (move codes)."""
    fewest_left: int | None = None
    difficulty: str | None = None
    difficulty_score: int | None = None


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
    verdict: Verdict | None = None
    seed_source: str = "server"
    """Who chose the seed: ``server`` (drawn from ``secrets``: the deal is private while a game holding it is
    played), ``client`` or ``pysol`` (public by nature)."""


class Unranked(Enum):
    """Why a solitaire game counts for no board (DEAL, DAILY_DEAL) and its round for no ROUNDS board."""

    PRACTICE = "practice"
    """Not the owner's first game on its deal."""
    STOCK_SEEN = "stock_seen"
    """An undo took back a stock draw: the player saw a stock card and could play the deal again knowing it."""


@dataclass(slots=True)
class GameRecord:
    """A game row. ``line`` is the log entries in effect, as codes."""

    id: str
    deal_id: str
    version: int
    status: str
    score: int
    line: list[str]
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None = None
    hints_used: int = 0
    undos_used: int = 0
    round_id: str | None = None
    hole: int | None = None
    owner_id: str = ""
    """The player who created the game; only they may change it."""
    practice: bool = False
    """Not the owner's first game on this deal: it does not count as a score."""
    holds_deal: bool = False
    """While this game is in progress no other game may start on its deal (a unique index enforces it)."""
    autoplay_assists: int = 0
    """AutoPlay runs the solver chose (assistance, like a hint)."""
    stock_seen: bool = False
    """An undo took back a stock draw (``shows_stock``): the game counts for no board (``unranked``)."""

    @property
    def unranked(self) -> Unranked | None:
        """Why the game counts for no board, or None when it does (practice first: it never could)."""
        if self.practice:
            return Unranked.PRACTICE
        if self.stock_seen:
            return Unranked.STOCK_SEEN
        return None

    def copy(self) -> GameRecord:
        """A shallow copy: ``dataclasses.replace(self)``, several times faster (it is on every move's path)."""
        return GameRecord(*[getattr(self, name) for name in _GAME_FIELDS])


_GAME_FIELDS = tuple(f.name for f in fields(GameRecord))


@dataclass(frozen=True, slots=True)
class GameFilter:
    """Filters of ListGames; None means any."""

    preset: str | None = None
    status: str | None = None
    created_after: datetime | None = None
    """Inclusive lower bound of ``created_at``."""
    created_before: datetime | None = None
    """Exclusive upper bound of ``created_at``."""


@dataclass(frozen=True, slots=True)
class RoundFilter:
    """Filters of ListRounds; None means any."""

    preset: str | None = None
    finished: bool | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None


@dataclass(frozen=True, slots=True)
class DealUse:
    """How a deal is being played, for deciding whether a caller may start a game on it."""

    held: bool
    """A game holding the deal is in progress."""
    owner_games: int
    """Games the asking player has on the deal."""
    daily: bool
    """The deal is a daily deal (played by everyone at once)."""
    closed_at: datetime | None = None
    """When the deal stops being dealt fresh (``golf.app.reveals``); a game started after it is practice."""


@dataclass(frozen=True, slots=True)
class DealStanding:
    """How a deal is played now, as the rule needs it (``golf.app.reveals``; one query)."""

    closed_at: datetime | None
    """When it stopped (or stops) being dealt fresh; None: it may be started by its id for good."""
    ranked_in_play: bool
    """A ranked (not practice) game on it is in progress."""


@dataclass(frozen=True, slots=True)
class MoveRecord:
    """One entry of a game's append-only log. ``seq`` is the game version the entry produced."""

    game_id: str
    seq: int
    code: str
    idempotency_key: str
    created_at: datetime
    undone_by: int | None = None


@dataclass(frozen=True, slots=True)
class HintRecord:
    game_id: str
    idempotency_key: str
    code: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class RoundRecord:
    id: str
    preset: str
    rules: SolitaireRules
    holes: int
    par: int
    winnable_only: bool
    difficulty: str | None
    created_at: datetime
    owner_id: str = ""


@dataclass(frozen=True, slots=True)
class GameSnapshot:
    """A game at one version, with everything the view needs."""

    game: GameRecord
    deal: DealRecord
    state: State
    as_of: datetime
    made: tuple[Move, ...] = field(default=())
    replayed: bool = False

    @property
    def seed(self) -> str:
        return self.deal.seed

    @property
    def finished(self) -> bool:
        return self.game.status != "in_progress"


def replay_line(deal: DealRecord, line: list[str]) -> State:
    """The state of ``deal`` after the entries in ``line``."""
    state = State.initial(deal.rules, deal.layout)
    for code in line:
        for move in action_moves(code):
            state = state.apply(move)
    return state
