"""How a table is stored: the text of its options and of each entry of its log, and the records a store returns.

Pure: no database here. The encodings are part of the stored data, so they change only by adding a new format
version that the decoders still read alongside the old ones; a golden test pins the text of format 1.

Format 1
--------
Both are compact JSON objects (keys sorted, no spaces) with ``"v": 1``.

Options::

    {"autofill_seconds":null,"bot_delay_ms":0,"join_code":null,"missed_action":"bot","missed_turns_limit":3,
     "preset":"six-card","rules":{...},"seats":4,"turn_seconds":null,"v":1}

``rules`` holds every rule option (``GolfRules.canonical``), not only those changed from the preset, so a stored
table keeps its rules when a preset changes later; a rule option added later takes its default when an older record
is read. ``join_code`` is ``null`` for a listed table, else the code in upper case. ``turn_seconds`` (the turn clock,
``null``: none), ``missed_turns_limit``, ``missed_action`` (``"bot"`` or ``"resign"``), ``bot_delay_ms`` and
``autofill_seconds`` (quick play, ``null``: none) came with turn clocks: the encoder always writes them, and a record
written before them (``{"join_code":null,"preset":...,"rules":{...},"seats":4,"v":1}``) still reads, each taking its
default (so such a record encodes back with the five keys added).

Entries, one per kind (``seat`` is the 0-based seat; ``move`` is the engine's move code, ``Move.code``, read
back with ``parse_move``)::

    {"player_id":"ann","seat":0,"type":"join","v":1}     SeatJoined(0, "ann")
    {"bot":"greedy","seat":1,"type":"bot","v":1}          BotAdded(1, "greedy")
    {"type":"start","v":1}                                TableStarted()
    {"move":"swap 5","seat":2,"type":"move","v":1}        SeatMoved(2, Swap(5))
    {"move":"stock","seat":1,"type":"timeout","v":1}      SeatTimedOut(1, DrawStock())
    {"seat":1,"type":"leave","v":1}                       SeatLeft(1)
    {"seat":0,"type":"resign","v":1}                      SeatResigned(0)

Decoding is strict: unknown versions, types or keys, wrong value types and move codes that are not in their
canonical form raise :class:`TableRecordError`, so what decodes encodes back to the same text (options stored
before turn clocks excepted: they come back with the five clock keys).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from golf.app.errors import InvalidArgument
from golf.app.tables.entries import (
    BotAdded,
    Entry,
    SeatJoined,
    SeatLeft,
    SeatMoved,
    SeatResigned,
    SeatTimedOut,
    TableStarted,
)
from golf.app.tables.options import DEFAULT_MISSED_TURNS, TableOptions
from golf.app.tables.status import TableStatus
from golf.engine.cardgolf.moves import parse_move
from golf.engine.cardgolf.rules import GolfRules

FORMAT_VERSION = 1
"""The format :func:`encode_options` and :func:`encode_entry` write; the decoders read every version listed in
``READABLE_VERSIONS``."""
READABLE_VERSIONS = frozenset({1})


class TableRecordError(ValueError):
    """Stored text that is not a table's options or a log entry of a known format (corrupt or foreign data)."""


@dataclass(frozen=True, slots=True)
class TableRecord:
    """A stored table: what it was created with and where its log stands. The table itself is
    ``replay(options, seed, entries)``."""

    id: str
    options: TableOptions
    seed: str
    """The match seed (secret: never sent to a client before the rules reveal it)."""
    owner_id: str
    """The player who created the table."""
    created_at: datetime
    version: int = 0
    """Entries in the log."""
    status: TableStatus = TableStatus.SEATING

    @property
    def join_code(self) -> str | None:
        """The code of a private table (``None`` when it is listed)."""
        return self.options.join_code

    @property
    def listed(self) -> bool:
        """Whether the table appears in the list of open tables."""
        return self.options.listed


@dataclass(frozen=True, slots=True)
class TableDue:
    """When work falls due at a stored table by time (``None``: nothing until someone acts), and the lease of the
    process running it, if one holds it."""

    due_at: datetime | None
    lease_owner: str | None = None
    lease_until: datetime | None = None


@dataclass(frozen=True, slots=True)
class LoggedEntry:
    """An entry as stored: its place in the log (``seq``, 1-based: the table's version after it), when it was
    written, and for the first entry of a command the command's idempotency key (if any) with the player whose key
    it is (``player_id``) and how many entries the command wrote (``batch``; 0 on the command's other entries)."""

    seq: int
    entry: Entry
    created_at: datetime
    idempotency_key: str | None = None
    batch: int = 1
    player_id: str | None = None


# -- options ---------------------------------------------------------------------------------------------------
def encode_options(options: TableOptions) -> str:
    """The stored text of ``options`` (format :data:`FORMAT_VERSION`)."""
    data = {
        "v": FORMAT_VERSION,
        "preset": options.preset,
        "rules": json.loads(options.rules.canonical()),
        "seats": options.seats,
        "join_code": options.join_code,
        "turn_seconds": options.turn_seconds,
        "missed_turns_limit": options.missed_turns_limit,
        "missed_action": options.missed_action,
        "bot_delay_ms": options.bot_delay_ms,
        "autofill_seconds": options.autofill_seconds,
    }
    return _dumps(data)


_OPTION_KEYS = frozenset({"v", "preset", "rules", "seats", "join_code"})
_TIMING_DEFAULTS: dict[str, Any] = {
    "turn_seconds": None,
    "missed_turns_limit": DEFAULT_MISSED_TURNS,
    "missed_action": "bot",
    "bot_delay_ms": 0,
    "autofill_seconds": None,
}
"""The option keys that came with turn clocks, and what a record written before them means."""


@functools.lru_cache(maxsize=1024)
def decode_options(text: str) -> TableOptions:
    """The options stored as ``text`` by :func:`encode_options` (any readable version), validated; raises
    :class:`TableRecordError` for anything else. Memoised: every load of a table reads the same text, and the
    options are immutable."""
    data = _object(text, "table options")
    if not set(_TIMING_DEFAULTS) & set(data):
        data = {**data, **_TIMING_DEFAULTS}  # written before turn clocks: all five keys absent, all defaults
    _keys(data, _OPTION_KEYS | set(_TIMING_DEFAULTS), "table options")
    timing = {key: data[key] for key in _TIMING_DEFAULTS}
    for key, value in timing.items():
        if key == "missed_action":
            if not isinstance(value, str):
                raise TableRecordError(f"table options: {key} must be a string, not {value!r}")
        elif not (type(value) is int or (value is None and _TIMING_DEFAULTS[key] is None)):
            raise TableRecordError(f"table options: {key} must be an integer, not {value!r}")
    preset = _str(data, "preset", "table options")
    seats = _int(data, "seats", "table options")
    code = data["join_code"]
    if code is not None and not isinstance(code, str):
        raise TableRecordError(f"table options: join_code must be a string or null, not {type(code).__name__}")
    rules_data = data["rules"]
    if not isinstance(rules_data, dict):
        raise TableRecordError("table options: rules must be an object")
    try:
        rules = GolfRules.from_dict(rules_data)
        options = TableOptions(preset, rules, seats, code, **timing)
        options.validate()
    except InvalidArgument as err:
        raise TableRecordError(f"table options: {err.field}: {err.message}") from None
    except (ValueError, TypeError, KeyError) as err:
        raise TableRecordError(f"table options: rules: {err}") from None
    return options


# -- entries ---------------------------------------------------------------------------------------------------
def encode_entry(entry: Entry) -> str:
    """The stored text of one log entry (format :data:`FORMAT_VERSION`)."""
    data: dict[str, Any] = {"v": FORMAT_VERSION}
    if isinstance(entry, SeatJoined):
        data.update(type="join", seat=entry.seat, player_id=entry.player_id)
    elif isinstance(entry, BotAdded):
        data.update(type="bot", seat=entry.seat, bot=entry.kind)
    elif isinstance(entry, TableStarted):
        data.update(type="start")
    elif isinstance(entry, SeatMoved):
        data.update(type="move", seat=entry.seat, move=entry.move.code)
    elif isinstance(entry, SeatTimedOut):
        data.update(type="timeout", seat=entry.seat, move=entry.move.code)
    elif isinstance(entry, SeatLeft):
        data.update(type="leave", seat=entry.seat)
    elif isinstance(entry, SeatResigned):
        data.update(type="resign", seat=entry.seat)
    else:  # pragma: no cover - the union is closed; a new kind of entry must be given a format here
        raise TypeError(f"not a table log entry: {entry!r}")
    return _dumps(data)


_ENTRY_KEYS: dict[str, frozenset[str]] = {
    "join": frozenset({"v", "type", "seat", "player_id"}),
    "bot": frozenset({"v", "type", "seat", "bot"}),
    "start": frozenset({"v", "type"}),
    "move": frozenset({"v", "type", "seat", "move"}),
    "timeout": frozenset({"v", "type", "seat", "move"}),
    "leave": frozenset({"v", "type", "seat"}),
    "resign": frozenset({"v", "type", "seat"}),
}


def decode_entry(text: str) -> Entry:
    """The entry stored as ``text`` by :func:`encode_entry` (any readable version); raises
    :class:`TableRecordError` for anything else. Whether the entry fits the table is for ``replay`` to say."""
    data = _object(text, "table entry")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in _ENTRY_KEYS:
        raise TableRecordError(f"table entry: unknown type {kind!r}")
    _keys(data, _ENTRY_KEYS[kind], f"table entry ({kind})")
    if kind == "start":
        return TableStarted()
    seat = _int(data, "seat", "table entry")
    if seat < 0:
        raise TableRecordError("table entry: seat must not be negative")
    if kind == "join":
        return SeatJoined(seat, _str(data, "player_id", "table entry"))
    if kind == "bot":
        return BotAdded(seat, _str(data, "bot", "table entry"))
    if kind == "leave":
        return SeatLeft(seat)
    if kind == "resign":
        return SeatResigned(seat)
    code = _str(data, "move", "table entry")
    try:
        move = parse_move(code)
    except (ValueError, KeyError) as err:
        raise TableRecordError(f"table entry: not a move code: {code!r} ({err})") from None
    if move.code != code:  # only the canonical form: what decodes encodes back to the same text
        raise TableRecordError(f"table entry: move code {code!r} is not in its canonical form {move.code!r}")
    return SeatTimedOut(seat, move) if kind == "timeout" else SeatMoved(seat, move)


def entry_seat(entry: Entry) -> int | None:
    """The seat an entry concerns (``None`` for the start), stored beside it for queries."""
    return None if isinstance(entry, TableStarted) else entry.seat


# -- helpers ---------------------------------------------------------------------------------------------------
def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _object(text: str, what: str) -> dict[str, Any]:
    if not isinstance(text, str):
        raise TableRecordError(f"{what}: stored text expected, not {type(text).__name__}")
    try:
        data = json.loads(text)
    except ValueError:
        raise TableRecordError(f"{what}: not JSON: {text[:80]!r}") from None
    if not isinstance(data, dict):
        raise TableRecordError(f"{what}: a JSON object expected: {text[:80]!r}")
    version = data.get("v")
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise TableRecordError(f"{what}: unknown format version {version!r}")
    return data


def _keys(data: dict[str, Any], expected: set[str] | frozenset[str], what: str) -> None:
    if set(data) != expected:
        missing, extra = sorted(expected - set(data)), sorted(set(data) - expected)
        raise TableRecordError(f"{what}: missing keys {missing}, unknown keys {extra}")


def _int(data: dict[str, Any], key: str, what: str) -> int:
    value = data[key]
    if type(value) is not int:  # not a bool, not a float
        raise TableRecordError(f"{what}: {key} must be an integer, not {value!r}")
    return value


def _str(data: dict[str, Any], key: str, what: str) -> str:
    value = data[key]
    if not isinstance(value, str) or not value:
        raise TableRecordError(f"{what}: {key} must be a non-empty string, not {value!r}")
    return value
