"""Power cards (Cambio, Cabo, Powers, Cutthroat): the moves a power allows and what using one does.

This module depends on the state and installs itself into it (:func:`~golf.engine.cardgolf.state.install_powers`);
the state never imports it. Each power is one :class:`PowerCard` in :data:`CARDS`: its moves, the arguments of
``UsePower`` it takes, and what it does.

Who knows what afterwards: positions are public, so whoever knew a card still knows it after it moves (a blind
swap, swapped lines); a shuffled grid's face-down cards are known to nobody; a peek is known to the peeker only.
A shielded place (the 5 of Powers) may not be looked at, taken, moved or turned by an opponent's power.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.grid import geometry
from golf.engine.cardgolf.moves import IllegalMove, Keep, Move, Pass, Refusal, UsePower
from golf.engine.cardgolf.options import Power
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.state import HoleState, Phase, Slot, Source, install_powers
from golf.engine.shuffle import shuffled

Outcome = tuple[HoleState, GCard | None]
"""The state after a power, and the card that landed on the discard pile last (a jack there may skip a turn)."""


@dataclass(frozen=True, slots=True)
class PowerCard:
    """One power: the ``UsePower`` moves it allows ``seat`` now, the arguments it takes, what it does. ``use``
    gets the state with the hand already emptied and the power card (``None`` when a 2 lends the power)."""

    takes: frozenset[str]
    moves: Callable[[HoleState, int], list[UsePower]]
    use: Callable[[HoleState, int, UsePower, GCard | None], Outcome]
    lendable: bool = True
    """Whether the 2 of Powers may lend this power (not those that move the power card itself)."""


# -- helpers -------------------------------------------------------------------------------------------------------
def _bad(message: str) -> IllegalMove:
    return IllegalMove(Refusal.BAD_TARGET, message)


def _opponents(state: HoleState, seat: int) -> list[int]:
    return [s for s in range(state.players) if s != seat]


def _open(state: HoleState, owner: int) -> list[int]:
    """``owner``'s places holding a card that an opponent's power may touch (not shielded)."""
    grid = state.grids[owner]
    return [p for p in range(len(grid)) if grid[p] is not None and p not in state.shields[owner]]


def _held(state: HoleState, owner: int) -> list[int]:
    """``owner``'s places holding a card."""
    return [p for p, card in enumerate(state.grids[owner]) if card is not None]


def _opponent(state: HoleState, seat: int, move: UsePower) -> int:
    if move.seat is None or move.seat == seat:
        raise _bad("name an opponent's seat")
    if not 0 <= move.seat < state.players:
        raise IllegalMove(Refusal.NO_SUCH_SEAT, f"seat {move.seat} does not exist")
    return move.seat


def _position(state: HoleState, owner: int, position: int | None, *, attack: bool = False) -> int:
    """A place of ``owner``'s grid that holds a card (``attack``: and that ``owner`` did not shield)."""
    if position is None:
        raise _bad("name a position")
    if not 0 <= position < len(state.grids[owner]):
        raise IllegalMove(Refusal.NO_SUCH_POSITION, f"position {position} is not in the grid")
    if state.grids[owner][position] is None:
        raise IllegalMove(Refusal.NO_SUCH_POSITION, f"position {position} is empty")
    if attack and position in state.shields[owner]:
        raise IllegalMove(Refusal.SHIELDED, f"seat {owner} shielded position {position}")
    return position


def _own(seat: int, move: UsePower) -> None:
    if move.seat not in (None, seat):
        raise _bad("this power works on your own cards: leave out the seat or name your own")


def _moved(known: frozenset[Slot], mapping: dict[Slot, Slot]) -> frozenset[Slot]:
    """Knowledge after cards move from key slots to value slots (every moved slot is a key)."""
    kept = {s for s in known if s not in mapping}
    kept |= {mapping[s] for s in known if s in mapping}
    return frozenset(kept)


Grids = tuple[tuple[GCard | None, ...], ...]


def _grid(rows: Grids, owner: int, grid: list[GCard | None]) -> Grids:
    return tuple(tuple(grid) if s == owner else g for s, g in enumerate(rows))


def _ups(rows: tuple[tuple[bool, ...], ...], owner: int, up: list[bool]) -> tuple[tuple[bool, ...], ...]:
    return tuple(tuple(up) if s == owner else f for s, f in enumerate(rows))


def _put(state: HoleState, owner: int, place: int, card: GCard | None, up: bool) -> HoleState:
    """``card`` (``None``: nothing, an empty place) lies at ``owner``'s ``place``, face up or down; a place one past
    the grid's last is a new place."""
    grid, face = list(state.grids[owner]), list(state.face_up[owner])
    if place == len(grid):
        grid.append(card)
        face.append(up)
    else:
        grid[place], face[place] = card, up
    return replace(state, grids=_grid(state.grids, owner, grid), face_up=_ups(state.face_up, owner, face))


def _discarding(state: HoleState, card: GCard | None) -> Outcome:
    """The power card goes to the discard pile."""
    if card is None:
        return state, None
    return replace(state, discard=(*state.discard, card)), card


def _exchange(state: HoleState, a: Slot, b: Slot) -> HoleState:
    """Cards at slots ``a`` and ``b`` change places (with their face); whoever knew one still knows it."""
    grids = [list(g) for g in state.grids]
    face_up = [list(f) for f in state.face_up]
    (sa, pa), (sb, pb) = a, b
    grids[sa][pa], grids[sb][pb] = grids[sb][pb], grids[sa][pa]
    face_up[sa][pa], face_up[sb][pb] = face_up[sb][pb], face_up[sa][pa]
    return replace(
        state,
        grids=tuple(tuple(g) for g in grids),
        face_up=tuple(tuple(f) for f in face_up),
        known=tuple(_moved(k, {a: b, b: a}) for k in state.known),
    )


# -- the powers ----------------------------------------------------------------------------------------------------
def _peek_own_moves(state: HoleState, seat: int) -> list[UsePower]:
    return [UsePower(position=p) for p, up in enumerate(state.face_up[seat]) if not up]


def _peek_own(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    _own(seat, move)
    p = _position(state, seat, move.position)
    if state.face_up[seat][p]:
        raise IllegalMove(Refusal.ALREADY_FACE_UP, f"position {p} is face up")
    return _discarding(state.look(seat, frozenset({(seat, p)})), card)


def _peek_opponent_moves(state: HoleState, seat: int) -> list[UsePower]:
    return [UsePower(s, p) for s in _opponents(state, seat) for p in _open(state, s) if not state.face_up[s][p]]


def _peek_opponent(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    s = _opponent(state, seat, move)
    p = _position(state, s, move.position, attack=True)
    if state.face_up[s][p]:
        raise IllegalMove(Refusal.ALREADY_FACE_UP, f"position {p} is face up")
    return _discarding(state.look(seat, frozenset({(s, p)})), card)


def _blind_swap_moves(state: HoleState, seat: int) -> list[UsePower]:
    mine = _held(state, seat)
    return [UsePower(s, p, q) for s in _opponents(state, seat) for p in _open(state, s) for q in mine]


def _blind_swap(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    s = _opponent(state, seat, move)
    p = _position(state, s, move.position, attack=True)
    q = _position(state, seat, move.own)
    return _discarding(_exchange(state, (seat, q), (s, p)), card)


def _shuffle_moves(state: HoleState, seat: int) -> list[UsePower]:
    return [UsePower(s) for s in _opponents(state, seat)]


def _shuffle(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    """The opponent's unshielded cards change places at random; nobody knows where its face-down cards lie."""
    s = _opponent(state, seat, move)
    places = _open(state, s)
    order = shuffled(list(places), f"{state.seed}:power:{state.powers_used + 1}")
    grid, up = list(state.grids[s]), list(state.face_up[s])
    for place, source in zip(places, order, strict=True):
        grid[place], up[place] = state.grids[s][source], state.face_up[s][source]
    moved = set(places)
    known = tuple(frozenset(slot for slot in k if slot[0] != s or slot[1] not in moved) for k in state.known)
    state = replace(state, grids=_grid(state.grids, s, grid), face_up=_ups(state.face_up, s, up), known=known)
    return _discarding(state, card)


def _give_moves(state: HoleState, seat: int) -> list[UsePower]:
    return [UsePower(s, p) for s in _opponents(state, seat) for p in _open(state, s)]


def _give(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    """The power card replaces an opponent's card, face down (everyone saw it go there); theirs is discarded."""
    assert card is not None  # not lendable: the card itself moves
    s = _opponent(state, seat, move)
    p = _position(state, s, move.position, attack=True)
    old = state.grids[s][p]
    assert old is not None  # _position checked it
    state = replace(_put(state, s, p, card, False), known=tuple(k | {(s, p)} for k in state.known))
    return replace(state, discard=(*state.discard, old)), old


def _lines(rules: GolfRules) -> list[tuple[int, int]]:
    """Pairs of swappable lines: two rows or two columns (lines rows.. are columns)."""
    rows, cols = rules.rows, rules.cols
    pairs = [(a, b) for a in range(rows) for b in range(a + 1, rows)]
    pairs += [(rows + a, rows + b) for a in range(cols) for b in range(a + 1, cols)]
    return pairs


def _line_places(rules: GolfRules, a: int, b: int) -> list[tuple[int, int]]:
    geo = geometry(rules.rows, rules.cols)
    lines = geo.row_lines + geo.col_lines
    return list(zip(lines[a], lines[b], strict=True))


def _swap_lines_moves(state: HoleState, seat: int) -> list[UsePower]:
    rules = state.rules
    return [
        UsePower(s, a, b)
        for s in _opponents(state, seat)
        for a, b in _lines(rules)
        if not any(x in state.shields[s] or y in state.shields[s] for x, y in _line_places(rules, a, b))
    ]


def _swap_lines(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    s = _opponent(state, seat, move)
    rules = state.rules
    count = rules.rows + rules.cols
    a, b = move.position, move.own
    if a is None or b is None or not (0 <= a < count and 0 <= b < count):
        raise _bad("name two lines")
    if a == b or (a < rules.rows) != (b < rules.rows):
        raise _bad("swap two different rows or two different columns")
    pairs = _line_places(rules, a, b)
    if any(x in state.shields[s] or y in state.shields[s] for x, y in pairs):
        raise IllegalMove(Refusal.SHIELDED, f"seat {s} shielded a place of those lines")
    mapping: dict[Slot, Slot] = {}
    grid, up = list(state.grids[s]), list(state.face_up[s])
    for x, y in pairs:
        grid[x], grid[y] = state.grids[s][y], state.grids[s][x]
        up[x], up[y] = state.face_up[s][y], state.face_up[s][x]
        mapping[(s, x)], mapping[(s, y)] = (s, y), (s, x)
    state = replace(
        state,
        grids=_grid(state.grids, s, grid),
        face_up=_ups(state.face_up, s, up),
        known=tuple(_moved(k, mapping) for k in state.known),
    )
    return _discarding(state, card)


def _turn_moves(state: HoleState, seat: int) -> list[UsePower]:
    theirs = [UsePower(s, p) for s in _opponents(state, seat) for p in _open(state, s) if not state.face_up[s][p]]
    return theirs + [UsePower(position=p) for p in _held(state, seat) if state.face_up[seat][p]]


def _turn(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    """Turn an opponent's face-down card up (a black king so shown cancels a knock), or one of yours down."""
    if move.seat is None or move.seat == seat:
        p = _position(state, seat, move.position)
        if not state.face_up[seat][p]:
            raise _bad("turn one of your face-up cards face down, or an opponent's face-down card up")
        known = tuple(k | {(seat, p)} for k in state.known)  # everyone saw it before it was turned down
        return _discarding(replace(_put(state, seat, p, state.grids[seat][p], False), known=known), card)
    s = _opponent(state, seat, move)
    p = _position(state, s, move.position, attack=True)
    if state.face_up[s][p]:
        raise IllegalMove(Refusal.ALREADY_FACE_UP, f"position {p} is already face up")
    shown = state.grids[s][p]
    assert shown is not None  # _position checked it
    return _discarding(_put(state, s, p, shown, True).seen(shown), card)


def _draw_two_moves(state: HoleState, seat: int) -> list[UsePower]:
    return [UsePower()] if state.stock else []


def _draw_two(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    """The next two cards of the stock (or the last one) join the power card in the mover's hand: ``CHOOSE``."""
    if not state.stock:
        raise _bad("the stock is empty")
    drawn = tuple(reversed(state.stock[-2:]))
    offered = ((card,) if card is not None else ()) + drawn
    state = replace(state, stock=state.stock[: len(state.stock) - len(drawn)], offered=offered, phase=Phase.CHOOSE)
    for c in drawn:
        state = state.seen(c)
    return state, None


def _shield_moves(state: HoleState, seat: int) -> list[UsePower]:
    return [UsePower(position=p) for p in _held(state, seat) if p not in state.shields[seat]]


def _shield(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    """Shield one of your places; the 5 is kept aside, face up, and scores nothing."""
    _own(seat, move)
    p = _position(state, seat, move.position)
    if p in state.shields[seat]:
        raise _bad(f"position {p} is already shielded")
    shields = tuple(k | {p} if s == seat else k for s, k in enumerate(state.shields))
    aside = state.aside
    if card is not None:
        aside = tuple((*a, card) if s == seat else a for s, a in enumerate(aside))
    return replace(state, shields=shields, aside=aside), None


def _trade_moves(state: HoleState, seat: int) -> list[UsePower]:
    mine = _held(state, seat)
    return [
        UsePower(s, p, q) for s in _opponents(state, seat) for p in _open(state, s) if state.face_up[s][p] for q in mine
    ]


def _trade(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    """Cutthroat's king: it takes an opponent's face-up card's place (face up); that card goes into your grid,
    face up, at ``own``; the card it replaces is discarded."""
    assert card is not None  # not lendable: the card itself moves
    s = _opponent(state, seat, move)
    p = _position(state, s, move.position, attack=True)
    q = _position(state, seat, move.own)
    if not state.face_up[s][p]:
        raise _bad("trade for one of the opponent's face-up cards")
    taken, old = state.grids[s][p], state.grids[seat][q]
    assert old is not None  # _position checked it
    state = _put(_put(state, s, p, card, True), seat, q, taken, True)
    known = tuple(k - {(seat, q)} for k in state.known)
    return replace(state, known=known, discard=(*state.discard, old)), old


MAX_PLACES = 16
"""A grid never grows past 16 places (positions 0 to 15, as the wire contract names them)."""


def _has_room(state: HoleState, owner: int) -> bool:
    grid = state.grids[owner]
    return None in grid or len(grid) < MAX_PLACES


def _add_or_remove_moves(state: HoleState, seat: int) -> list[UsePower]:
    add = [UsePower(s) for s in _opponents(state, seat) if _has_room(state, s)] if state.stock else []
    mine = _held(state, seat)
    return add + ([UsePower(position=p) for p in mine] if len(mine) > 1 else [])


def _add_or_remove(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    """The ace of Powers: the top card of the stock goes face down, unseen, into an opponent's first empty place
    (or a new place after their grid) with ``UsePower(seat)``; or one of your cards goes to the discard pile and
    leaves its place empty with ``UsePower(position=mine)`` (you keep at least one card)."""
    if move.seat is not None and move.seat != seat:
        if move.position is not None:
            raise IllegalMove(Refusal.MALFORMED_MOVE, "adding a card names the opponent only: leave out position")
        s = _opponent(state, seat, move)
        if not state.stock:
            raise _bad("the stock is empty: no card to add")
        if not _has_room(state, s):
            raise _bad(f"seat {s}'s grid is full ({MAX_PLACES} places)")
        grid = state.grids[s]
        place = grid.index(None) if None in grid else len(grid)
        known = tuple(k - {(s, place)} for k in state.known)
        state = replace(_put(state, s, place, state.stock[-1], False), stock=state.stock[:-1], known=known)
        return _discarding(state, card)
    p = _position(state, seat, move.position)
    if len(_held(state, seat)) <= 1:
        raise _bad("keep at least one card")
    old = state.grids[seat][p]
    assert old is not None  # _position checked it
    state = replace(
        _put(state, seat, p, None, True),
        known=tuple(k - {(seat, p)} for k in state.known),
        shields=tuple(k - {p} if v == seat else k for v, k in enumerate(state.shields)),
        discard=(*state.discard, old),
    )
    return _discarding(state, card)


def _no_moves(state: HoleState, seat: int) -> list[UsePower]:
    return []


def _passive(state: HoleState, seat: int, move: UsePower, card: GCard | None) -> Outcome:
    raise IllegalMove(Refusal.NO_POWER, "this card's power works by being seen, not by a move")


CARDS: dict[Power, PowerCard] = {
    Power.PEEK_OWN: PowerCard(frozenset({"seat", "position"}), _peek_own_moves, _peek_own),
    Power.PEEK_OPPONENT: PowerCard(frozenset({"seat", "position"}), _peek_opponent_moves, _peek_opponent),
    Power.BLIND_SWAP: PowerCard(frozenset({"seat", "position", "own"}), _blind_swap_moves, _blind_swap),
    Power.SHUFFLE_OPPONENT: PowerCard(frozenset({"seat"}), _shuffle_moves, _shuffle),
    Power.GIVE_TO_OPPONENT: PowerCard(frozenset({"seat", "position"}), _give_moves, _give, lendable=False),
    Power.SWAP_LINES: PowerCard(frozenset({"seat", "position", "own"}), _swap_lines_moves, _swap_lines),
    Power.TURN_UP_OR_DOWN: PowerCard(frozenset({"seat", "position"}), _turn_moves, _turn),
    Power.DRAW_TWO: PowerCard(frozenset(), _draw_two_moves, _draw_two),
    Power.SHIELD: PowerCard(frozenset({"seat", "position"}), _shield_moves, _shield),
    Power.TRADE_FOR_UP_CARD: PowerCard(frozenset({"seat", "position", "own"}), _trade_moves, _trade, lendable=False),
    Power.ADD_OR_REMOVE: PowerCard(frozenset({"seat", "position"}), _add_or_remove_moves, _add_or_remove),
    Power.CANCEL_KNOCK: PowerCard(frozenset(), _no_moves, _passive, lendable=False),
}
"""Every power the engine plays but ``TWO_POWERS``, which lends the others (see :class:`_Play`)."""


_RANKS = "A23456789TJQK"


def _lends_from(rules: GolfRules, key: str) -> bool:
    """Whether a 2 may lend the power the rules give the card(s) ``key`` (a rank or a card code): with
    ``two_powers_from_three`` only the ranks 3 to king (seed 004), so never the ace's power nor a joker's."""
    if not rules.two_powers_from_three:
        return True
    return _RANKS.find(key[0]) + 1 >= 3  # find gives -1 for a joker's X


def lendable(rules: GolfRules) -> list[Power]:
    """The powers a 2 of Powers may lend under ``rules``: the table's other powers that work by a move and do not
    move the power card itself (with ``two_powers_from_three``, of the cards 3 to king only), in the order the
    rules list them."""
    out: list[Power] = []
    for key, power in rules.powers:
        card = CARDS.get(power)
        if card is not None and card.lendable and power not in out and _lends_from(rules, key):
            out.append(power)
    return out


def _check_arguments(move: UsePower, power: Power, lent: bool) -> None:
    given = {name for name in ("seat", "position", "own") if getattr(move, name) is not None}
    extra = sorted(given - CARDS[power].takes)
    if move.power is not None and not lent and move.power != power.value:
        extra.append("power")
    if extra:
        raise IllegalMove(
            Refusal.MALFORMED_MOVE, f"the {power.value} power does not take {', '.join(extra)}: leave it out"
        )


def _named(move: UsePower, rules: GolfRules, used: tuple[str, ...]) -> Power:
    """The power a 2 lends, named by ``move.power``."""
    if move.power is None:
        raise _bad("name the power to use (power)")
    choices = {p.value: p for p in lendable(rules)}
    if move.power not in choices:
        raise IllegalMove(Refusal.POWER_USED, f"no power {move.power!r} to use; choose from {sorted(choices)}")
    if move.power in used:
        raise IllegalMove(Refusal.POWER_USED, f"the {move.power} power is used already this turn")
    return choices[move.power]


class _Play:
    """The power cards' part of a turn (:class:`~golf.engine.cardgolf.state.PowerPlay`)."""

    def moves(self, state: HoleState, seat: int) -> list[Move]:
        if state.phase is Phase.CHOOSE:
            places = _held(state, seat)
            return [Keep(c, p) for c in range(len(state.offered)) for p in places]
        if state.phase is Phase.POWER:
            return [*self._lent_moves(state, seat), Pass()]
        held = state.held
        if held is None or state.held_from is not Source.STOCK:
            return []
        power = state.rules.power_of(held)
        if power is Power.TWO_POWERS:
            return list(self._lent_moves(state, seat))
        card = CARDS.get(power) if power is not None else None
        return list(card.moves(state, seat)) if card is not None else []

    def _lent_moves(self, state: HoleState, seat: int) -> list[UsePower]:
        out: list[UsePower] = []
        for power in lendable(state.rules):
            if power.value not in state.used_powers:
                out += [replace(m, power=power.value) for m in CARDS[power].moves(state, seat)]
        return out

    def apply(self, state: HoleState, seat: int, move: Move) -> HoleState:
        if state.phase is Phase.CHOOSE:
            return self._keep(state, seat, move)
        if state.phase is Phase.POWER:
            if isinstance(move, Pass):
                return state.end_turn(seat, jack=False)
            if not isinstance(move, UsePower):
                raise IllegalMove(Refusal.WRONG_PHASE, "use another power (name it), or pass")
            return self._run(state, seat, move, _named(move, state.rules, state.used_powers), None, lent=True)
        assert isinstance(move, UsePower)
        held = state.held
        assert held is not None
        if state.held_from is not Source.STOCK:
            raise IllegalMove(Refusal.NO_POWER, "only a card drawn from the stock has a power")
        own = state.rules.power_of(held)
        if own is None:
            raise IllegalMove(Refusal.NO_POWER, f"{held.code} has no power under these rules")
        empty = replace(state, held=None, held_from=None)
        if own is Power.TWO_POWERS:  # the 2 goes to the discard pile and lends two powers, one after the other
            lent = _named(move, state.rules, ())
            two = replace(empty, discard=(*empty.discard, held), charges=2)
            return self._run(two, seat, move, lent, None, lent=True)
        return self._run(empty, seat, move, own, held, lent=False)

    def _run(
        self, state: HoleState, seat: int, move: UsePower, power: Power, card: GCard | None, *, lent: bool
    ) -> HoleState:
        _check_arguments(move, power, lent)
        after, landed = CARDS[power].use(state, seat, move, card)
        charges = max(state.charges - 1, 0)
        used = (*state.used_powers, power.value) if lent else state.used_powers
        after = replace(after, powers_used=state.powers_used + 1, charges=charges, used_powers=used)
        return self._next(after, seat, landed)

    def _next(self, state: HoleState, seat: int, landed: GCard | None) -> HoleState:
        if state.phase is Phase.CHOOSE:
            return state
        if state.charges > 0 and any(m for m in self._lent_moves(state, seat)):
            return replace(state, phase=Phase.POWER)
        return state.end_turn(seat, jack=landed is not None and landed.rank == 11)

    def _keep(self, state: HoleState, seat: int, move: Move) -> HoleState:
        if not isinstance(move, Keep):
            raise IllegalMove(Refusal.WRONG_PHASE, "keep one of the offered cards: Keep(choice, position)")
        if not 0 <= move.choice < len(state.offered):
            raise _bad(f"choose one of the {len(state.offered)} offered cards (0 to {len(state.offered) - 1})")
        p = _position(state, seat, move.position)
        kept = state.offered[move.choice]
        rest = [c for i, c in enumerate(state.offered) if i != move.choice]
        old = state.grids[seat][p]
        assert old is not None  # _position checked it
        known = tuple(k | {(seat, p)} if s == seat else k - {(seat, p)} for s, k in enumerate(state.known))
        state = replace(
            _put(state, seat, p, kept, state.rules.swap_face_up),
            known=known,
            discard=(*state.discard, *rest, old),
            offered=(),
            phase=Phase.DRAW,
        )
        return self._next(state, seat, old)


install_powers(_Play())
