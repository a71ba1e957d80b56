"""The SQL store of live card Golf tables: a row per table and its append-only log, one row per entry.

It works inside a unit of work's transaction (``SqlUnitOfWork.tables``), on the same drivers as the solitaire
repository. A command's entries are appended with the version the writer read: the table row moves from that
version to the new one and the entries take the sequence numbers in between, in one transaction, so of two
writers at the same version exactly one stores anything (the other gets ``TableChanged``, a ``Conflict``). The
primary key (table, seq) and the unique (table, player, idempotency key) back this up in the database itself: a
key is its player's own, so another player's same key at the table is another command.

Work due by time (turn clocks, paced bots, quick play's autofill): every append writes the table's next due time
(``due_at``, computed by the use case from the table it stores) and ends any lease on it. A process claims due tables
with :meth:`SqlTableStore.claim_due`, a lease of its own for a while (on PostgreSQL ``FOR UPDATE SKIP LOCKED``, so
claimers never wait on each other or get the same table); it then does the work through the ordinary append at the
version it read, which settles any race with a player or another process. A lease that runs out (its process died)
lets another claim the table again.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from golf.adapters.db.drivers import Row, Transaction, UniqueViolation
from golf.adapters.db.rows import maybe_when, when
from golf.app.errors import NotFound
from golf.app.ports import AlreadyStored
from golf.app.quoting import shown
from golf.app.tables.entries import Entry
from golf.app.tables.errors import TableChanged
from golf.app.tables.records import (
    LoggedEntry,
    TableDue,
    TableRecord,
    decode_entry,
    decode_options,
    encode_entry,
    encode_options,
    entry_seat,
)
from golf.app.tables.status import TableStatus

_TABLE_COLUMNS = "id, options, seed, preset, join_code, listed, owner_id, created_at, version, status"
_ENTRY_COLUMNS = "seq, idempotency_key, player_id, batch, entry, seat, created_at"

# SQLite names the columns of the unique constraint or index a row broke: these map them to PostgreSQL's names.
_SQLITE_UNIQUE = {
    "card_golf_tables.id": "card_golf_tables_pkey",
    "card_golf_tables.join_code": "uq_card_golf_tables_join_code",
    "card_golf_table_entries.table_id, card_golf_table_entries.seq": "card_golf_table_entries_pkey",
    "card_golf_table_entries.table_id, card_golf_table_entries.player_id, card_golf_table_entries.idempotency_key": (
        "uq_card_golf_table_entries_key"
    ),
    "card_golf_quick_plays.player_id, card_golf_quick_plays.idempotency_key": "card_golf_quick_plays_pkey",
}
_SQLITE_PREFIX = "UNIQUE constraint failed: "
_ROWS_PER_INSERT = 100
"""8 placeholders a row: 800 a statement (the PostgreSQL driver numbers at most 999)."""
_MOVE_TABLE = (
    "UPDATE card_golf_tables SET version = ?, status = ?, due_at = ?, lease_owner = NULL, lease_until = NULL"
    " WHERE id = ? AND version = ?"
)
"""An append's update of the table's row: found only at the expected version."""
_PG_ENTRY_ROW = "(?::varchar, ?::int, ?::varchar, ?::varchar, ?::int, ?::text, ?::int, ?::timestamptz)"
"""A log row in a VALUES list that is not an INSERT's own (its types are not the columns', so they are given)."""
KEY_CONSTRAINT = "uq_card_golf_table_entries_key"
MAX_LEASE_OWNER = 64
"""The length of ``lease_owner`` (a process's id)."""


def _constraint(err: UniqueViolation) -> str:
    text = err.constraint
    if text.startswith(_SQLITE_PREFIX):
        return _SQLITE_UNIQUE.get(text[len(_SQLITE_PREFIX) :], text)
    return text


def _table(row: Row) -> TableRecord:
    options = decode_options(row["options"])
    return TableRecord(
        id=row["id"],
        options=options,
        seed=row["seed"],
        owner_id=row["owner_id"],
        created_at=when(row["created_at"]),
        version=row["version"],
        status=TableStatus(row["status"]),
    )


def _entry(row: Row) -> LoggedEntry:
    return LoggedEntry(
        seq=row["seq"],
        entry=decode_entry(row["entry"]),
        created_at=when(row["created_at"]),
        idempotency_key=row["idempotency_key"],
        batch=row["batch"],
        player_id=row["player_id"],
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
                f"INSERT INTO card_golf_tables ({_TABLE_COLUMNS}, quick_play) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                options.autofill_seconds is not None,  # only quick play opens tables that fill themselves
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
        due_at: datetime | None = None,
        player_id: str | None = None,
    ) -> int:
        """Append one command's ``entries`` to the log of a table at ``expected_version``; ``status`` is the
        table's status after them. The first entry carries the number of entries and ``idempotency_key``, the key
        of ``player_id`` who sent the command (a key is given with its player). Returns
        the new version (``expected_version + len(entries)``). ``due_at`` is when work falls due at the table after
        them (``None``: nothing until someone acts); the append ends any lease on the table.

        Raises ``TableChanged`` (a ``Conflict``; nothing is stored) when the table is no longer at
        ``expected_version`` or the player's key is already in its log (``key_taken``), ``NotFound`` when there is
        no such table. After ``TableChanged`` the transaction may be unusable (PostgreSQL): start a new one.
        """
        if not entries:
            raise ValueError("a command appends at least one entry")
        if idempotency_key is not None and player_id is None:
            raise ValueError("an idempotency key is a player's: give the player who sent the command")
        new_version = expected_version + len(entries)
        moved = (new_version, status.value, due_at, table_id, expected_version)
        rows = [
            (
                table_id,
                expected_version + n + 1,
                idempotency_key if n == 0 else None,
                player_id if n == 0 and idempotency_key is not None else None,
                len(entries) if n == 0 else 0,
                encode_entry(entry),
                entry_seat(entry),
                created_at,
            )
            for n, entry in enumerate(entries)
        ]
        try:
            if self.tx.dialect == "postgresql":
                # The row's update and the first rows of the log in one statement (one round trip less for every
                # move): the rows are inserted only if the update found the table at the expected version.
                first = rows[:_ROWS_PER_INSERT]
                marks = ", ".join([_PG_ENTRY_ROW] * len(first))
                inserted = await self.tx.execute(
                    f"WITH moved AS ({_MOVE_TABLE} RETURNING id) INSERT INTO card_golf_table_entries"
                    f" (table_id, {_ENTRY_COLUMNS}) SELECT v.* FROM (VALUES {marks}) AS v WHERE EXISTS"
                    " (SELECT 1 FROM moved)",
                    *moved,
                    *(value for row in first for value in row),
                )
                if inserted != len(first):
                    await self._lost(table_id, expected_version, idempotency_key, player_id)
                rest = rows[_ROWS_PER_INSERT:]
            else:
                if await self.tx.execute(_MOVE_TABLE, *moved) != 1:
                    await self._lost(table_id, expected_version, idempotency_key, player_id)
                rest = rows
            # Several rows a statement, within the drivers' limit of placeholders (a whole hole of bot turns is
            # one command).
            for at in range(0, len(rest), _ROWS_PER_INSERT):
                chunk = rest[at : at + _ROWS_PER_INSERT]
                marks = ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?)"] * len(chunk))
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

    async def _lost(self, table_id: str, expected_version: int, key: str | None, player_id: str | None) -> None:
        row = await self.tx.fetchone("SELECT version FROM card_golf_tables WHERE id = ?", table_id)
        if row is None:
            raise NotFound(f"table {shown(table_id)} not found")
        key_taken = (
            key is not None and player_id is not None and await self.find_command(table_id, player_id, key) is not None
        )
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

    async def load_table(self, table_id: str) -> tuple[TableRecord, list[LoggedEntry]] | None:
        """The record and its whole log (``None`` if there is no such table). Entries are read up to the record's
        version, so a write committed between the two reads is not half seen."""
        record = await self.get_table(table_id)
        if record is None:
            return None
        return record, await self.get_entries(table_id, through_seq=record.version)

    async def find_command(self, table_id: str, player_id: str, idempotency_key: str) -> list[LoggedEntry] | None:
        """The entries the command ``player_id`` sent with ``idempotency_key`` appended (the first one carries the
        key), or ``None`` when the player's key is not in the table's log: a retry answers with the table as of the
        last of them. Another player's same key is not this player's command."""
        row = await self.tx.fetchone(
            "SELECT seq, batch FROM card_golf_table_entries"
            " WHERE table_id = ? AND player_id = ? AND idempotency_key = ?",
            table_id,
            player_id,
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

    async def list_quick_play_tables(self, preset: str, limit: int) -> list[TableRecord]:
        """Tables quick play opened that still seat players, of ``preset``, oldest first, at most ``limit``."""
        rows = await self.tx.fetchall(
            f"SELECT {_TABLE_COLUMNS} FROM card_golf_tables WHERE status = 'seating' AND listed AND quick_play"
            " AND preset = ? ORDER BY created_at, id LIMIT ?",
            preset,
            limit,
        )
        return [_table(r) for r in rows]

    # -- work due by time -----------------------------------------------------------------------------------
    async def entry_times(self, table_id: str, seqs: Collection[int]) -> dict[int, datetime]:
        """When the entries ``seqs`` of the table's log were written (the clocks count from them)."""
        wanted = sorted(set(seqs))
        if not wanted:
            return {}
        marks = ", ".join("?" * len(wanted))
        rows = await self.tx.fetchall(
            f"SELECT seq, created_at FROM card_golf_table_entries WHERE table_id = ? AND seq IN ({marks})",
            table_id,
            *wanted,
        )
        return {int(r["seq"]): when(r["created_at"]) for r in rows}

    async def get_due(self, table_id: str) -> TableDue | None:
        """When work falls due at the table and who holds it (``None``: no such table)."""
        row = await self.tx.fetchone(
            "SELECT due_at, lease_owner, lease_until FROM card_golf_tables WHERE id = ?", table_id
        )
        if row is None:
            return None
        return TableDue(maybe_when(row["due_at"]), row["lease_owner"], maybe_when(row["lease_until"]))

    async def claim_due(self, now: datetime, limit: int, owner: str, lease_seconds: float) -> list[str]:
        """Claim up to ``limit`` tables whose work is due by ``now`` and that nobody holds (no lease, or one that
        ran out), the longest due first: each gets the lease ``owner`` until ``now + lease_seconds``. Returns their
        ids. On PostgreSQL the rows are locked with ``SKIP LOCKED``, so concurrent claimers never wait on each other
        nor get the same table (a row a writer is changing is skipped: its append sets a new due time anyway); on
        SQLite there is one writer at a time. Commit the unit of work to keep the leases."""
        if not 0 < len(owner) <= MAX_LEASE_OWNER:
            raise ValueError(f"a lease owner has 1 to {MAX_LEASE_OWNER} characters")
        if limit <= 0:
            return []
        skip = " FOR UPDATE SKIP LOCKED" if self.tx.dialect == "postgresql" else ""
        rows = await self.tx.fetchall(
            "SELECT id FROM card_golf_tables WHERE due_at IS NOT NULL AND due_at <= ?"
            " AND (lease_until IS NULL OR lease_until < ?) ORDER BY due_at, id LIMIT ?" + skip,
            now,
            now,
            limit,
        )
        ids = [str(r["id"]) for r in rows]
        if ids:
            marks = ", ".join("?" * len(ids))
            await self.tx.execute(
                f"UPDATE card_golf_tables SET lease_owner = ?, lease_until = ? WHERE id IN ({marks})",
                owner,
                now + timedelta(seconds=lease_seconds),
                *ids,
            )
        return ids

    async def next_due(self, now: datetime) -> datetime | None:
        """The earliest due time of a table that no live lease holds, so the table clock sleeps until then (``None``
        when no table has work due at any time). Served by the partial index on ``due_at``."""
        row = await self.tx.fetchone(
            "SELECT MIN(due_at) AS due FROM card_golf_tables WHERE due_at IS NOT NULL"
            " AND (lease_until IS NULL OR lease_until < ?)",
            now,
        )
        return None if row is None or row["due"] is None else when(row["due"])

    async def release_due(self, table_id: str, version: int, due_at: datetime | None) -> bool:
        """The table at ``version`` has nothing due now: set its next due time and end any lease on it. A table no
        longer at ``version`` is left alone (its newer append set both). Whether the table was at ``version``."""
        changed = await self.tx.execute(
            "UPDATE card_golf_tables SET due_at = ?, lease_owner = NULL, lease_until = NULL"
            " WHERE id = ? AND version = ?",
            due_at,
            table_id,
            version,
        )
        return changed == 1

    # -- quick play -----------------------------------------------------------------------------------------
    async def add_quick_play(self, player_id: str, idempotency_key: str, table_id: str, created_at: datetime) -> None:
        """Remember that ``player_id``'s quick play request ``idempotency_key`` seated them at ``table_id``. Raises
        ``AlreadyStored`` (``card_golf_quick_plays_pkey``) when the key was already used by the player."""
        try:
            await self.tx.execute(
                "INSERT INTO card_golf_quick_plays (player_id, idempotency_key, table_id, created_at)"
                " VALUES (?, ?, ?, ?)",
                player_id,
                idempotency_key,
                table_id,
                created_at,
            )
        except UniqueViolation as err:
            raise AlreadyStored(_constraint(err)) from err

    async def find_quick_play(self, player_id: str, idempotency_key: str) -> str | None:
        """The table ``player_id``'s quick play request ``idempotency_key`` seated them at, if any."""
        row = await self.tx.fetchone(
            "SELECT table_id FROM card_golf_quick_plays WHERE player_id = ? AND idempotency_key = ?",
            player_id,
            idempotency_key,
        )
        return str(row["table_id"]) if row else None
