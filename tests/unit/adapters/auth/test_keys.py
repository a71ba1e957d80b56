"""The token signing key: configured, or generated once beside the SQLite file."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

import pytest

from golf.adapters.auth import keys
from golf.adapters.auth.keys import load_signing_key


def test_configured_key_is_used_as_utf8() -> None:
    configured = "é" * 32
    assert load_signing_key(configured, "postgresql://db/golf") == configured.encode()


@pytest.mark.parametrize("configured", ["", "too-short"])
def test_short_configured_key_is_refused(configured: str) -> None:
    with pytest.raises(ValueError, match="GOLF_TOKEN_KEY must be at least 32 characters"):
        load_signing_key(configured, "sqlite:///golf.db")


def test_key_is_generated_beside_the_database_then_reused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    kept = tmp_path / "golf.db.token-key"
    with caplog.at_level(logging.INFO, logger="golf.auth"):
        first = load_signing_key(None, url)
        assert stat.S_IMODE(kept.stat().st_mode) == 0o600
        assert kept.read_text().strip().encode() == first
        assert len(first) >= 32
        assert [r.levelno for r in caplog.records] == [logging.WARNING]
        assert "GOLF_TOKEN_KEY" in caplog.records[0].getMessage()
        caplog.clear()
        assert load_signing_key(None, url) == first
        assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
            (logging.INFO, f"using the token key kept at {kept}")
        ]


def test_losing_the_creation_race_reads_the_winners_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = tmp_path / "golf.db.token-key"
    kept.write_text("k" * 40 + "\n")
    os.chmod(kept, 0o600)
    # Another process creates the file between our existence check and our exclusive create.
    monkeypatch.setattr(os.path, "exists", lambda path: False)
    assert load_signing_key(None, f"sqlite:///{tmp_path / 'golf.db'}") == b"k" * 40


def test_a_kept_key_too_short_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "_SETTLE_SECONDS", 0.0)
    (tmp_path / "golf.db.token-key").write_text("short\n")
    with pytest.raises(ValueError, match="delete the file"):
        load_signing_key(None, f"sqlite:///{tmp_path / 'golf.db'}")


@pytest.mark.parametrize("url", ["postgresql://golf@db:5432/golf", "postgres://golf@db/golf"])
def test_postgres_needs_a_configured_key(url: str) -> None:
    with pytest.raises(ValueError, match="GOLF_TOKEN_KEY is required with PostgreSQL"):
        load_signing_key(None, url)


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:"])
def test_in_memory_sqlite_needs_a_configured_key(url: str) -> None:
    with pytest.raises(ValueError, match="GOLF_TOKEN_KEY is required with an in-memory SQLite"):
        load_signing_key(None, url)
