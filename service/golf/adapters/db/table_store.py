"""The SQL store of live card Golf tables: a row per table and its append-only log, one row per entry.

It works inside a unit of work's transaction (``SqlUnitOfWork.tables``), on the same drivers as the solitaire
repository. A command's entries are appended with the version the writer read: the table row moves from that
version to the new one and the entries take the sequence numbers in between, in one transaction, so of two
writers at the same version exactly one stores anything (the other gets ``TableChanged``, a ``Conflict``). The
primary key (table, seq) and the unique (table, idempotency key) back this up in the database itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from golf.adapters.db.drivers import Row, Transaction, UniqueViolation
from golf.app.errors import NotFound
from golf.app.ports import AlreadyStored
from golf.app.quoting import shown
from golf.app.tables.entries import Entry
from golf.app.tables.errors import TableChanged
from golf.app.tables.records import (
    LoggedEntry,
    TableRecord,
    TableRecordError,
    decode_entry,
    decode_options,
    encode_entry,
    encode_options,
    entry_seat,
)
from golf.app.tables.state import Table, TableStatus, replay

_TABLE_COLUMNS = "id, options, seed, preset, join_code, listed, owner_id, created_at, version, status"
_ENTRY_COLUMNS = "seq, idempotency_key, batch, entry, seat, created_at"

# SQLite names the columns of the unique constraint or index a row broke: these map them to PostgreSQL's names.
_SQLITE_UNIQUE = {
    "card_golf_tables.id": "card_golf_tables_pkey",
    "card_golf_tables.join_code": "uq_card_golf_tables_join_code",
    "card_golf_table_entries.table_id, card_golf_table_entries.seq": "card_golf_table_entries_pkey",
    "card_golf_table_entries.table_id, card_golf_table_entries.idempotency_key": "uq_card_golf_table_entries_key",
}
_SQLITE_PREFIX = "UNIQUE constraint failed: "
_ROWS_PER_INSERT = 100
"""7 placeholders a row: 700 a statement (the PostgreSQL driver numbers at most 999)."""
KEY_CONSTRAINT = "uq_card_golf_table_entries_key"
JOIN_CODE_CONSTRAINT = "uq_card_golf_tables_join_code"


def _constraint(err: UniqueViolation) -> str:
    text = err.constraint
    if text.startswith(_SQLITE_PREFIX):
        return _SQLITE_UNIQUE.get(text[len(_SQLITE_PREFIX) :], text)
    return text


def _when(value: Any) -> datetime:
    # asyncpg gives aware datetimes; SQLite gives the naive UTC text we stored (as in ``repository.py``).
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    assert isinstance(value, datetime)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _table(row: Row) -> TableRecord:
    options = decode_options(row["options"])
    return TableRecord(
        id=row["id"],
        options=options,
        seed=row["seed"],
        owner_id=row["owner_id"],
        created_at=_when(row["created_at"]),
        version=row["version"],
        status=TableStatus(row["status"]),
    )


def _entry(row: Row) -> LoggedEntry:
    return LoggedEntry(
        seq=row["seq"],
        entry=decode_entry(row["entry"]),
        created_at=_when(row["created_at"]),
        idempotency_key=row["idempotency_key"],
        batch=row["batch"],
    )


class SqlTableStore:
    """Tables and their logs, in one transaction ``tx``."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    async def add_table(self, record: TableRecord) -> None:
        """Store a new table (normally at version 0, status ``seating``; append its first entries after it in the
        same unit of work). Raises ``AlreadyStored`` naming the constraint when the id, or the join code of a table
        whose match is not over (``uq_card_golf_tables_join_code``), is taken."""
        options = record.options
        try:
            await self.tx.execute(
                f"INSERT INTO card_golf_tables ({_TABLE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                record.id,
                encode_options(options),
                record.seed,
                options.preset,
                options.join_code,
                options.listed,
                record.owner_id,
                record.created_at,
                record.version,
                record.status.value,
            )
        except UniqueViolation as err:
            raise AlreadyStored(_constraint(err)) from err

    async def append(
        self,
        table_id: str,
        expected_version: int,
        entries: Sequence[Entry],
        status: TableStatus,
        created_at: datetime,
        idempotency_key: str | None = None,
    ) -> int:
        """Append one command's ``entries`` to the log of a table at ``expected_version``; ``status`` is the
        table's status after them. The first entry carries ``idempotency_key`` and the number of entries. Returns
        the new version (``expected_version + len(entries)``).

        Raises ``TableChanged`` (a ``Conflict``; nothing is stored) when the table is no longer at
        ``expected_version`` or the key is already in its log (``key_taken``), ``NotFound`` when there is no
        such table. After ``TableChanged`` the transaction may be unusable (PostgreSQL): start a new one.
        """
        if not entries:
            raise ValueError("a command appends at least one entry")
        new_version = expected_version + len(entries)
        changed = await self.tx.execute(
            "UPDATE card_golf_tables SET version = ?, status = ? WHERE id = ? AND version = ?",
            new_version,
            status.value,
            table_id,
            expected_version,
        )
        if changed != 1:
            await self._lost(table_id, expected_version, idempotency_key)
        rows = [
            (
                table_id,
                expected_version + n + 1,
                idempotency_key if n == 0 else None,
                len(entries) if n == 0 else 0,
                encode_entry(entry),
                entry_seat(entry),
                created_at,
            )
            for n, entry in enumerate(entries)
        ]
        try:
            # Several rows a statement, within the drivers' limit of placeholders (a whole hole of bot turns is
            # one command).
            for at in range(0, len(rows), _ROWS_PER_INSERT):
                chunk = rows[at : at + _ROWS_PER_INSERT]
                marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
                await self.tx.execute(
                    f"INSERT INTO card_golf_table_entries (table_id, {_ENTRY_COLUMNS}) VALUES {marks}",
                    *(value for row in chunk for value in row),
                )
        except UniqueViolation as err:
            # The row update above holds the table's row lock, so only a log that disagrees with its table row
            # (or a reused key) gets here; either way nothing is stored.
            key_taken = _constraint(err) == KEY_CONSTRAINT
            what = f"idempotency key {shown(idempotency_key or '')}" if key_taken else f"entry {expected_version + 1}"
            raise TableChanged(f"table {shown(table_id)} already has {what} in its log", key_taken) from err
        return new_version

    async def _lost(self, table_id: str, expected_version: int, key: str | None) -> None:
        row = await self.tx.fetchone("SELECT version FROM card_golf_tables WHERE id = ?", table_id)
        if row is None:
            raise NotFound(f"table {shown(table_id)} not found")
        key_taken = key is not None and await self.find_command(table_id, key) is not None
        raise TableChanged(
            f"table {shown(table_id)} is at version {row['version']}, not {expected_version}", key_taken=key_taken
        )

    async def get_table(self, table_id: str) -> TableRecord | None:
        """The table's record, or ``None``."""
        row = await self.tx.fetchone(f"SELECT {_TABLE_COLUMNS} FROM card_golf_tables WHERE id = ?", table_id)
        return _table(row) if row else None

    async def get_entries(self, table_id: str, after_seq: int = 0, through_seq: int | None = None) -> list[LoggedEntry]:
        """The log entries with ``after_seq < seq <= through_seq`` (all by default), in order."""
        sql = f"SELECT {_ENTRY_COLUMNS} FROM card_golf_table_entries WHERE table_id = ? AND seq > ?"
        args: list[Any] = [table_id, after_seq]
        if through_seq is not None:
            sql += " AND seq <= ?"
            args.append(through_seq)
        rows = await self.tx.fetchall(sql + " ORDER BY seq", *args)
        return [_entry(r) for r in rows]

    async def load_table(self, table_id: str) -> tuple[TableRecord, Table] | None:
        """The record and the table rebuilt by replaying its whole log (``None`` if there is no such table).
        Entries are read up to the record's version, so a write committed between the two reads is not half seen.
        Raises ``TableRecordError`` for a log that does not replay to the record's version."""
        record = await self.get_table(table_id)
        if record is None:
            return None
        log = await self.get_entries(table_id, through_seq=record.version)
        if [e.seq for e in log] != list(range(1, record.version + 1)):
            raise TableRecordError(f"table {table_id}: the log does not hold entries 1 to {record.version}")
        try:
            table = replay(record.options, record.seed, (e.entry for e in log))
        except Exception as err:  # a refused entry: the stored log was not made by the table's own commands
            raise TableRecordError(f"table {table_id}: the log does not replay: {err}") from err
        return record, table

    async def find_command(self, table_id: str, idempotency_key: str) -> list[LoggedEntry] | None:
        """The entries the command with ``idempotency_key`` appended (the first one carries the key), or
        ``None`` when the key is not in the table's log: a retry answers with the table as of the last of them."""
        row = await self.tx.fetchone(
            "SELECT seq, batch FROM card_golf_table_entries WHERE table_id = ? AND idempotency_key = ?",
            table_id,
            idempotency_key,
        )
        if row is None:
            return None
        first = int(row["seq"])
        return await self.get_entries(table_id, after_seq=first - 1, through_seq=first + int(row["batch"]) - 1)

    async def list_open_tables(self, limit: int, preset: str | None = None) -> list[TableRecord]:
        """Listed tables still seating players (of ``preset``, if given), newest first, at most ``limit``."""
        sql = f"SELECT {_TABLE_COLUMNS} FROM card_golf_tables WHERE status = 'seating' AND listed"
        args: list[Any] = []
        if preset is not None:
            sql += " AND preset = ?"
            args.append(preset)
        rows = await self.tx.fetchall(sql + " ORDER BY created_at DESC, id DESC LIMIT ?", *args, limit)
        return [_table(r) for r in rows]

    async def find_by_join_code(self, join_code: str) -> TableRecord | None:
        """The table whose match is not over that ``join_code`` opens (compared without regard to case)."""
        row = await self.tx.fetchone(
            f"SELECT {_TABLE_COLUMNS} FROM card_golf_tables WHERE join_code = ? AND status <> 'over'",
            join_code.strip().upper(),
        )
        return _table(row) if row else None
