"""Players and sign-in against in-memory storage: guests, refresh tokens, profiles and portal players."""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest

from golf.app.errors import InvalidArgument, NotFound, RateLimited, Unauthenticated
from golf.app.identity import OWN_ISSUER, Caller
from golf.app.players import MAX_REFRESH_TOKEN, PlayerService, network_of
from golf.bootstrap import Services
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore

ADDRESS = "203.0.113.7"
PORTAL = "https://portal.example"
GUEST_NAME = re.compile(r"Guest [0-9a-f]{4}")
PLAYER_NAME = re.compile(r"Player [0-9a-f]{4}")


@pytest.fixture
def players(services: Services) -> PlayerService:
    return services.players


# -- create_guest ------------------------------------------------------------------------------------------------
async def test_a_guest_gets_a_player_an_access_token_and_a_refresh_token(
    players: PlayerService, store: FakeStore, clock: FakeClock
) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    assert signed.player.display_name == "Ann"
    assert signed.player.issuer == OWN_ISSUER and signed.player.subject is None
    assert signed.player.created_at == clock.now
    # The access token is the issuer's (the fake names the player in it).
    assert signed.access.token == f"token-for-{signed.player.id}"
    assert signed.access.expires_at == clock.now + timedelta(hours=1)
    assert signed.refresh_token and signed.refresh is not None
    assert signed.refresh.player_id == signed.player.id
    assert signed.refresh.expires_at == clock.now + timedelta(days=players.refresh_days)
    assert store.tables.players == {signed.player.id: signed.player}


async def test_only_the_hash_of_the_refresh_token_is_stored(players: PlayerService, store: FakeStore) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    text = signed.refresh_token
    digest = hashlib.sha256(text.encode()).hexdigest()
    assert list(store.tables.refresh_tokens) == [digest]
    stored = store.tables.refresh_tokens[digest]
    assert stored.token_hash == digest and stored.player_id == signed.player.id
    # The text itself is nowhere in the stored tables.
    assert text not in repr(store.tables)
    assert all(text not in repr(value) for value in vars(store.tables).values())


async def test_a_guest_without_a_name_gets_a_default_one(players: PlayerService) -> None:
    for blank in ("", "   ", "\t \n"):
        signed = await players.create_guest(blank, ADDRESS)
        assert GUEST_NAME.fullmatch(signed.player.display_name), signed.player.display_name


async def test_display_name_is_trimmed(players: PlayerService, store: FakeStore) -> None:
    signed = await players.create_guest("  Ann Smith \t", ADDRESS)
    assert signed.player.display_name == "Ann Smith"
    assert store.tables.players[signed.player.id].display_name == "Ann Smith"
    longest = await players.create_guest(" " + "x" * 64 + " ", ADDRESS)
    assert longest.player.display_name == "x" * 64


@pytest.mark.parametrize(
    "name",
    [
        "x" * 65,
        "Ann\x00",
        "Ann\nSmith",
        "Ann\x1b[31m",
        "Ann\u202eSmith",
        "Ann\u200b",
        "\x7f",
        "Ann\u2028Smith",
        "Ann\u2029Smith",
    ],
)
async def test_bad_display_names_are_refused(players: PlayerService, store: FakeStore, name: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        await players.create_guest(name, ADDRESS)
    assert err.value.field == "displayName"
    assert store.tables.players == {} and store.tables.refresh_tokens == {}


async def test_each_guest_counts_one_sign_in_for_the_address(players: PlayerService, limiter: FakeLimiter) -> None:
    await players.create_guest("Ann", ADDRESS)
    await players.create_guest("Bob", ADDRESS)
    await players.create_guest("Cy", "198.51.100.1")
    assert limiter.hits[("sign_in", ADDRESS)] == 2
    assert limiter.hits[("sign_in", "198.51.100.1")] == 1
    assert limiter.count("sign_in") == 3


async def test_each_guest_counts_for_its_network_and_the_service(players: PlayerService, limiter: FakeLimiter) -> None:
    await players.create_guest("Ann", "203.0.113.7")
    await players.create_guest("Bob", "203.0.113.200")
    await players.create_guest("Cy", "2001:db8:1:2:aaaa::1")
    assert limiter.hits[("sign_up_network", "203.0.113.0/24")] == 2
    assert limiter.hits[("sign_up_network", "2001:db8:1:2::/64")] == 1
    assert limiter.hits[("sign_up_service", "all")] == 3


async def test_an_address_over_its_own_allowance_uses_none_of_its_networks(
    players: PlayerService, limiter: FakeLimiter
) -> None:
    limiter.caps["sign_in"] = 1
    await players.create_guest("Ann", ADDRESS)
    for _ in range(3):
        with pytest.raises(RateLimited):
            await players.create_guest("Bob", ADDRESS)
    assert limiter.count("sign_up_network") == 1 and limiter.count("sign_up_service") == 1


async def test_refreshes_count_for_the_address_only(players: PlayerService, limiter: FakeLimiter) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    await players.refresh(signed.refresh_token, ADDRESS)
    assert limiter.count("sign_up_network") == 1 and limiter.count("sign_up_service") == 1


@pytest.mark.parametrize(
    ("address", "network"),
    [
        ("203.0.113.7", "203.0.113.0/24"),
        ("203.0.113.255", "203.0.113.0/24"),
        ("::ffff:203.0.113.9", "203.0.113.0/24"),  # an IPv4 client of a dual-stack socket
        ("2001:db8::1", "2001:db8::/64"),
        ("2001:db8::ffff:ffff:ffff:ffff", "2001:db8::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("unknown", "unknown"),
        ("unix", "unix"),
    ],
)
def test_the_network_of_an_address(address: str, network: str) -> None:
    assert network_of(address) == network


async def test_a_refused_sign_in_stores_no_player(
    players: PlayerService, limiter: FakeLimiter, store: FakeStore
) -> None:
    limiter.caps["sign_in"] = 1
    first = await players.create_guest("Ann", ADDRESS)
    commits = store.commits
    with pytest.raises(RateLimited) as err:
        await players.create_guest("Bob", ADDRESS)
    assert err.value.retry_after > 0
    assert list(store.tables.players) == [first.player.id]
    assert len(store.tables.refresh_tokens) == 1
    assert store.commits == commits


# -- refresh -----------------------------------------------------------------------------------------------------
async def test_refresh_gives_a_new_access_token_for_the_same_player(
    players: PlayerService, clock: FakeClock, limiter: FakeLimiter
) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    clock.advance(7200)
    again = await players.refresh(signed.refresh_token, ADDRESS)
    assert again.player == signed.player
    assert again.access.token == f"token-for-{signed.player.id}"
    assert again.access.expires_at == clock.now + timedelta(hours=1) > signed.access.expires_at
    # No new refresh token is made: the device keeps its own.
    assert again.refresh is None and again.refresh_token == ""
    assert limiter.hits[("sign_in", ADDRESS)] == 2


async def test_refresh_with_an_unknown_token(players: PlayerService) -> None:
    await players.create_guest("Ann", ADDRESS)
    with pytest.raises(Unauthenticated):
        await players.refresh("not-a-token-we-gave-out", ADDRESS)


async def test_refresh_after_revoke(players: PlayerService) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    await players.revoke(signed.refresh_token, ADDRESS)
    with pytest.raises(Unauthenticated):
        await players.refresh(signed.refresh_token, ADDRESS)
    # Another guest's token is not affected.
    other = await players.create_guest("Bob", ADDRESS)
    assert (await players.refresh(other.refresh_token, ADDRESS)).player == other.player


async def test_refresh_after_expiry(players: PlayerService, clock: FakeClock) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    clock.advance(timedelta(days=players.refresh_days).total_seconds() - 1)
    assert (await players.refresh(signed.refresh_token, ADDRESS)).player == signed.player
    clock.advance(2)
    with pytest.raises(Unauthenticated):
        await players.refresh(signed.refresh_token, ADDRESS)


async def test_refresh_with_an_empty_token(players: PlayerService) -> None:
    with pytest.raises(InvalidArgument) as err:
        await players.refresh("", ADDRESS)
    assert err.value.field == "refreshToken"


async def test_refresh_with_an_over_long_token(players: PlayerService) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    with pytest.raises(Unauthenticated):
        await players.refresh("x" * (MAX_REFRESH_TOKEN + 1), ADDRESS)
    with pytest.raises(Unauthenticated):
        await players.refresh(signed.refresh_token + "x" * MAX_REFRESH_TOKEN, ADDRESS)


# -- revoke ------------------------------------------------------------------------------------------------------
async def test_revoking_twice_is_fine(players: PlayerService, store: FakeStore, clock: FakeClock) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    digest = hashlib.sha256(signed.refresh_token.encode()).hexdigest()
    await players.revoke(signed.refresh_token, ADDRESS)
    assert store.tables.refresh_tokens[digest].revoked_at == clock.now
    clock.advance(60)
    await players.revoke(signed.refresh_token, ADDRESS)
    assert store.tables.refresh_tokens[digest].revoked_at is not None
    with pytest.raises(Unauthenticated):
        await players.refresh(signed.refresh_token, ADDRESS)


async def test_revoking_an_unknown_token(players: PlayerService, store: FakeStore) -> None:
    signed = await players.create_guest("Ann", ADDRESS)
    with pytest.raises(Unauthenticated):
        await players.revoke("never-given-out", ADDRESS)
    assert all(t.revoked_at is None for t in store.tables.refresh_tokens.values())
    assert (await players.refresh(signed.refresh_token, ADDRESS)).player == signed.player


# -- get_player --------------------------------------------------------------------------------------------------
async def test_me_is_the_caller(players: PlayerService) -> None:
    ann = (await players.create_guest("Ann", ADDRESS)).player
    await players.create_guest("Bob", ADDRESS)
    assert await players.get_player(Caller(ann.id), "me") == ann


async def test_another_players_profile_by_id(players: PlayerService) -> None:
    ann = (await players.create_guest("Ann", ADDRESS)).player
    bob = (await players.create_guest("Bob", ADDRESS)).player
    seen = await players.get_player(Caller(ann.id), bob.id)
    assert seen == bob and seen.display_name == "Bob"


async def test_an_unknown_player(players: PlayerService) -> None:
    ann = (await players.create_guest("Ann", ADDRESS)).player
    with pytest.raises(NotFound):
        await players.get_player(Caller(ann.id), "00000000-0000-0000-0000-000000000000")
    # "me" of a caller with no player record is not found either.
    with pytest.raises(NotFound):
        await players.get_player(Caller("gone"), "me")


# -- external_player ---------------------------------------------------------------------------------------------
async def test_a_portal_player_is_made_once(players: PlayerService, store: FakeStore) -> None:
    first = await players.external_player(PORTAL, "sub-1", "Ann")
    assert await players.external_player(PORTAL, "sub-1", "Ann") == first
    assert await players.external_player(PORTAL, "sub-1", "Another name") == first
    assert await players.external_player(PORTAL, "sub-1", None) == first
    assert len(store.tables.players) == 1
    record = store.tables.players[first]
    assert (record.issuer, record.subject, record.display_name) == (PORTAL, "sub-1", "Ann")


async def test_the_same_subject_of_another_issuer_is_another_player(players: PlayerService, store: FakeStore) -> None:
    a = await players.external_player(PORTAL, "sub-1", "Ann")
    b = await players.external_player("https://other.example", "sub-1", "Ann")
    c = await players.external_player(PORTAL, "sub-2", "Ann")
    assert len({a, b, c}) == 3
    assert store.tables.players[b].issuer == "https://other.example"
    assert store.tables.players[b].subject == "sub-1"


async def test_portal_display_names(players: PlayerService, store: FakeStore) -> None:
    cleaned = await players.external_player(PORTAL, "s1", "  Ann  ")
    assert store.tables.players[cleaned].display_name == "Ann"
    for i, name in enumerate([None, "", "   "]):
        made = await players.external_player(PORTAL, f"default-{i}", name)
        assert PLAYER_NAME.fullmatch(store.tables.players[made].display_name)


@pytest.mark.parametrize("name", ["Ann\x00", "Ann\nSmith", "Ann\u202e", "x" * 65])
async def test_a_bad_portal_display_name_falls_back_to_the_default(
    players: PlayerService, store: FakeStore, name: str
) -> None:
    made = await players.external_player(PORTAL, "sub-bad", name)
    assert PLAYER_NAME.fullmatch(store.tables.players[made].display_name)
    assert await players.get_player(Caller(made), "me") == store.tables.players[made]
