"""A token whose player's row is gone: refused (our own tokens) or resolved afresh (a portal's), within
``player_check_seconds``; and a call carrying two ``authorization`` values, refused on every transport's path."""

from __future__ import annotations

import asyncio

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from golf.adapters.auth.header import one_authorization
from golf.adapters.auth.tokens import Tokens, TrustedIssuer
from golf.app.errors import Unauthenticated
from tests.unit.adapters.auth.token_helpers import KEY, PORTAL, Clock, claims, own, pem

GONE = "the token's player no longer exists; create a guest or sign in again"


class Players:
    """The player rows: ``exists`` counts its questions, and can be held to show concurrent ones share one."""

    def __init__(self, *ids: str) -> None:
        self.ids = set(ids)
        self.asked: list[str] = []
        self.made = 0
        self.gate = asyncio.Event()
        self.gate.set()

    async def exists(self, player_id: str) -> bool:
        self.asked.append(player_id)
        await self.gate.wait()
        return player_id in self.ids

    async def resolve(self, issuer: str, subject: str, name: str | None) -> str:
        """As PlayerService.external_player: a new player when the subject's row is gone."""
        self.made += 1
        player_id = f"{subject}-{self.made}"
        self.ids.add(player_id)
        return player_id


def checking(clock: Clock, players: Players, *trusted: TrustedIssuer) -> Tokens:
    return Tokens(
        KEY,
        "golf",
        "golf",
        3600,
        trusted=trusted,
        resolve_external=players.resolve,
        player_exists=players.exists,
        player_check_seconds=10,
        clock=clock,
    )


async def test_a_deleted_players_token_is_refused_once_the_check_is_due() -> None:
    clock, players = Clock(), Players("p1")
    tokens = checking(clock, players)
    token = f"Bearer {own(clock.now)}"
    assert (await tokens.verify(token)).player_id == "p1"
    assert (await tokens.verify(token)).player_id == "p1"
    assert players.asked == ["p1"]  # asked once, then taken for 10 s
    players.ids.discard("p1")  # the row is deleted
    clock.now += 5
    assert (await tokens.verify(token)).player_id == "p1"  # the short cache: at most 10 s
    clock.now += 6
    for again in (token, f"Bearer {own(clock.now, jti='another')}"):
        with pytest.raises(Unauthenticated) as caught:
            await tokens.verify(again)
        assert caught.value.message == GONE and caught.value.invalid_token
    assert players.asked == ["p1", "p1", "p1"]  # a missing player is asked about again, never taken as there


async def test_a_token_of_a_player_that_never_existed_is_refused_at_once() -> None:
    clock, players = Clock(), Players()
    tokens = checking(clock, players)
    with pytest.raises(Unauthenticated, match="no longer exists"):
        await tokens.verify(f"Bearer {own(clock.now, sub='nobody')}")


async def test_concurrent_calls_of_one_player_share_one_question() -> None:
    clock, players = Clock(), Players("p1")
    tokens = checking(clock, players)
    players.gate.clear()
    calls = [asyncio.create_task(tokens.verify(f"Bearer {own(clock.now, jti=str(i))}")) for i in range(10)]
    await asyncio.sleep(0)
    players.gate.set()
    assert {c.player_id for c in await asyncio.gather(*calls)} == {"p1"}
    assert players.asked == ["p1"]


async def test_a_portal_player_whose_row_is_gone_is_made_afresh_not_handed_the_old_id() -> None:
    clock, players = Clock(), Players()
    key = ec.generate_private_key(ec.SECP256R1())
    portal = TrustedIssuer(PORTAL, "golf", public_key=pem(key), algorithms=("ES256",))
    tokens = checking(clock, players, portal)
    token = "Bearer " + jwt.encode(claims(clock.now, iss=PORTAL, sub="u-1"), key, algorithm="ES256")
    first = await tokens.verify(token)
    assert first.player_id == "u-1-1" and players.asked == []  # just made: nothing to ask
    players.ids.clear()
    clock.now += 11
    again = await tokens.verify(token)
    assert again.player_id == "u-1-2" and again.issuer == PORTAL
    assert (await tokens.verify(token)).player_id == "u-1-2"


def test_one_authorization_value_is_taken_two_are_refused() -> None:
    assert one_authorization([]) is None
    assert one_authorization(["Bearer a"]) == "Bearer a"
    for values in (["Bearer a", "Bearer b"], ["Bearer a", "Bearer a"]):
        with pytest.raises(Unauthenticated, match="carries 2 'authorization' values; send one"):
            one_authorization(values)
