"""The web client's Golf solitaire in Chromium, as a player uses it: sign in as a guest, win an easy winnable deal by
following hints (with an undo on the way, by its key), and play a round of nine to its score sheet, with the solver's
"you could have won like this" replayed for a lost hole. At a phone's and a desktop's size, with screenshots saved in
the test's output folder and axe-core's accessibility check on every view it passes. The server runs on PostgreSQL
only: the client cannot tell the databases apart, and the API's own tests run on both."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest

from tests.e2e.browser import launch, play_page, sign_in
from tests.e2e.support import Server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

pytestmark = pytest.mark.parametrize("db_kind", ["postgres"], indirect=True)

MOVES_LIMIT = 120
"""More clicks than any Golf game takes (at most 35 column cards and 16 draws, plus undos)."""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launch() as chromium:
        yield chromium


def _stat(page: Page, name: str) -> str:
    return page.locator(f'[data-stat="{name}"] b').inner_text()


def _wait_idle(page: Page, moves_before: str) -> None:
    """Until the board shows the game after the move (its move count changed)."""
    page.wait_for_function(
        "m => document.querySelector('[data-stat=\"moves\"] b')?.textContent !== m "
        "|| document.getElementById('game-over')",
        arg=moves_before,
    )


def _follow_hint(page: Page) -> None:
    """Ask for a hint with its key (H) and click the card (or the stock) it points at."""
    moves = _stat(page, "moves")
    page.keyboard.press("h")
    hinted = page.locator("button.card.hinted, .stock.hinted button.card").first
    hinted.wait_for()
    hinted.click()
    _wait_idle(page, moves)


@pytest.mark.parametrize("size", ["phone", "desktop"])
def test_win_an_easy_deal_by_hints_with_an_undo(browser: Browser, server: Server, tmp_path: Path, size: str) -> None:
    with play_page(browser, server.http_url, tmp_path, size) as play:
        page = play.page
        play.check_accessible("the sign-in form")
        sign_in(play, f"Hinted {size}")
        page.locator(".layout button.card").first.wait_for()  # the first game, dealt on arrival
        first = page.evaluate("localStorage.getItem('golf.play.solitaire')")
        page.get_by_label("Deal").select_option(label="Easy")
        page.locator("#view").focus()  # keys typed into the select go to the select
        page.keyboard.press("n")  # N: a new game of the chosen difficulty
        page.wait_for_function("id => localStorage.getItem('golf.play.solitaire') !== id", arg=first)
        game_id = page.evaluate("localStorage.getItem('golf.play.solitaire')")
        play.screenshot("solitaire-start")
        play.check_accessible("a new solitaire game")

        _follow_hint(page)
        assert _stat(page, "moves") == "1"
        page.keyboard.press("Control+z")
        page.locator('[data-stat="moves"] b').filter(has_text="0").wait_for()
        assert _stat(page, "undos") == "1"

        for _ in range(MOVES_LIMIT):
            if page.locator("#game-over").count():
                break
            _follow_hint(page)
            if _stat(page, "moves") == "12":
                play.screenshot("solitaire-hinted")
        over = page.locator("#game-over")
        assert over.locator("h3").inner_text() == "You won!"
        play.screenshot("solitaire-won")
        play.check_accessible("a won game")
        play.check_clean()

        # What the page showed is what the service has.
        token = page.evaluate("JSON.parse(localStorage.getItem('golf.play.credentials')).accessToken")
        game = httpx.get(
            f"{server.http_url}/v1/games/{game_id}", headers={"authorization": f"Bearer {token}"}, timeout=30
        ).json()["game"]
        assert game["status"] == "GAME_STATUS_WON" and game["undosUsed"] == 1 and game["hintsUsed"] >= 2
        assert _stat(page, "score") == str(game["score"])


def _finish_hole(page: Page) -> None:
    """Play the hole out quickly: draw the stock with the space key, then play what fits, until it is over."""
    for _ in range(MOVES_LIMIT):
        if page.locator("#game-over").count():
            return
        moves = _stat(page, "moves")
        if page.locator(".stock button.card:enabled").count():
            page.locator("#view").focus()  # space on a focused button presses that button
            page.keyboard.press(" ")
        else:
            page.locator(".layout button.card.playable").first.click()
        _wait_idle(page, moves)
    raise AssertionError("the hole did not end")


def test_a_round_of_nine_to_its_score_sheet(browser: Browser, server: Server, tmp_path: Path) -> None:
    with play_page(browser, server.http_url, tmp_path, "desktop") as play:
        page = play.page
        sign_in(play, "Rounder")
        page.locator(".layout button.card").first.wait_for()  # the first game, dealt on arrival
        page.get_by_role("button", name="Round of nine").click()
        page.locator('[data-stat="hole"] b').filter(has_text="1 of 9").wait_for()
        replayed = False
        for hole in range(1, 10):
            _finish_hole(page)
            sheet = page.locator("#round-sheet tbody tr")
            sheet.nth(hole - 1).wait_for()
            assert sheet.count() == hole
            could_win = page.get_by_role("button", name="You could have won like this")
            if not replayed and could_win.count():
                could_win.click()
                page.locator("#replay-progress").filter(has_text="Replaying move").wait_for()
                play.screenshot("round-replay")
                page.get_by_role("button", name="Skip to the end").click()
                page.locator("#replay-progress").filter(has_text="The winning line").wait_for()
                # The winning line clears every column.
                assert page.locator(".layout .card:not(.empty)").count() == 0
                page.get_by_role("button", name="Back to my game").click()
                replayed = True
            if hole < 9:
                page.get_by_role("button", name=f"Next hole ({hole + 1})").click()
                page.locator('[data-stat="hole"] b').filter(has_text=f"{hole + 1} of 9").wait_for()
        result = page.locator("#round-result")
        result.wait_for()
        assert "Round over" in result.inner_text() and "par" in result.inner_text()
        assert replayed, "no lost hole offered the winning line (every deal of a round is winnable)"
        play.screenshot("round-over")
        play.check_accessible("a finished round")

        page.get_by_role("link", name="History").click()
        page.locator("table.sheet tbody tr").filter(has_text="Solitaire round").wait_for()
        play.check_accessible("the history")
        page.get_by_role("link", name="Leaderboard").click()
        page.get_by_role("heading", name="Daily deal leaderboard").wait_for()
        play.check_accessible("the leaderboard")
        play.check_clean()
