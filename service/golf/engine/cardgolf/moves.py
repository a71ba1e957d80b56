"""Moves are value objects (intents); a refused move raises :class:`IllegalMove` with a typed :class:`Refusal`.

Positions are 0-based, row by row (``row * cols + col``). A move does not name its seat: the seat is given to
``HoleState.apply(seat, move)`` so a move can be refused as ``NOT_YOUR_TURN``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True, slots=True)
class Reveal:
    """Before the first turn: turn up (or peek at, in peek variants) the start cards at ``positions``."""

    positions: tuple[int, ...]

    @property
    def code(self) -> str:
        """Text form, e.g. ``reveal 0,3``."""
        return "reveal " + ",".join(map(str, self.positions))


@dataclass(frozen=True, slots=True)
class DrawStock:
    """Take the top card of the stock (only the drawer sees it)."""

    @property
    def code(self) -> str:
        """Text form."""
        return "stock"


@dataclass(frozen=True, slots=True)
class DrawDiscard:
    """Take the top card of the discard pile (it must then be swapped in)."""

    @property
    def code(self) -> str:
        """Text form."""
        return "discard-pile"


@dataclass(frozen=True, slots=True)
class Swap:
    """Put the card in hand at ``position``; the card there goes to the discard pile face up."""

    position: int

    @property
    def code(self) -> str:
        """Text form."""
        return f"swap {self.position}"


@dataclass(frozen=True, slots=True)
class Discard:
    """Put the card drawn from the stock on the discard pile."""

    @property
    def code(self) -> str:
        """Text form."""
        return "discard"


@dataclass(frozen=True, slots=True)
class Flip:
    """After discarding: turn up the face-down card at ``position``."""

    position: int

    @property
    def code(self) -> str:
        """Text form."""
        return f"flip {self.position}"


@dataclass(frozen=True, slots=True)
class Pass:
    """After discarding, when the flip is optional: turn nothing up."""

    @property
    def code(self) -> str:
        """Text form."""
        return "pass"


@dataclass(frozen=True, slots=True)
class Knock:
    """Instead of a turn: end the hole; every other player has one more turn (when the rules give one)."""

    @property
    def code(self) -> str:
        """Text form."""
        return "knock"


@dataclass(frozen=True, slots=True)
class PeekStroke:
    """Instead of a turn (four-card house rule): look at one of your face-down cards for ``peek_stroke`` points."""

    position: int

    @property
    def code(self) -> str:
        """Text form."""
        return f"peek-stroke {self.position}"


@dataclass(frozen=True, slots=True)
class FlipAll:
    """Instead of a turn (house rule ``early_out``): turn up your last one or two face-down cards and go out."""

    @property
    def code(self) -> str:
        """Text form."""
        return "flip-all"


@dataclass(frozen=True, slots=True)
class UsePower:
    """Discard the card drawn from the stock to use its power. ``seat`` names the opponent targeted, ``position``
    their card (or your own for powers on your own grid), ``own`` your card (blind swap) or the second line
    (swap lines: lines 0..rows-1 are rows, rows..rows+cols-1 columns). ``power`` names the power to use when the
    card grants a choice of powers (the 2 of Powers), by its :class:`~golf.engine.cardgolf.options.Power` value."""

    seat: int | None = None
    position: int | None = None
    own: int | None = None
    power: str | None = None

    @property
    def code(self) -> str:
        """Text form."""
        named = (("as", self.power), ("seat", self.seat), ("pos", self.position), ("own", self.own))
        return "power " + " ".join(f"{name}={value}" for name, value in named if value is not None)


@dataclass(frozen=True, slots=True)
class Keep:
    """After the draw-two power: keep card ``choice`` (0: the power card, 1 and 2: the two drawn) at ``position``
    of your grid; the card there and the other two go to the discard pile."""

    choice: int
    position: int

    @property
    def code(self) -> str:
        """Text form."""
        return f"keep {self.choice} {self.position}"


Move = Reveal | DrawStock | DrawDiscard | Swap | Discard | Flip | Pass | Knock | PeekStroke | FlipAll | UsePower | Keep


class Refusal(Enum):
    """Why a move was refused. The names are the wire contract's reason codes."""

    HOLE_OVER = "HOLE_OVER"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    NO_SUCH_SEAT = "NO_SUCH_SEAT"
    WRONG_PHASE = "WRONG_PHASE"
    """E.g. a swap before drawing, or drawing twice."""
    ALREADY_REVEALED = "ALREADY_REVEALED"
    WRONG_REVEAL_COUNT = "WRONG_REVEAL_COUNT"
    DUPLICATE_POSITION = "DUPLICATE_POSITION"
    NO_SUCH_POSITION = "NO_SUCH_POSITION"
    ALREADY_FACE_UP = "ALREADY_FACE_UP"
    MUST_SWAP_TAKEN_DISCARD = "MUST_SWAP_TAKEN_DISCARD"
    FLIP_REQUIRED = "FLIP_REQUIRED"
    DISCARD_PILE_EMPTY = "DISCARD_PILE_EMPTY"
    STOCK_EMPTY = "STOCK_EMPTY"
    KNOCK_NOT_ALLOWED = "KNOCK_NOT_ALLOWED"
    ALREADY_KNOCKED = "ALREADY_KNOCKED"
    PEEK_NOT_ALLOWED = "PEEK_NOT_ALLOWED"
    NO_POWER = "NO_POWER"
    """The card in hand has no power, or it was taken from the discard pile."""
    BAD_TARGET = "BAD_TARGET"
    """A power's target is missing, is yourself, or is not allowed for that power."""
    SHIELDED = "SHIELDED"
    """A power names a place its owner shielded (the 5 of Powers)."""
    POWER_USED = "POWER_USED"
    """The 2 of Powers: the same power twice in one turn, or a power the table does not have."""
    EARLY_OUT_NOT_ALLOWED = "EARLY_OUT_NOT_ALLOWED"
    """Going out early needs the house rule and one or two face-down cards."""
    MALFORMED_MOVE = "MALFORMED_MOVE"
    """The move names something its kind does not take (a power move with an argument its power does not use)."""


class IllegalMove(Exception):
    """A refused move; the state it was tried on is unchanged."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def parse_move(text: str) -> Move:
    """A move from its text form (the ``code`` property of each move)."""
    head, _, rest = text.strip().partition(" ")
    head = head.lower()
    simple: dict[str, Move] = {
        "stock": DrawStock(),
        "discard-pile": DrawDiscard(),
        "discard": Discard(),
        "pass": Pass(),
        "knock": Knock(),
        "flip-all": FlipAll(),
    }
    if head in simple:
        return simple[head]
    if head == "reveal":
        return Reveal(tuple(int(p) for p in rest.split(",") if p.strip()))
    if head in ("swap", "flip", "peek-stroke"):
        pos = int(rest)
        return Swap(pos) if head == "swap" else Flip(pos) if head == "flip" else PeekStroke(pos)
    if head == "power":
        args = dict(part.split("=") for part in rest.split())
        return UsePower(
            int(args["seat"]) if "seat" in args else None,
            int(args["pos"]) if "pos" in args else None,
            int(args["own"]) if "own" in args else None,
            args.get("as"),
        )
    if head == "keep":
        choice, position = rest.split()
        return Keep(int(choice), int(position))
    raise ValueError(f"not a move: {text!r}")
