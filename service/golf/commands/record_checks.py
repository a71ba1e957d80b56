"""The checks of ``golf verify``: a ``golf.v1.Record`` (format ``golf.record/1``) recomputed from its seed and rules
with the engine alone, never the database.

For every record: the rules text is in its canonical form, the commitment is ``SHA-256(algorithm + "\\n" + seed +
"\\n" + rules)``, and the log's sequence numbers run 1, 2, 3 ... Then:

- a solitaire game: the deal is made again from the seed (``golf-shuffle-v1``, or PySolFC's deal of the number a
  ``pysolfc`` seed names); every entry of the log is replayed from it and must be legal (a move naming its card,
  an AutoPlay run of column plays, an undo of the latest entry in effect as the undo policy allows); the game must
  be over after the last entry, with the record's status and score;
- a card Golf match: the table's options are rebuilt from ``table_options`` and ``rules``, every entry is decoded
  and applied to a table made from the seed (each hole dealt from the match seed, every move one of the seat's
  legal moves); the match must be over after the last entry, ended as the record says, each seat's player, points
  per hole, total and place those of the record (places by total, but a seat that won outright with four alike,
  under ``four_alike_wins_match``, first).

A failed check raises :class:`CheckFailed` with a reason a person can act on.
"""

from __future__ import annotations

from golf.app.errors import AppError
from golf.app.exports import FORMAT, options_from_record
from golf.app.records import AUTOPLAY, UNDO, action_moves
from golf.app.tables.records import TableRecordError, decode_entry, encode_entry
from golf.app.tables.state import apply_entry, new_table
from golf.app.tables.status import TableStatus
from golf.engine.cardgolf.match import ScoreSheet
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.shuffle import ALGORITHM, commitment
from golf.engine.solitaire.moves import IllegalMove, PlayColumn, Refusal
from golf.engine.solitaire.rules import SolitaireRules
from golf.engine.solitaire.state import Layout, State, Status
from golf.v1 import record_service_pb2 as rpb
from golf.v1 import solitaire_pb2

PYSOL_ALGORITHM = "pysolfc"
KIND_NAMES = {rpb.RECORD_KIND_SOLITAIRE_GAME: "game", rpb.RECORD_KIND_CARD_GOLF_MATCH: "match"}
_STATUS = {Status.WON: solitaire_pb2.GAME_STATUS_WON, Status.LOST: solitaire_pb2.GAME_STATUS_LOST}


class CheckFailed(Exception):
    """A record that does not check out; the message says why."""


def kind_name(record: rpb.Record) -> str:
    """``game``, ``match`` or ``record`` (a kind this version does not check)."""
    return KIND_NAMES.get(record.kind, "record")


def check_record(record: rpb.Record) -> str:
    """Check ``record`` (see the module's docstring); a summary of what was checked, or :class:`CheckFailed`."""
    if record.format != FORMAT:
        raise CheckFailed(f"format {record.format!r} is not {FORMAT!r} (a newer golf verify may read it)")
    expected = commitment(record.shuffle_algorithm, record.seed, record.rules)
    if record.commitment != expected:
        raise CheckFailed(
            f"the commitment {record.commitment!r} is not that of the seed and rules (recomputed: {expected})"
        )
    for n, entry in enumerate(record.entries, start=1):
        if entry.seq != n:
            raise CheckFailed(f"entry {n} has sequence number {entry.seq}: the log is not whole and in order")
    if record.kind == rpb.RECORD_KIND_SOLITAIRE_GAME:
        return check_game(record)
    if record.kind == rpb.RECORD_KIND_CARD_GOLF_MATCH:
        return check_match(record)
    raise CheckFailed(f"kind {record.kind}: only solitaire games and card Golf matches are checked")


# -- solitaire ---------------------------------------------------------------------------------------------------
def _solitaire_rules(text: str) -> SolitaireRules:
    try:
        rules = SolitaireRules.from_canonical(text)
        rules.validate()
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise CheckFailed(f"the rules are not solitaire rules: {err}") from None
    if rules.canonical() != text:
        raise CheckFailed(f"the rules text is not in its canonical form ({rules.canonical()})")
    return rules


def _layout(record: rpb.Record, rules: SolitaireRules) -> Layout:
    """The deal the seed makes under the record's algorithm."""
    if record.shuffle_algorithm == ALGORITHM:
        return Layout.from_seed(rules, record.seed)
    if record.shuffle_algorithm != PYSOL_ALGORITHM:
        raise CheckFailed(f"unknown shuffle algorithm {record.shuffle_algorithm!r}")
    head, _, number = record.seed.partition(":")
    if head != "pysol" or not number.isdigit() or int(number) != record.pysol_number:
        raise CheckFailed(f"a pysolfc seed is 'pysol:' and the deal number {record.pysol_number}, not {record.seed!r}")
    if not rules.is_pysol_layout():
        raise CheckFailed("PySolFC deals need 1 deck in 7 columns of 5")
    try:
        return Layout.from_pysol(record.pysol_number)
    except ValueError as err:
        raise CheckFailed(f"PySolFC deal {record.pysol_number}: {err}") from None


def _play(state: State, code: str) -> State:
    """``state`` after the move or AutoPlay entry ``code``; every move must name its card, as the service stores it."""
    try:
        moves = action_moves(code)
    except (ValueError, KeyError, IndexError):
        raise CheckFailed("not a move code") from None
    if code.startswith(AUTOPLAY) and not all(isinstance(m, PlayColumn) for m in moves):
        raise CheckFailed("an AutoPlay run plays column cards only")
    for move in moves:
        made = state.check(move)
        if made.code != move.code:
            raise CheckFailed(f"{move.code} does not name the card it moves ({made.code})")
        state = state.apply(made)
    return state


def check_game(record: rpb.Record) -> str:
    """A solitaire game replayed from its seed (see the module's docstring)."""
    rules = _solitaire_rules(record.rules)
    state = State.initial(rules, _layout(record, rules))
    in_effect: list[State] = []  # the state before each entry still in effect
    undos = 0
    for entry in record.entries:
        code = entry.code
        try:
            if code == UNDO:
                if state.status is not Status.IN_PROGRESS:
                    raise IllegalMove(Refusal.GAME_OVER, "the game is over")
                if not in_effect:
                    raise IllegalMove(Refusal.NOTHING_TO_UNDO, "there is no move to take back")
                rules.check_undo(undos)
                state = in_effect.pop()
                undos += 1
            else:
                after = _play(state, code)
                in_effect.append(state)
                state = after
        except IllegalMove as err:
            raise CheckFailed(f"entry {entry.seq} ({code!r}) is illegal: {err.message}") from None
        except CheckFailed as err:
            raise CheckFailed(f"entry {entry.seq} ({code!r}): {err}") from None
    if state.status is Status.IN_PROGRESS:
        raise CheckFailed(f"the game is not over after its {len(record.entries)} entries")
    status = solitaire_pb2.GameStatus.Name(_STATUS[state.status])
    if record.status != _STATUS[state.status]:
        raise CheckFailed(f"status {solitaire_pb2.GameStatus.Name(record.status)} but the log ends {status}")
    if record.score != state.score:
        raise CheckFailed(f"score {record.score} but the log ends with {state.score}")
    short = status.removeprefix("GAME_STATUS_").lower()
    return f"preset={record.preset} status={short} score={state.score} entries={len(record.entries)}"


# -- card Golf ---------------------------------------------------------------------------------------------------
def check_match(record: rpb.Record) -> str:
    """A card Golf match replayed from its seed (see the module's docstring)."""
    if record.shuffle_algorithm != ALGORITHM:
        raise CheckFailed(f"unknown shuffle algorithm {record.shuffle_algorithm!r} (matches use {ALGORITHM})")
    try:
        rules = GolfRules.from_canonical(record.rules)
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise CheckFailed(f"the rules are not card Golf rules: {err}") from None
    if rules.canonical() != record.rules:
        raise CheckFailed(f"the rules text is not in its canonical form ({rules.canonical()})")
    try:
        options = options_from_record(record.table_options, record.rules)
        table = new_table(options, record.seed)
    except (TableRecordError, AppError) as err:
        raise CheckFailed(f"table options: {getattr(err, 'message', err)}") from None
    for entry in record.entries:
        try:
            decoded = decode_entry(entry.code)
        except TableRecordError as err:
            raise CheckFailed(f"entry {entry.seq}: {err}") from None
        if encode_entry(decoded) != entry.code:
            raise CheckFailed(f"entry {entry.seq} is not in its stored form: {entry.code}")
        try:
            table = apply_entry(table, decoded)
        except AppError as err:
            raise CheckFailed(f"entry {entry.seq} ({entry.code}) is refused: {err.message}") from None
    if table.status is not TableStatus.OVER or table.end is None:
        raise CheckFailed(f"the match is not over after its {len(record.entries)} entries")
    if record.match_end != table.end.value:
        raise CheckFailed(f"match end {record.match_end!r} but the log ends it {table.end.value!r}")
    _check_seats(record, [s.player_id or "" for s in table.seats], table.sheet)
    totals = ",".join(str(t) for t in table.sheet.totals)
    return f"preset={record.preset} holes={len(table.sheet.holes)} seats={len(table.seats)} totals={totals}"


def _check_seats(record: rpb.Record, players: list[str], sheet: ScoreSheet) -> None:
    if len(record.seats) != len(players):
        raise CheckFailed(f"{len(record.seats)} seats in the record, {len(players)} at the table")
    holes, totals = sheet.holes, sheet.totals
    placed = sheet.places  # by total points, a seat that won outright (four alike) first
    for s, seat in enumerate(record.seats):
        points = [row[s] for row in holes]
        if seat.seat != s:
            raise CheckFailed(f"seat {s} is numbered {seat.seat}")
        if seat.player_id != players[s]:
            raise CheckFailed(f"seat {s}: player {seat.player_id!r}, but the log seats {players[s]!r}")
        if list(seat.hole_points) != points:
            raise CheckFailed(f"seat {s}: points per hole {list(seat.hole_points)}, recomputed {points}")
        if seat.total != totals[s]:
            raise CheckFailed(f"seat {s}: total {seat.total}, recomputed {totals[s]}")
        if seat.place != placed[s]:
            raise CheckFailed(f"seat {s}: place {seat.place}, recomputed {placed[s]}")


def describe(record: rpb.Record) -> str:
    """``<kind> <id>``, as a line of ``golf verify`` names a record."""
    return f"{kind_name(record)} {record.id or '?'}"


__all__ = ["CheckFailed", "check_game", "check_match", "check_record", "describe", "kind_name"]
