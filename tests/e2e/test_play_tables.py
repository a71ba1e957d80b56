"""The web client's card Golf tables (``/play/#/tables``) in a real browser.

A two-seat six-card hole against a greedy bot, created from the lobby form and played by clicking (the start cards,
the stock, the discard pile, the grid) at phone and desktop sizes, with axe-core on the lobby and the table; and a
hole against a player driven over REST in which the browser goes offline while the opponent moves, then catches
up from its event stream without a reload. One browser for the module; screenshots in the test's ``tmp_path``.
The server runs on SQLite only (the solitaire client's test runs on PostgreSQL): the client cannot tell the
databases apart, and the tables' API tests run on both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from tests.e2e.browser import PlayPage, launch, play_page, sign_in
from tests.e2e.support import Server, new_key

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

TABLE = ".golf-table"
MY_PLACES = ".seat.mine .grid button.card"
STOCK = ".pile.stock button.card"
DISCARD = ".pile.discard button.card"
OVER = "#match-over"

pytestmark = pytest.mark.parametrize("db_kind", ["sqlite"], indirect=True)


@pytest.fixture(scope="module")
def browser(server: Server) -> Iterator[Browser]:
    with launch() as b:
        yield b


def version(page: Page) -> int:
    return int(page.locator(TABLE).get_attribute("data-version") or 0)


def wait_newer(page: Page, than: int) -> None:
    page.wait_for_function("v => Number(document.querySelector('.golf-table')?.dataset.version || 0) > v", arg=than)


def create_from_lobby(play: PlayPage, *, private: bool = False, axe: bool = False) -> str:
    """Fill the lobby's form for a two-seat six-card match of one hole with no bot delay; the new table's id."""
    page = play.page
    page.goto(f"{play.base_url}/play/#/tables")
    page.get_by_label("Preset").select_option("six-card")
    page.locator("#table-preset-description").filter(has_text="2x3").wait_for()
    page.get_by_label("Seats").fill("2")
    page.get_by_label("Holes").fill("1")
    page.get_by_label("Bot delay (seconds)").fill("0")
    if private:
        page.get_by_label("Private (join with a code)").check()
    if axe:
        page.locator(".house-rules summary").click()  # the house rules' list open too
        page.get_by_role("heading", name="Open tables").wait_for()
        play.check_accessible("the tables' lobby")
        play.screenshot("tables-lobby")
    page.get_by_role("button", name="Create table").click()
    page.wait_for_url(re.compile(r"#/tables/[0-9a-f-]+$"))
    page.locator(TABLE).wait_for()
    return page.url.rsplit("/", 1)[1]


def choose_start_cards(page: Page) -> None:
    """Click two face-down cards of the own grid: the legal reveal of them is sent."""
    page.locator(f"{MY_PLACES}[aria-pressed]").first.wait_for()
    before = version(page)
    page.locator(f"{MY_PLACES}[aria-pressed='false']").nth(0).click()
    page.locator(f"{MY_PLACES}[aria-pressed='true']").wait_for()
    page.locator(f"{MY_PLACES}[aria-pressed='false']").nth(0).click()
    wait_newer(page, before)
    page.wait_for_function("() => !document.querySelector('.seat.mine .grid [aria-pressed]')")


def take_turn(page: Page, turn: int) -> None:
    """One turn by clicking: the first from the stock onto the discard pile, the second taking the discard, later
    ones from the stock swapped into a face-down place (so the hole ends)."""
    before = version(page)
    if turn == 1:
        page.locator(DISCARD).click()  # take the discard: it must be swapped in
    else:
        page.locator(STOCK).click()
    page.locator(MY_PLACES).first.wait_for()  # the held card: the grid's places are now swaps
    page.locator(".pile.held .card").wait_for()
    if turn == 0:
        page.locator(DISCARD).click()  # the drawn card onto the discard pile
    else:
        face_down = page.locator(f"{MY_PLACES}.back")
        (face_down if face_down.count() else page.locator(MY_PLACES)).first.click()
    wait_newer(page, before + 1)


def wait_my_turn_or_over(page: Page) -> bool:
    """True when it is the browser's turn to draw, False when the match is over."""
    page.locator(f"{STOCK}, {OVER}").first.wait_for()
    return page.locator(OVER).count() == 0


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_a_hole_against_a_bot_played_by_clicking(browser: Browser, server: Server, tmp_path: Path, size: str) -> None:
    with play_page(browser, server.http_url, tmp_path, size) as play:
        page = play.page
        sign_in(play, "Ann")
        create_from_lobby(play, axe=size == "phone")
        page.get_by_role("heading", name="Seats").wait_for()
        page.locator("#table-link").wait_for()
        page.get_by_label("Bot level").select_option("BOT_LEVEL_GREEDY")
        page.get_by_role("button", name="Add bot").click()
        page.locator(".seat-list").filter(has_text="Intermediate").wait_for()
        page.get_by_role("button", name="Start").click()
        page.locator(f"{TABLE}[data-phase='HOLE_PHASE_SETUP']").wait_for()
        page.locator("#stream-state").filter(has_text="live").wait_for()
        play.screenshot("tables-setup")
        if size == "desktop":
            play.check_accessible("a card Golf table in its setup")
        choose_start_cards(page)
        assert page.locator(".seat.mine .grid .card:not(.back)").count() >= 2  # the two turned up

        turns = 0
        while wait_my_turn_or_over(page):
            assert turns < 12, "the hole should be over after a few swaps into face-down places"
            if turns == 1:
                play.screenshot("tables-mid-hole")
                if size == "phone":
                    play.check_accessible("a card Golf table mid-hole")
                assert page.get_by_role("heading", name="Your moves").is_visible()
                assert page.get_by_role("button", name=re.compile("^Take the .+ from the discard pile$")).is_visible()
            take_turn(page, turns)
            turns += 1

        page.locator(OVER).filter(has_text="Match over").wait_for()
        sheet = page.locator("#score-sheet")
        sheet.wait_for()
        assert sheet.locator("tbody tr").count() == 1
        assert sheet.locator("thead th").all_inner_texts()[1:] == ["You", "Bot 2"]
        page.get_by_role("heading", name="Hole 1 result").wait_for()
        assert page.locator(".last-hole .seat").count() == 2
        assert page.locator(".last-hole .card.back").count() == 0, "a finished hole shows every card"
        play.screenshot("tables-end")
        play.check_accessible("a card Golf table after the match")
        play.check_clean()


def _rest_player(server: Server) -> httpx.Client:
    client = httpx.Client(base_url=server.http_url, timeout=10)
    body = client.post("/v1/players:guest", json={"displayName": "Bob"}).json()
    client.headers["authorization"] = f"Bearer {body['credentials']['accessToken']}"
    return client


def _act(client: httpx.Client, table: dict[str, Any], move: dict[str, Any]) -> dict[str, Any]:
    reply = client.post(
        f"/v1/tables/{table['id']}/moves",
        json={"move": move, "expectedVersion": table["version"], "idempotencyKey": new_key()},
    )
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = reply.json()["table"]
    return result


def _get(client: httpx.Client, table_id: str) -> dict[str, Any]:
    reply = client.get(f"/v1/tables/{table_id}")
    assert reply.status_code == 200, reply.text
    result: dict[str, Any] = reply.json()["table"]
    return result


def test_the_table_catches_up_after_the_stream_drops(browser: Browser, server: Server, tmp_path: Path) -> None:
    bob = _rest_player(server)
    with play_page(browser, server.http_url, tmp_path, "desktop") as play:
        page = play.page
        sign_in(play, "Ann")
        table_id = create_from_lobby(play, private=True)
        code = page.locator("#join-code-shown").inner_text()
        assert re.fullmatch("[A-Z]{8}", code)
        assert page.locator("#table-link").input_value().endswith(f"#/tables/{table_id}/{code}")
        joined = bob.post("/v1/tables:joinByCode", json={"joinCode": code, "idempotencyKey": new_key()})
        assert joined.status_code == 200, joined.text
        page.locator(".seat-list").filter(has_text="Bob").wait_for()  # the join arrived by the stream
        page.get_by_role("button", name="Start").click()
        choose_start_cards(page)

        table = _get(bob, table_id)
        table = _act(bob, table, table["legalMoves"][0])  # Bob's start cards
        if table["hole"].get("toMove") == 1:  # Bob moves first: from the stock onto the discard pile
            table = _act(bob, table, {"drawStock": {}})
            table = _act(bob, table, {"discard": {}})
        wait_my_turn_or_over(page)
        take_turn(page, 2)  # Ann: stock, swapped into a face-down place; Bob's turn now
        page.locator("#turn").filter(has_text="Bob's turn").wait_for()

        page.context.set_offline(True)
        page.locator("#stream-state").filter(has_text="reconnecting").wait_for()
        shown = version(page)
        table = _get(bob, table_id)
        assert table["hole"]["toMove"] == 1
        table = _act(bob, table, {"drawStock": {}})
        drawn = table["hole"]["held"]["code"]
        table = _act(bob, table, {"discard": {}})
        assert table["hole"]["discard"][-1]["code"] == drawn
        page.wait_for_timeout(300)
        assert version(page) == shown, "offline: nothing new arrives"
        assert page.locator(STOCK).count() == 0

        page.context.set_offline(False)
        page.locator("#stream-state").filter(has_text="live").wait_for()
        page.locator(f"{DISCARD}[data-code='{drawn}']").wait_for()  # Bob's discard, now on top and takeable
        page.locator(STOCK).wait_for()
        page.locator("#turn").filter(has_text="Your turn").wait_for()
        assert version(page) == int(table["version"])
        play.screenshot("tables-caught-up")
        play.check_clean()
    bob.close()
