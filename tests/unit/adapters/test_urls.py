"""Plain database URLs pick their drivers."""

from __future__ import annotations

import pytest

from golf.adapters.db.urls import is_sqlite, sync_url


@pytest.mark.parametrize(
    ("plain", "for_migrations"),
    [
        ("sqlite:///golf.db", "sqlite:///golf.db"),
        ("sqlite:////abs/golf.db", "sqlite:////abs/golf.db"),
        ("postgresql://u@h:5432/db", "postgresql+psycopg://u@h:5432/db"),
        ("postgres://u:pw@h/db", "postgresql+psycopg://u:pw@h/db"),
    ],
)
def test_drivers(plain: str, for_migrations: str) -> None:
    assert sync_url(plain).render_as_string(hide_password=False) == for_migrations


def test_other_databases_are_refused() -> None:
    with pytest.raises(ValueError, match="GOLF_DATABASE_URL"):
        sync_url("mysql://u@h/db")
    assert is_sqlite("sqlite:///x.db") and not is_sqlite("postgresql://h/db")
