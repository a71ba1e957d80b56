"""Helpers of the e2e tier for players: new clients of either transport, the server's signing key, tokens made
by hand (expired, forged, a portal's), players deleted behind the server's back, and games played to their end."""

from __future__ import annotations

import secrets
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import jwt
import psycopg

from golf.v1 import solitaire_pb2
from tests.e2e.support import TEST_TOKEN_KEY, Client, Grpc, Rest, Server, choose_move, move_request, pb

QUICK_RULES = {"columns": 20, "column_height": 2}
"""A layout of 40 cards with a stock of 11: a game ends after a few dozen moves."""


def new_client(server: Server, transport: str, **kwargs: Any) -> Client:
    """A client of ``transport`` signed in as a new guest (or as ``as_=``)."""
    return Rest(server.http_url, **kwargs) if transport == "rest" else Grpc(server.grpc_target, **kwargs)


def server_key(server: Server) -> bytes:
    """The key the server signs its tokens with: the file it made beside its SQLite database, or the one the
    tests give PostgreSQL servers."""
    if server.database_url.startswith("sqlite:///"):
        return Path(server.database_url.removeprefix("sqlite:///") + ".token-key").read_text().strip().encode()
    return TEST_TOKEN_KEY.encode()


def own_token(server: Server, player_id: str, **claims: Any) -> str:
    """A token as the server makes them, with ``claims`` overriding (e.g. ``exp`` in the past)."""
    now = int(time.time())
    body = {"iss": "golf", "aud": "golf", "sub": player_id, "iat": now, "exp": now + 600, "scope": "play", **claims}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, server_key(server), algorithm="HS256")


def portal_token(key: Any, issuer: str, kid: str, sub: str = "portal-user", audience: str = "golf") -> str:
    """A portal's ES256 token naming ``kid``, with a ``jti`` of its own (never one the server has checked)."""
    now = int(time.time())
    body = {"iss": issuer, "aud": audience, "sub": sub, "iat": now, "exp": now + 600, "jti": secrets.token_hex(8)}
    return jwt.encode(body, key, algorithm="ES256", headers={"kid": kid})


def delete_player(server: Server, player_id: str) -> None:
    """Delete a player's row (and its refresh tokens, which refer to it) in the server's database, as an operator
    erasing an account would."""
    statements = ["DELETE FROM refresh_tokens WHERE player_id = ", "DELETE FROM players WHERE id = "]
    if server.database_url.startswith("sqlite:///"):
        with closing(sqlite3.connect(server.database_url.removeprefix("sqlite:///"), timeout=30)) as conn, conn:
            for statement in statements:
                conn.execute(statement + "?", (player_id,))
        return
    with psycopg.connect(server.database_url) as pg:
        for statement in statements:
            pg.execute(statement + "%s", (player_id,))


def quick_game(client: Client, **fields: Any) -> solitaire_pb2.Game:
    """A game on a new server-seeded deal of ``QUICK_RULES``."""
    req = pb.CreateGameRequest(preset="standard", winnable_only=False, **fields)
    for name, value in QUICK_RULES.items():
        setattr(req.rules, name, value)
    game: solitaire_pb2.Game = client.create_game(req).expect_ok().game
    return game


def finish(client: Client, game: solitaire_pb2.Game) -> solitaire_pb2.Game:
    """Play ``game`` to its end (first column play on offer, else draw)."""
    while game.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS:
        game = client.play_move(move_request(game, choose_move(game), expected=game.version)).expect_ok().game
    return game
