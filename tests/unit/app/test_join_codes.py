"""Guessing private tables' join codes (issue 26, section 4): wrong codes are limited per player and per address,
and a player or address over its limit is refused every code, the right one too, until the window frees."""

from __future__ import annotations

import pytest

from golf.adapters.ratelimit import Limits
from golf.adapters.table_fanout import TableHub
from golf.app.errors import NotFound, RateLimited
from golf.app.identity import Caller
from golf.app.tables.code_guard import JoinCodeGuard
from golf.app.tables.events import TableEvents
from golf.app.tables.service import JOIN_CODE_ALPHABET, JOIN_CODE_LENGTH, TableService, secure_join_code
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore

ANN, BOB, CAT = Caller("player-ann"), Caller("player-bob"), Caller("player-cat")
ADDRESS, OTHER_ADDRESS = "203.0.113.7", "198.51.100.1"
WRONG = "ZZZZZZZZ"


@pytest.fixture
def tables(store: FakeStore, clock: FakeClock) -> TableService:
    limits = Limits({"create": "", "join_code_player": "3/minute", "join_code_address": "5/minute"})
    return TableService(store, clock, limits)


async def _guess(tables: TableService, caller: Caller, code: str, address: str = ADDRESS) -> str:
    """What one join by ``code`` came to: ``joined``, ``not found`` or ``limited``."""
    try:
        await tables.join(caller, f"k-{code}-{id(object())}", join_code=code, address=address)
    except NotFound:
        return "not found"
    except RateLimited:
        return "limited"
    return "joined"


def test_codes_are_eight_letters_that_read_unambiguously() -> None:
    assert JOIN_CODE_LENGTH >= 8 and not set("IL O01") & set(JOIN_CODE_ALPHABET)
    assert len(JOIN_CODE_ALPHABET) ** JOIN_CODE_LENGTH > 7 * 10**10
    codes = {secure_join_code() for _ in range(200)}
    assert all(len(code) == 8 and set(code) <= set(JOIN_CODE_ALPHABET) for code in codes) and len(codes) == 200


async def test_a_player_past_the_limit_is_refused_even_the_right_code(tables: TableService) -> None:
    made = await tables.create_table(ANN, private=True)
    assert made.join_code is not None
    answers = [await _guess(tables, BOB, f"ZZZZZZZ{letter}") for letter in "ABCD"]
    assert answers == ["not found"] * 3 + ["limited"]
    # The right code now: still refused, so a guesser learns nothing from the guesses past the limit.
    with pytest.raises(RateLimited) as refused:
        await tables.join(BOB, "k-right", join_code=made.join_code, address=OTHER_ADDRESS)
    assert 55 < refused.value.retry_after <= 60
    assert refused.value.message.startswith("too many wrong join codes: at most 3 per 1 minute; retry in ")
    # The same for a table id with a code, and for getting the table.
    with pytest.raises(RateLimited):
        await tables.join(BOB, "k-id", table_id=made.table_id, join_code=made.join_code, address=OTHER_ADDRESS)
    with pytest.raises(RateLimited):
        await tables.get(BOB, made.table_id, made.join_code, OTHER_ADDRESS)
    # Another player is not held back by Bob's guesses.
    assert (await tables.join(CAT, "k-cat", join_code=made.join_code, address=OTHER_ADDRESS)).seat == 1


async def test_a_block_lasts_until_the_window_frees() -> None:
    limiter, now = FakeLimiter(), [100.0]
    limiter.caps["join_code_player"] = 2
    guard = JoinCodeGuard(limiter, monotonic=lambda: now[0])
    await guard.wrong("bob", None)
    await guard.wrong("bob", None)
    guard.check("bob", None)  # two wrong codes: the window is full, not yet past it
    with pytest.raises(RateLimited):
        await guard.wrong("bob", None)
    now[0] += 1.0
    with pytest.raises(RateLimited) as refused:
        guard.check("bob", ADDRESS)  # no count needed: refused from memory
    assert refused.value.retry_after == pytest.approx(0.5)
    assert refused.value.message == "too many join_code_player calls; retry in 1 s"
    guard.check("cat", ADDRESS)
    now[0] += 0.6  # the limiter's retry_after (1.5 s) has passed
    limiter.hits.clear()
    guard.check("bob", ADDRESS)
    await guard.wrong("bob", ADDRESS)
    assert limiter.hits == {("join_code_player", "bob"): 1, ("join_code_address", ADDRESS): 1}


async def test_every_player_of_one_address_shares_its_limit(tables: TableService) -> None:
    made = await tables.create_table(ANN, private=True)
    guests = [Caller(f"guest-{n}") for n in range(10)]
    answers = [await _guess(tables, guest, WRONG) for guest in guests]
    assert answers == ["not found"] * 5 + ["limited"] * 5
    assert made.join_code is not None
    assert await _guess(tables, guests[9], made.join_code) == "limited"
    assert await _guess(tables, guests[9], made.join_code, OTHER_ADDRESS) == "joined"


async def test_right_codes_and_listed_tables_are_not_counted(tables: TableService) -> None:
    made = await tables.create_table(ANN, seats=8, private=True)
    listed = await tables.create_table(ANN, seats=8)
    assert made.join_code is not None
    for n, guest in enumerate(Caller(f"guest-{n}") for n in range(6)):
        await tables.get(guest, made.table_id, made.join_code, ADDRESS)
        assert (await tables.join(guest, f"k{n}", join_code=made.join_code, address=ADDRESS)).seat == n + 1
        await tables.get(guest, listed.table_id, None, ADDRESS)
    assert await _guess(tables, BOB, WRONG) == "not found"  # the address has all of its allowance left


async def test_codes_of_six_letters_made_before_still_open_their_tables(store: FakeStore, clock: FakeClock) -> None:
    tables = TableService(store, clock, Limits({"create": ""}), join_codes=lambda: "KXPRTM")
    made = await tables.create_table(ANN, private=True)
    assert made.join_code == "KXPRTM"
    assert (await tables.join(BOB, "k", join_code="kxprtm", address=ADDRESS)).seat == 1


async def test_watching_with_a_wrong_code_counts_too(tables: TableService, store: FakeStore) -> None:
    made = await tables.create_table(ANN, private=True)
    events = TableEvents(store, TableHub(store, queue_size=8, buffer_size=8, catch_up_seconds=60), codes=tables.codes)
    for _ in range(3):
        with pytest.raises(NotFound):
            await events.watch(BOB, made.table_id, join_code=WRONG, address=ADDRESS)
    with pytest.raises(RateLimited):
        await events.watch(BOB, made.table_id, join_code=WRONG, address=ADDRESS)
    assert await _guess(tables, BOB, WRONG) == "limited"  # one count for both ways in
