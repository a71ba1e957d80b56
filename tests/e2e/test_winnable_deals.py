"""Winnable deals over both transports and both databases: the verdict and difficulty on the deal, winnable by
default for new games, the daily deal, and the pool of solved deals surviving a restart."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from golf.v1 import solitaire_pb2
from tests.e2e.deal_pool import LEVELS, D, pool_rows
from tests.e2e.support import Client, Grpc, R, Rest, Server, migrate, pb

# The documented measure (Deal.difficulty_score): EASY below 1,300 positions, HARD from 11,000.
EASY_BELOW = 1_300
HARD_FROM = 11_000
POOL_WAIT_SECONDS = 120.0


def check_difficulty(deal: solitaire_pb2.Deal) -> None:
    assert deal.HasField("winnable") and deal.winnable
    assert deal.difficulty in LEVELS, deal
    assert deal.HasField("difficulty_score") and deal.difficulty_score >= 0
    score = deal.difficulty_score
    expected = (
        D.DIFFICULTY_EASY if score < EASY_BELOW else D.DIFFICULTY_HARD if score >= HARD_FROM else D.DIFFICULTY_MEDIUM
    )
    assert deal.difficulty == expected, f"difficulty {deal.difficulty} does not follow the measure {score}"


def winnable_deal(client: Client, preset: str = "wrap", difficulty: int = 0) -> solitaire_pb2.Deal:
    req = pb.CreateDealRequest(preset=preset, winnable_only=True, difficulty=difficulty)  # type: ignore[arg-type]
    deal: solitaire_pb2.Deal = client.create_deal(req).expect_ok().deal
    return deal


# -- winnable deals and difficulty -----------------------------------------------------------------------------
def test_winnable_only_deal_carries_verdict_and_difficulty(client: Client) -> None:
    deal = winnable_deal(client)
    check_difficulty(deal)
    assert deal.preset == "wrap" and deal.rules.wrap
    assert deal.shuffle_algorithm == "golf-shuffle-v1" and not deal.HasField("pysol_deal_number")
    # GetDeal shows the same verdict.
    again = client.get_deal(deal.id).expect_ok().deal
    assert (again.winnable, again.difficulty, again.difficulty_score) == (True, deal.difficulty, deal.difficulty_score)


def test_difficulty_asked_for_is_dealt(client: Client) -> None:
    # One level on demand here (the solver searches until it finds one); the pool test deals every level.
    easy = winnable_deal(client, difficulty=D.DIFFICULTY_EASY)
    check_difficulty(easy)
    assert easy.difficulty == D.DIFFICULTY_EASY


def test_plain_deals_are_not_solved(client: Client) -> None:
    deal = client.create_deal(pb.CreateDealRequest(preset="wrap", seed="deals-plain")).expect_ok().deal
    assert not deal.HasField("winnable") and deal.difficulty == D.DIFFICULTY_UNSPECIFIED
    assert not deal.HasField("difficulty_score")
    explicit = client.create_deal(pb.CreateDealRequest(preset="wrap", winnable_only=False)).expect_ok().deal
    assert not explicit.HasField("winnable")


def test_winnable_requests_are_checked(client: Client) -> None:
    seeded = pb.CreateDealRequest(preset="wrap", seed="deals-seeded", winnable_only=True)
    err = client.create_deal(seeded).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == "winnableOnly"
    numbered = pb.CreateDealRequest(pysol_deal_number=2, winnable_only=True)
    client.create_deal(numbered).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    bad = pb.CreateDealRequest(preset="wrap", winnable_only=True)
    bad.difficulty = 7  # type: ignore[assignment]
    assert client.create_deal(bad).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "difficulty"


def test_new_game_gets_a_winnable_deal_by_default(client: Client) -> None:
    game = client.create_game(pb.CreateGameRequest(preset="wrap")).expect_ok().game
    deal = client.get_deal(game.deal_id).expect_ok().deal
    check_difficulty(deal)
    assert not game.HasField("post_mortem") and game.status == D.GAME_STATUS_IN_PROGRESS
    assert [c.cards for c in game.columns] == [c.cards for c in deal.columns]
    # Asking for any deal skips the solver.
    plain = client.create_game(pb.CreateGameRequest(preset="wrap", winnable_only=False)).expect_ok().game
    assert not client.get_deal(plain.deal_id).expect_ok().deal.HasField("winnable")


# -- the daily deal --------------------------------------------------------------------------------------------
def utc_day(offset: int = 0) -> str:
    return (datetime.now(UTC).date() + timedelta(days=offset)).isoformat()


def test_daily_deal_is_the_same_for_every_call_and_transport(rest: Rest, grpc_client: Grpc) -> None:
    today = utc_day()
    first = rest.get_daily_deal(today, "wrap").expect_ok().deal
    check_difficulty(first)
    assert first.preset == "wrap"
    assert rest.get_daily_deal(today, "wrap").expect_ok().deal == first
    assert grpc_client.get_daily_deal(today, "wrap").expect_ok().deal == first
    # The date is required (over REST it is part of the path), in the one form YYYY-MM-DD.
    for bad in ("", "20261101", "2026-W48-1"):
        assert grpc_client.get_daily_deal(bad, "wrap").expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "date"
        if bad:
            assert rest.get_daily_deal(bad, "wrap").expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "date"
    # Other presets, and other days, have their own deal.
    standard = grpc_client.get_daily_deal(today, "standard").expect_ok().deal
    check_difficulty(standard)
    assert standard.id != first.id and standard.preset == "standard"
    assert rest.get_daily_deal(today, "").expect_ok().deal.id == standard.id, "the default preset is standard"
    past = rest.get_daily_deal(utc_day(-30), "wrap").expect_ok().deal
    assert past.id != first.id
    assert grpc_client.get_daily_deal(utc_day(-30), "wrap").expect_ok().deal.id == past.id
    # Anyone can play it.
    game = grpc_client.create_game(pb.CreateGameRequest(deal_id=first.id)).expect_ok().game
    assert game.deal_id == first.id


def test_daily_deal_refusals(client: Client) -> None:
    for day in (utc_day(2), "2024-13-01", "yesterday", utc_day(-400)):
        err = client.get_daily_deal(day, "wrap").expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
        assert err.field == "date", (day, err)
    err = client.get_daily_deal(utc_day(), "no-such-preset").expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == "preset"


def test_pool_survives_a_restart(database_url: str, tmp_path: Path) -> None:
    migrate(database_url)
    srv = Server(database_url, tmp_path, extra_env={"GOLF_POOL_SIZE": "1", "GOLF_POOL_PRESETS": "wrap"}).start()
    try:
        deadline = time.monotonic() + POOL_WAIT_SECONDS
        rows = pool_rows(database_url)
        while {d for d, _, _ in rows} != set(LEVELS.values()) and time.monotonic() < deadline:
            time.sleep(0.2)
            rows = pool_rows(database_url)
        assert {d for d, _, _ in rows} == set(LEVELS.values()), f"the pool did not fill: {rows}\n{srv.log_text()}"
    finally:
        assert srv.stop() == 0, srv.log_text()
    rows = pool_rows(database_url)
    first: dict[str, str] = {}
    for difficulty, deal_id, _ in rows:
        first.setdefault(difficulty, deal_id)

    srv.extra_env = {"GOLF_POOL_SIZE": "0"}
    srv.start()
    rest = Rest(srv.http_url)
    grpc_client = Grpc(srv.grpc_target, as_=rest)
    try:
        clients = [rest, grpc_client, rest]
        for client, (level, name) in zip(clients, LEVELS.items(), strict=True):
            deal = winnable_deal(client, "wrap", level)
            assert deal.id == first[name], f"{name}: dealt {deal.id}, not the pooled {first[name]}"
            check_difficulty(deal)
            assert deal.difficulty == level
        after = pool_rows(database_url)
        assert [(d, i) for d, i, _ in after] == [(d, i) for d, i, _ in rows], "dealt deals stay in the pool"
        assert sorted(i for _, i, u in after if u == 1) == sorted(first.values())
        # Not refilled, the pool still deals at once: fresh deals first, then the least dealt again.
        pooled = {i for _, i, _ in rows}
        for _ in range(len(rows) + 1):
            assert winnable_deal(grpc_client, "wrap").id in pooled
    finally:
        rest.close()
        grpc_client.close()
        assert srv.stop() == 0, srv.log_text()
