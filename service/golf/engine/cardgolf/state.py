"""A hole of Card Golf: the deal, whose turn it is, legal moves, applying a move, the end.

States are immutable; :meth:`HoleState.apply` returns a new state or raises :class:`IllegalMove` (and the state
it was tried on is unchanged). Chance is an explicit input: the deal and every later shuffle (the stock from the
discards, a power that shuffles a grid) are drawn with ``golf-shuffle-v1`` from the hole's ``seed``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum
from itertools import combinations
from typing import Protocol, TypeVar

from golf.engine.cardgolf.cards import GCard, build_deck
from golf.engine.cardgolf.moves import (
    Discard,
    DrawDiscard,
    DrawStock,
    Flip,
    FlipAll,
    IllegalMove,
    Knock,
    Move,
    Pass,
    PeekStroke,
    Refusal,
    Reveal,
    Swap,
    UsePower,
)
from golf.engine.cardgolf.options import FlipRule, Power, StartMode, StockOut
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.shuffle import shuffled

T = TypeVar("T")
Slot = tuple[int, int]
"""A card's place: (owner seat, position)."""


class Phase(Enum):
    """Where a hole stands."""

    SETUP = "setup"
    """Players turn up (or peek at) their start cards, in any order."""
    DRAW = "draw"
    """The player to move draws (or knocks, or takes a peek stroke)."""
    PLACE = "place"
    """The player holds a drawn card: swap it in, discard it, or use its power."""
    FLIP = "flip"
    """After discarding: turn up a face-down card (or pass when optional)."""
    CHOOSE = "choose"
    """After the draw-two power: keep one of the offered cards (``Keep``)."""
    POWER = "power"
    """After the first power of a card that grants two (the 2 of Powers): use another, or pass."""
    OVER = "over"


class Source(Enum):
    """Where the card in hand came from."""

    STOCK = "stock"
    DISCARD = "discard"


class EndReason(Enum):
    """Why a hole ended."""

    ALL_FACE_UP = "all_face_up"
    KNOCK = "knock"
    STOCK_OUT = "stock_out"
    ROUND_LIMIT = "round_limit"


@dataclass(frozen=True, slots=True)
class HoleState:
    """A position in a hole. ``stock`` and ``discard`` have their top card last."""

    rules: GolfRules
    seed: str
    first: int
    grids: tuple[tuple[GCard | None, ...], ...]
    """Per seat, its cards by place: ``rows * cols`` places, then any added by the ace of Powers (in no line);
    ``None`` is an empty place (its card removed by the ace), always face up."""
    face_up: tuple[tuple[bool, ...], ...]
    known: tuple[frozenset[Slot], ...]
    """Per seat: face-down slots whose card that seat knows (its peeks, cards it put there, cards it saw move)."""
    stock: tuple[GCard, ...]
    discard: tuple[GCard, ...]
    phase: Phase
    turn: int
    ready: tuple[bool, ...]
    """Per seat: start cards turned up / peeked."""
    held: GCard | None = None
    held_from: Source | None = None
    ender: int | None = None
    """The seat that went out or knocked."""
    end_reason: EndReason | None = None
    turns: int = 0
    """Turns completed."""
    reshuffles: int = 0
    powers_used: int = 0
    strokes: tuple[int, ...] = ()
    """Points taken for peek strokes, per seat."""
    glimpsed: tuple[frozenset[Slot], ...] = ()
    """Per seat, the face-down cards it came to know or looked at since its own last move (kept only when the rules
    do not keep peeked cards visible: a seat's view then shows a face-down card only from the move that let it see
    the card until its next move)."""
    went_out: int | None = None
    """The first seat to have every card face up (for ``first_out_bonus``)."""
    shields: tuple[frozenset[int], ...] = ()
    """Per seat, the places it shielded (the 5 of Powers): opponents' powers may not touch them."""
    aside: tuple[tuple[GCard, ...], ...] = ()
    """Per seat, the shield cards it keeps aside, face up; they score nothing."""
    offered: tuple[GCard, ...] = ()
    """In ``CHOOSE``: the power card and the two cards drawn with it (seen by the mover only)."""
    charges: int = 0
    """In ``POWER``: powers left to use this turn."""
    used_powers: tuple[str, ...] = ()
    """Powers used this turn by a card that grants several (no power twice)."""

    # -- queries -------------------------------------------------------------------------------------------
    @property
    def players(self) -> int:
        """Number of seats."""
        return len(self.grids)

    @property
    def over(self) -> bool:
        """Whether the hole has ended."""
        return self.phase is Phase.OVER

    @property
    def discard_top(self) -> GCard | None:
        """The top card of the discard pile."""
        return self.discard[-1] if self.discard else None

    @property
    def to_move(self) -> int | None:
        """The seat expected to move: during setup the first seat not yet ready; ``None`` once over."""
        if self.phase is Phase.OVER:
            return None
        if self.phase is Phase.SETUP:
            return next(s for s in range(self.players) if not self.ready[s])
        return self.turn

    def knows(self, viewer: int | None, owner: int, position: int) -> bool:
        """Whether ``viewer`` (``None``: a spectator) may know the card at ``owner``'s ``position``."""
        if self.phase is Phase.OVER or self.face_up[owner][position]:
            return True
        return viewer is not None and (owner, position) in self.known[viewer]

    @property
    def mid_turn(self) -> bool:
        """Whether the player to move is in the middle of a turn (holds a card, flips, chooses, uses a power)."""
        return self.phase in (Phase.PLACE, Phase.FLIP, Phase.CHOOSE, Phase.POWER)

    def all_cards(self) -> list[GCard]:
        """Every card of the hole, wherever it lies (for conservation checks)."""
        out = [c for g in self.grids for c in g if c is not None] + list(self.stock) + list(self.discard)
        out += [c for cards in self.aside for c in cards] + list(self.offered)
        if self.held is not None:
            out.append(self.held)
        return out

    def flip_offered(self) -> bool:
        """Whether discarding a drawn card now leads to the flip phase (for the player to move)."""
        rule = self.rules.flip_after_discard
        if rule is FlipRule.NONE or all(self.face_up[self.turn]):
            return False
        if rule is FlipRule.ENDGAME:  # only once some player has at most one face-down card
            return any(sum(not up for up in row) <= 1 for row in self.face_up)
        return True

    def legal_moves(self, seat: int | None = None) -> list[Move]:
        """Every move ``seat`` (default: the seat to move) may make now."""
        if self.phase is Phase.OVER:
            return []
        seat = self.to_move if seat is None else seat
        if seat is None or not 0 <= seat < self.players:
            return []
        rules = self.rules
        if self.phase is Phase.SETUP:
            if self.ready[seat]:
                return []
            return [Reveal(c) for c in combinations(range(rules.cards_per_grid), rules.start_cards)]
        if seat != self.turn:
            return []
        down = [p for p, up in enumerate(self.face_up[seat]) if not up]
        if self.phase is Phase.DRAW:
            moves: list[Move] = [DrawStock()]
            if self.discard:
                moves.append(DrawDiscard())
            if rules.knocking and self.ender is None:
                moves.append(Knock())
            if rules.peek_stroke:
                moves += [PeekStroke(p) for p in down]
            if rules.flip_as_turn:
                moves += [Flip(p) for p in down]
            if rules.early_out and self.ender is None and 1 <= len(down) <= 2:
                moves.append(FlipAll())
            return moves
        if self.phase is Phase.PLACE:
            moves = [Swap(p) for p, card in enumerate(self.grids[seat]) if card is not None]
            if self.held_from is Source.STOCK or not rules.taken_discard_must_swap:
                moves.append(Discard())
            return moves + _power_play().moves(self, seat)
        if self.phase in (Phase.CHOOSE, Phase.POWER):
            return _power_play().moves(self, seat)
        # FLIP
        moves = [Flip(p) for p in down]
        if rules.flip_after_discard is not FlipRule.COMPULSORY:
            moves.append(Pass())
        return moves

    # -- moves ---------------------------------------------------------------------------------------------
    def apply(self, seat: int, move: Move) -> HoleState:
        """The state after ``seat`` makes ``move``; raises :class:`IllegalMove` when the rules refuse it."""
        if self.phase is Phase.OVER:
            raise IllegalMove(Refusal.HOLE_OVER, "the hole is over")
        if not 0 <= seat < self.players:
            raise IllegalMove(Refusal.NO_SUCH_SEAT, f"seat {seat} does not exist")
        if self.rules.peeks_stay_visible:
            return self._move(seat, move)
        # The strict game: a seat's glimpses last until its own next move, so the answer to a move shows what it let
        # the mover see even when bots move after it. Each seat glimpses what it comes to know by any move, a known
        # place whose card changed (a card swapped in where it knew the old one) and what it looks at (a peek shows
        # its card even when the seat knew it); only cards it still knows stay shown.
        start = replace(self, glimpsed=tuple(frozenset() if s == seat else g for s, g in enumerate(self._glimpses())))
        after = start._move(seat, move)
        changed = frozenset(
            (owner, p)
            for owner, (old_grid, new_grid) in enumerate(zip(self.grids, after.grids, strict=True))
            for p, card in enumerate(new_grid)
            if p >= len(old_grid) or old_grid[p] != card
        )
        glimpsed = tuple(
            (g & new) | (new - old) | (new & changed)
            for g, new, old in zip(after._glimpses(), after.known, self.known, strict=True)
        )
        return replace(after, glimpsed=glimpsed)

    def _move(self, seat: int, move: Move) -> HoleState:
        if self.phase is Phase.SETUP:
            return self._setup(seat, move)
        if seat != self.turn:
            raise IllegalMove(Refusal.NOT_YOUR_TURN, f"it is seat {self.turn}'s turn")
        if self.phase is Phase.DRAW:
            return self._draw(seat, move)
        if self.phase is Phase.PLACE:
            return self._place(seat, move)
        if self.phase is Phase.FLIP:
            return self._flip(seat, move)
        return _power_play().apply(self, seat, move)  # CHOOSE, POWER: the rest of a power card's turn

    def _glimpses(self) -> tuple[frozenset[Slot], ...]:
        return self.glimpsed or tuple(frozenset() for _ in range(self.players))

    def look(self, seat: int, slots: frozenset[Slot]) -> HoleState:
        """The state once ``seat`` has looked at the face-down cards at ``slots`` (a peek): it knows them, and in
        the strict game its view shows them until its next move, even those it knew before."""
        known = tuple(k | slots if s == seat else k for s, k in enumerate(self.known))
        if self.rules.peeks_stay_visible:
            return replace(self, known=known)
        glimpsed = tuple(g | slots if s == seat else g for s, g in enumerate(self._glimpses()))
        return replace(self, known=known, glimpsed=glimpsed)

    def _check_position(self, position: int, seat: int) -> None:
        if not 0 <= position < len(self.grids[seat]):
            raise IllegalMove(Refusal.NO_SUCH_POSITION, f"position {position} is not in the grid")
        if self.grids[seat][position] is None:
            raise IllegalMove(Refusal.NO_SUCH_POSITION, f"position {position} is empty")

    def _setup(self, seat: int, move: Move) -> HoleState:
        if not isinstance(move, Reveal):
            raise IllegalMove(Refusal.WRONG_PHASE, "first turn up (or peek at) your start cards")
        if self.ready[seat]:
            raise IllegalMove(Refusal.ALREADY_REVEALED, "your start cards are already chosen")
        rules = self.rules
        if len(move.positions) != rules.start_cards:
            raise IllegalMove(Refusal.WRONG_REVEAL_COUNT, f"choose exactly {rules.start_cards} cards")
        if len(set(move.positions)) != len(move.positions):
            raise IllegalMove(Refusal.DUPLICATE_POSITION, "a position is named twice")
        for p in move.positions:
            self._check_position(p, seat)
        face_up = list(self.face_up)
        known = list(self.known)
        if rules.start_mode is StartMode.TURN_UP:
            row = list(face_up[seat])
            for p in move.positions:
                row[p] = True
            face_up[seat] = tuple(row)
        else:
            known[seat] = known[seat] | {(seat, p) for p in move.positions}
        ready = tuple(True if s == seat else r for s, r in enumerate(self.ready))
        state = replace(self, face_up=tuple(face_up), known=tuple(known), ready=ready)
        if all(ready):
            state = replace(state, phase=Phase.DRAW, turn=self.first)
        return state

    def _draw(self, seat: int, move: Move) -> HoleState:
        rules = self.rules
        if isinstance(move, DrawStock):
            if not self.stock:
                raise IllegalMove(Refusal.STOCK_EMPTY, "the stock is empty")
            drawn = self.stock[-1]
            state = replace(self, stock=self.stock[:-1], held=drawn, held_from=Source.STOCK, phase=Phase.PLACE)
            return state.seen(drawn)
        if isinstance(move, DrawDiscard):
            if not self.discard:
                raise IllegalMove(Refusal.DISCARD_PILE_EMPTY, "the discard pile is empty")
            return replace(
                self, discard=self.discard[:-1], held=self.discard[-1], held_from=Source.DISCARD, phase=Phase.PLACE
            )
        if isinstance(move, Knock):
            if not rules.knocking:
                raise IllegalMove(Refusal.KNOCK_NOT_ALLOWED, "these rules do not allow knocking")
            if self.ender is not None:
                raise IllegalMove(Refusal.ALREADY_KNOCKED, f"seat {self.ender} has already ended the hole")
            state = replace(self, ender=seat, end_reason=EndReason.KNOCK)
            if not rules.final_turns:
                return state._finish(EndReason.KNOCK)
            return state.end_turn(seat, jack=False, check_out=False)
        if isinstance(move, PeekStroke):
            if not rules.peek_stroke:
                raise IllegalMove(Refusal.PEEK_NOT_ALLOWED, "these rules have no peek stroke")
            self._check_position(move.position, seat)
            if self.face_up[seat][move.position]:
                raise IllegalMove(Refusal.ALREADY_FACE_UP, f"position {move.position} is face up")
            strokes = tuple(n + rules.peek_stroke if s == seat else n for s, n in enumerate(self.strokes))
            looked = replace(self, strokes=strokes).look(seat, frozenset({(seat, move.position)}))
            return looked.end_turn(seat, jack=False)
        if isinstance(move, Flip) and rules.flip_as_turn:  # house rule: turning up a card is the whole turn
            return self._turn_up(seat, move.position).end_turn(seat, jack=False)
        if isinstance(move, FlipAll):
            down = [p for p, up in enumerate(self.face_up[seat]) if not up]
            if not rules.early_out or self.ender is not None or not 1 <= len(down) <= 2:
                raise IllegalMove(
                    Refusal.EARLY_OUT_NOT_ALLOWED,
                    "going out early needs the house rule, nobody out yet, and one or two face-down cards",
                )
            state = self
            for p in down:
                state = state._turn_up(seat, p)
            return state.end_turn(seat, jack=False)
        raise IllegalMove(Refusal.WRONG_PHASE, "draw first: from the stock or the discard pile")

    def _turn_up(self, seat: int, position: int) -> HoleState:
        """``seat`` turns up its own face-down card at ``position``."""
        self._check_position(position, seat)
        if self.face_up[seat][position]:
            raise IllegalMove(Refusal.ALREADY_FACE_UP, f"position {position} is already face up")
        face_up = list(self.face_up)
        face_up[seat] = _set(face_up[seat], position, True)
        card = self.grids[seat][position]
        assert card is not None  # checked above
        return replace(self, face_up=tuple(face_up)).seen(card)

    def seen(self, card: GCard) -> HoleState:
        """The state once ``card`` has been shown (drawn from the stock, turned up): a card whose power cancels a
        knock (the black king of Powers) cancels a standing knock."""
        if self.ender is None or self.end_reason is not EndReason.KNOCK:
            return self
        if self.rules.power_of(card) is not Power.CANCEL_KNOCK:
            return self
        return replace(self, ender=None, end_reason=None)

    def _place(self, seat: int, move: Move) -> HoleState:
        rules = self.rules
        held = self.held
        assert held is not None
        if isinstance(move, Swap):
            self._check_position(move.position, seat)
            p = move.position
            old = self.grids[seat][p]
            assert old is not None  # checked above
            grids = list(self.grids)
            grids[seat] = _set(grids[seat], p, held)
            face_up = list(self.face_up)
            face_up[seat] = _set(face_up[seat], p, rules.swap_face_up)
            public = self.held_from is Source.DISCARD
            known = tuple(
                (k | {(seat, p)}) if (s == seat or public) else (k - {(seat, p)}) for s, k in enumerate(self.known)
            )
            state = replace(
                self,
                grids=tuple(grids),
                face_up=tuple(face_up),
                known=known,
                discard=(*self.discard, old),
                held=None,
                held_from=None,
            )
            return state.end_turn(seat, jack=_is_jack(old))
        if isinstance(move, Discard):
            if self.held_from is Source.DISCARD and rules.taken_discard_must_swap:
                raise IllegalMove(
                    Refusal.MUST_SWAP_TAKEN_DISCARD, "a card taken from the discard pile must be swapped in"
                )
            state = replace(self, discard=(*self.discard, held), held=None, held_from=None)
            if self.flip_offered():
                return replace(state, phase=Phase.FLIP)
            return state.end_turn(seat, jack=_is_jack(held))
        if isinstance(move, UsePower):
            return _power_play().apply(self, seat, move)
        raise IllegalMove(Refusal.WRONG_PHASE, "you hold a card: swap it in or discard it")

    def _flip(self, seat: int, move: Move) -> HoleState:
        rules = self.rules
        top = self.discard[-1]
        if isinstance(move, Pass):
            if rules.flip_after_discard is FlipRule.COMPULSORY:
                raise IllegalMove(Refusal.FLIP_REQUIRED, "these rules make you turn up a card")
            return self.end_turn(seat, jack=_is_jack(top))
        if isinstance(move, Flip):
            return self._turn_up(seat, move.position).end_turn(seat, jack=_is_jack(top))
        optional = rules.flip_after_discard is not FlipRule.COMPULSORY
        raise IllegalMove(Refusal.WRONG_PHASE, "turn up a face-down card" + (" or pass" if optional else ""))

    # -- turn bookkeeping ------------------------------------------------------------------------------------
    def end_turn(self, seat: int, *, jack: bool, check_out: bool = True) -> HoleState:
        """The state once ``seat``'s turn is over (``jack``: a jack landed on the discard pile): who goes out,
        whose turn is next, the end of the hole, a fresh stock."""
        rules = self.rules
        state = replace(self, phase=Phase.DRAW, turns=self.turns + 1, charges=0, used_powers=())
        if self.went_out is None and all(self.face_up[seat]):
            state = replace(state, went_out=seat)
        ender = self.ender
        if check_out and ender is None and rules.end_on_all_face_up and all(self.face_up[seat]):
            ender = seat
            state = replace(state, ender=seat, end_reason=EndReason.ALL_FACE_UP)
            if rules.look_before_last_turn:  # the others look at their own face-down cards before their last turn
                for s in range(self.players):
                    if s != seat:
                        state = state.look(s, frozenset((s, p) for p, up in enumerate(self.face_up[s]) if not up))
            if not rules.final_turns:
                return state._finish(EndReason.ALL_FACE_UP)
        steps = 2 if (jack and rules.jack_discard_skips_next) else 1
        nxt = seat
        for _ in range(steps):
            nxt = (nxt + 1) % self.players
            if nxt == ender:
                assert state.end_reason is not None
                return state._finish(state.end_reason)
        if state.turns >= rules.max_rounds * self.players:
            return state._finish(EndReason.ROUND_LIMIT)
        state = replace(state, turn=nxt)
        if not state.stock:
            if rules.stock_out is StockOut.RESHUFFLE and len(state.discard) > 1:
                fresh = shuffled(list(state.discard[:-1]), f"{self.seed}:stock:{self.reshuffles + 1}")
                state = replace(state, stock=tuple(fresh), discard=state.discard[-1:], reshuffles=self.reshuffles + 1)
            else:
                return state._finish(EndReason.STOCK_OUT)
        return state

    def _finish(self, reason: EndReason) -> HoleState:
        """The hole over for ``reason``: every card turned up."""
        face_up = tuple(tuple(True for _ in g) for g in self.grids)
        return replace(self, phase=Phase.OVER, face_up=face_up, end_reason=reason, held=None, held_from=None)


def _set(row: tuple[T, ...], index: int, value: T) -> tuple[T, ...]:
    return (*row[:index], value, *row[index + 1 :])


def _is_jack(card: GCard | None) -> bool:
    return card is not None and card.rank == 11


def deal(rules: GolfRules, players: int, seed: str, first: int = 0) -> HoleState:
    """Deal a hole: shuffle the decks with ``golf-shuffle-v1`` under ``seed``, deal the grids one card at a time
    round the table, turn the next card up to start the discard pile; the rest is the stock. ``first`` is the
    seat that plays first (the dealer's left)."""
    rules.validate(players)
    if not 0 <= first < players:
        raise ValueError("first: no such seat")
    cards = shuffled(build_deck(rules.decks_for(players), rules.jokers), seed)
    n = rules.cards_per_grid
    grids = tuple(tuple(cards[s : players * n : players]) for s in range(players))
    rest = cards[players * n :]
    # rest[0] starts the discard pile; the stock is drawn in the order rest[1], rest[2], ... (top last).
    stock = tuple(reversed(rest[1:]))
    fixed = rules.start_fixed and rules.start_cards > 0
    ready = tuple(rules.start_cards == 0 or fixed for _ in range(players))
    face_up = tuple(tuple(False for _ in range(n)) for _ in range(players))
    known: tuple[frozenset[Slot], ...] = tuple(frozenset() for _ in range(players))
    if fixed:  # the start cards are the first positions (the top row), not the players' choice
        start = range(rules.start_cards)
        if rules.start_mode is StartMode.TURN_UP:
            face_up = tuple(tuple(p in start for p in range(n)) for _ in range(players))
        else:
            known = tuple(frozenset((s, p) for p in start) for s in range(players))
    return HoleState(
        rules=rules,
        seed=seed,
        first=first,
        grids=grids,
        face_up=face_up,
        known=known,
        stock=stock,
        discard=(rest[0],),
        phase=Phase.DRAW if all(ready) else Phase.SETUP,
        turn=first,
        ready=ready,
        strokes=tuple(0 for _ in range(players)),
        glimpsed=known,
        shields=tuple(frozenset() for _ in range(players)),
        aside=tuple(() for _ in range(players)),
    )


class PowerPlay(Protocol):
    """The power cards' part of a turn: the ``UsePower`` moves a card drawn from the stock allows, and the phases
    that follow some powers (``CHOOSE``, ``POWER``). :mod:`golf.engine.cardgolf.powers` implements it and installs
    itself when the package is imported: the powers depend on the state, never the other way round."""

    def moves(self, state: HoleState, seat: int) -> list[Move]:
        """The power moves ``seat`` may make now (none when the card in hand has no power)."""
        ...

    def apply(self, state: HoleState, seat: int, move: Move) -> HoleState:
        """The state after a power move (``UsePower`` in ``PLACE``, anything in ``CHOOSE`` and ``POWER``)."""
        ...


_installed: list[PowerPlay] = []


def install_powers(play: PowerPlay) -> None:
    """Install the power cards' rules (called once, by :mod:`golf.engine.cardgolf.powers`)."""
    _installed[:] = [play]


def _power_play() -> PowerPlay:
    if not _installed:  # the package's __init__ imports the powers, so this means a broken import order
        raise RuntimeError("golf.engine.cardgolf.powers is not installed: import golf.engine.cardgolf")
    return _installed[0]
