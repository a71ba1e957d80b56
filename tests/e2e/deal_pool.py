"""The pool of pre-solved deals as the database holds it, by difficulty level."""

from __future__ import annotations

import sqlite3

import psycopg

from golf.v1 import solitaire_pb2

D = solitaire_pb2
LEVELS = {
    D.DIFFICULTY_EASY: "easy",
    D.DIFFICULTY_MEDIUM: "medium",
    D.DIFFICULTY_HARD: "hard",
}


# -- the pool of solved deals ----------------------------------------------------------------------------------
def pool_rows(database_url: str) -> list[tuple[str, str, int]]:
    """(difficulty, deal id, uses) of every row of the deal pool, oldest first, read straight from the database."""
    query = "SELECT difficulty, deal_id, uses FROM deal_pool ORDER BY id"
    if database_url.startswith("sqlite:///"):
        with sqlite3.connect(database_url.removeprefix("sqlite:///")) as conn:
            return [(str(d), str(i), int(u)) for d, i, u in conn.execute(query).fetchall()]
    with psycopg.connect(database_url) as pg:
        return [(str(d), str(i), int(u)) for d, i, u in pg.execute(query).fetchall()]
