"""Power cards (Cambio, Cabo, Powers): the moves a power allows and what using one does.

Who knows what afterwards: positions are public, so whoever knew a card still knows it after it moves (a blind
swap, swapped lines); a shuffled grid's face-down cards are known to nobody; a peek is known to the peeker only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from golf.engine.cardgolf.cards import GCard
from golf.engine.cardgolf.grid import geometry
from golf.engine.cardgolf.moves import IllegalMove, Move, Refusal, UsePower
from golf.engine.cardgolf.options import Power
from golf.engine.shuffle import shuffled

if TYPE_CHECKING:
    from golf.engine.cardgolf.state import HoleState, Slot


def _lines(rows: int, cols: int) -> list[tuple[int, int]]:
    """Pairs of swappable lines: two rows or two columns (lines rows.. are columns)."""
    pairs = [(a, b) for a in range(rows) for b in range(a + 1, rows)]
    pairs += [(rows + a, rows + b) for a in range(cols) for b in range(a + 1, cols)]
    return pairs


def power_moves(state: HoleState, seat: int) -> list[Move]:
    """Every ``UsePower`` move the card in ``seat``'s hand allows (drawn from the stock)."""
    assert state.held is not None
    power = state.rules.power_of(state.held)
    if power is None:
        return []
    rules = state.rules
    n = rules.cards_per_grid
    others = [s for s in range(state.players) if s != seat]
    mine_down = [p for p in range(n) if not state.face_up[seat][p]]
    if power is Power.PEEK_OWN:
        return [UsePower(position=p) for p in mine_down]
    if power is Power.PEEK_OPPONENT:
        return [UsePower(s, p) for s in others for p in range(n) if not state.face_up[s][p]]
    if power is Power.BLIND_SWAP:
        return [UsePower(s, p, q) for s in others for p in range(n) for q in range(n)]
    if power is Power.SHUFFLE_OPPONENT:
        return [UsePower(s) for s in others]
    if power is Power.GIVE_TO_OPPONENT:
        return [UsePower(s, p) for s in others for p in range(n)]
    if power is Power.SWAP_LINES:
        return [UsePower(s, a, b) for s in others for a, b in _lines(rules.rows, rules.cols)]
    # TURN_UP_OR_DOWN
    moves: list[Move] = [UsePower(s, p) for s in others for p in range(n) if not state.face_up[s][p]]
    moves += [UsePower(position=p) for p in range(n) if state.face_up[seat][p]]
    return moves


def _bad(message: str) -> IllegalMove:
    return IllegalMove(Refusal.BAD_TARGET, message)


def _opponent(state: HoleState, seat: int, move: UsePower) -> int:
    if move.seat is None or move.seat == seat:
        raise _bad("name an opponent's seat")
    if not 0 <= move.seat < state.players:
        raise IllegalMove(Refusal.NO_SUCH_SEAT, f"seat {move.seat} does not exist")
    return move.seat


def _position(state: HoleState, position: int | None) -> int:
    if position is None:
        raise _bad("name a position")
    if not 0 <= position < state.rules.cards_per_grid:
        raise IllegalMove(Refusal.NO_SUCH_POSITION, f"position {position} is not in the grid")
    return position


def _moved(known: frozenset[Slot], mapping: dict[Slot, Slot]) -> frozenset[Slot]:
    """Knowledge after cards move from key slots to value slots (every moved slot is a key)."""
    kept = {s for s in known if s not in mapping}
    kept |= {mapping[s] for s in known if s in mapping}
    return frozenset(kept)


_TAKES: dict[Power, frozenset[str]] = {
    Power.PEEK_OWN: frozenset({"seat", "position"}),  # ``seat``, if given, must be the player's own
    Power.PEEK_OPPONENT: frozenset({"seat", "position"}),
    Power.BLIND_SWAP: frozenset({"seat", "position", "own"}),
    Power.SHUFFLE_OPPONENT: frozenset({"seat"}),
    Power.GIVE_TO_OPPONENT: frozenset({"seat", "position"}),
    Power.SWAP_LINES: frozenset({"seat", "position", "own"}),
    Power.TURN_UP_OR_DOWN: frozenset({"seat", "position"}),
}
"""The arguments of ``UsePower`` each power uses: naming any other makes the move malformed."""


def _check_arguments(move: UsePower, power: Power) -> None:
    given = {name for name in ("seat", "position", "own") if getattr(move, name) is not None}
    extra = sorted(given - _TAKES[power])
    if extra:
        raise IllegalMove(
            Refusal.MALFORMED_MOVE, f"the {power.value} power does not take {', '.join(extra)}: leave it out"
        )


def apply_power(state: HoleState, seat: int, move: UsePower, power: Power) -> tuple[HoleState, GCard]:
    """The state after ``seat`` uses ``power`` (the held card goes to the discard pile, or, for
    ``GIVE_TO_OPPONENT``, into the opponent's grid) and the card that landed on the discard pile. A move naming an
    argument the power does not use is refused as malformed."""
    _check_arguments(move, power)
    held = state.held
    assert held is not None
    grids = [list(g) for g in state.grids]
    face_up = [list(f) for f in state.face_up]
    known = list(state.known)
    discarded = held
    if power is Power.PEEK_OWN:
        if move.seat not in (None, seat):
            raise _bad("this power looks at one of your own cards")
        p = _position(state, move.position)
        if face_up[seat][p]:
            raise IllegalMove(Refusal.ALREADY_FACE_UP, f"position {p} is face up")
        known[seat] = known[seat] | {(seat, p)}
    elif power is Power.PEEK_OPPONENT:
        s = _opponent(state, seat, move)
        p = _position(state, move.position)
        if face_up[s][p]:
            raise IllegalMove(Refusal.ALREADY_FACE_UP, f"position {p} is face up")
        known[seat] = known[seat] | {(s, p)}
    elif power is Power.BLIND_SWAP:
        s = _opponent(state, seat, move)
        p = _position(state, move.position)
        q = _position(state, move.own)
        grids[seat][q], grids[s][p] = grids[s][p], grids[seat][q]
        face_up[seat][q], face_up[s][p] = face_up[s][p], face_up[seat][q]
        mapping = {(seat, q): (s, p), (s, p): (seat, q)}
        known = [_moved(k, mapping) for k in known]
    elif power is Power.SHUFFLE_OPPONENT:
        s = _opponent(state, seat, move)
        order = shuffled(list(range(len(grids[s]))), f"{state.seed}:power:{state.powers_used + 1}")
        grids[s] = [grids[s][i] for i in order]
        face_up[s] = [face_up[s][i] for i in order]
        known = [frozenset(slot for slot in k if slot[0] != s) for k in known]
    elif power is Power.GIVE_TO_OPPONENT:
        s = _opponent(state, seat, move)
        p = _position(state, move.position)
        discarded = grids[s][p]
        grids[s][p] = held
        face_up[s][p] = False
        known = [k | {(s, p)} for k in known]  # everyone saw the power card go there
    elif power is Power.SWAP_LINES:
        s = _opponent(state, seat, move)
        geo = geometry(state.rules.rows, state.rules.cols)
        lines = geo.row_lines + geo.col_lines
        a, b = move.position, move.own
        if a is None or b is None or not (0 <= a < len(lines) and 0 <= b < len(lines)):
            raise _bad("name two lines")
        if a == b or (a < geo.rows) != (b < geo.rows):
            raise _bad("swap two different rows or two different columns")
        slot_map: dict[Slot, Slot] = {}
        new_grid, new_up = list(grids[s]), list(face_up[s])
        for x, y in zip(lines[a], lines[b], strict=True):
            new_grid[x], new_grid[y] = grids[s][y], grids[s][x]
            new_up[x], new_up[y] = face_up[s][y], face_up[s][x]
            slot_map[(s, x)] = (s, y)
            slot_map[(s, y)] = (s, x)
        grids[s], face_up[s] = new_grid, new_up
        known = [_moved(k, slot_map) for k in known]
    else:  # TURN_UP_OR_DOWN
        if move.seat is None or move.seat == seat:
            p = _position(state, move.position)
            if not face_up[seat][p]:
                raise _bad("turn one of your face-up cards face down, or an opponent's face-down card up")
            face_up[seat][p] = False
            known = [k | {(seat, p)} for k in known]  # everyone saw it before it was turned down
        else:
            s = _opponent(state, seat, move)
            p = _position(state, move.position)
            if face_up[s][p]:
                raise IllegalMove(Refusal.ALREADY_FACE_UP, f"position {p} is already face up")
            face_up[s][p] = True
    new = replace(
        state,
        grids=tuple(tuple(g) for g in grids),
        face_up=tuple(tuple(f) for f in face_up),
        known=tuple(known),
        discard=(*state.discard, discarded),
        held=None,
        held_from=None,
        powers_used=state.powers_used + 1,
    )
    return new, discarded
