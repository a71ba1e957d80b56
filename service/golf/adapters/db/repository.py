"""The SQL unit of work and the database it opens, on the driver of the URL's database (``postgres_driver.py`` or
``sqlite_driver.py``; one transaction per unit of work); each context's store lives in its own module
(``deal_store``, ``game_store``, ``round_store``, ``player_store``, ``table_store``, ``webhook_store``,
``record_store``)."""

from __future__ import annotations

from types import TracebackType

from golf.adapters.db.deal_store import SqlDealStore
from golf.adapters.db.drivers import Driver, Transaction
from golf.adapters.db.game_store import SqlGameStore
from golf.adapters.db.player_store import SqlPlayerStore, SqlRefreshTokenStore
from golf.adapters.db.postgres_driver import PostgresDriver
from golf.adapters.db.record_store import SqlRecordStore
from golf.adapters.db.round_store import SqlRoundStore
from golf.adapters.db.sqlite_driver import SqliteDriver
from golf.adapters.db.table_store import SqlTableStore
from golf.adapters.db.urls import is_sqlite
from golf.adapters.db.webhook_store import SqlWebhookStore


class SqlUnitOfWork:
    """One transaction. Leaving the block without ``commit`` rolls it back."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver
        self._done = False

    async def __aenter__(self) -> SqlUnitOfWork:
        self._tx, self._token = await self._driver.begin()
        self._deals = SqlDealStore(self._tx)
        self._games = SqlGameStore(self._tx)
        self._rounds = SqlRoundStore(self._tx)
        self._players = SqlPlayerStore(self._tx)
        self._refresh_tokens = SqlRefreshTokenStore(self._tx)
        self._tables = SqlTableStore(self._tx)
        self._webhooks = SqlWebhookStore(self._tx)
        self._records = SqlRecordStore(self._tx)
        return self

    @property
    def tx(self) -> Transaction:
        """This unit of work's transaction, for the adapters' own SQL (health checks, metrics, the record index)."""
        return self._tx

    @property
    def deals(self) -> SqlDealStore:
        """Solitaire deals, their pool and the daily deals, in this unit of work's transaction."""
        return self._deals

    @property
    def games(self) -> SqlGameStore:
        """Solitaire games, their move logs and hints, in this unit of work's transaction."""
        return self._games

    @property
    def rounds(self) -> SqlRoundStore:
        """Solitaire rounds, in this unit of work's transaction."""
        return self._rounds

    @property
    def players(self) -> SqlPlayerStore:
        """Players, in this unit of work's transaction."""
        return self._players

    @property
    def refresh_tokens(self) -> SqlRefreshTokenStore:
        """Refresh tokens, in this unit of work's transaction."""
        return self._refresh_tokens

    @property
    def tables(self) -> SqlTableStore:
        """The live card Golf tables and their logs, in this unit of work's transaction."""
        return self._tables

    @property
    def webhooks(self) -> SqlWebhookStore:
        """Webhooks and their outbox, in this unit of work's transaction."""
        return self._webhooks

    @property
    def records(self) -> SqlRecordStore:
        """Histories, leaderboards and deal statistics, in this unit of work's transaction."""
        return self._records

    async def commit(self) -> None:
        await self._tx.commit()
        self._done = True

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            if not self._done:
                await self._tx.rollback()
        finally:
            await self._driver.release(self._token)


def open_driver(
    url: str, pool_size: int = 10, sqlite_synchronous: str = "FULL", group_commit_delay: float = 0.0
) -> Driver:
    """The driver for a plain database URL (``group_commit_delay``: seconds, see ``GroupCommit``)."""
    if is_sqlite(url):
        return SqliteDriver(url, sqlite_synchronous)
    return PostgresDriver(url, pool_size, group_commit_delay)


class Database:
    """A database by plain URL, and a factory of units of work on it."""

    def __init__(
        self, url: str, pool_size: int = 10, sqlite_synchronous: str = "FULL", group_commit_delay: float = 0.0
    ) -> None:
        self.url = url
        self.driver = open_driver(url, pool_size, sqlite_synchronous, group_commit_delay)

    def __call__(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.driver)

    async def ping(self) -> None:
        await self.driver.ping()

    async def dispose(self) -> None:
        await self.driver.close()
