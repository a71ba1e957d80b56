"""Browser tests' support: Debian's Chromium driven by Playwright's Python package, which never downloads a browser.

``need_browser()`` is the guard: without Chromium or Playwright a test skips, or fails when
``GOLF_TEST_BROWSER=required`` (as in CI; ``make chromium`` installs Debian's package). ``launch()`` starts the
browser with no host name resolvable but 127.0.0.1. ``play_page()`` opens the web client (``/play``) at a phone or
desktop size in a context whose requests to any other host are aborted, recording the page's errors, failed
requests and refusals of its Content-Security-Policy, and ``PlayPage.axe()`` runs axe-core (from npm, in
node_modules) on the page.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Request, Response, Route

os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")  # never: we drive the system's Chromium
CHROMIUM = os.environ.get("GOLF_TEST_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
LOCAL_HOST = "127.0.0.1"
TIMEOUT_MS = 15_000
AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
"""axe-core from package.json (make test installs it)."""
CSP_WATCH = """
window.__refused = [];
document.addEventListener("securitypolicyviolation", e => window.__refused.push(e.blockedURI));
"""

SIZES: dict[str, dict[str, Any]] = {
    # A phone (the size of a common 6.1" screen), with touch, and a desktop window.
    "phone": {
        "viewport": {"width": 390, "height": 844},
        "is_mobile": True,
        "has_touch": True,
        "device_scale_factor": 2,
    },
    "desktop": {"viewport": {"width": 1280, "height": 900}},
}


def need_browser() -> None:
    """Skip (or fail, with GOLF_TEST_BROWSER=required) unless Chromium and Playwright are here."""
    problem = None
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        problem = f"Chromium is not installed at {CHROMIUM} (make chromium installs Debian's)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError as err:
            problem = f"Playwright is not installed ({err}); pip install -e '.[dev]'"
    if problem is None:
        return
    if os.environ.get("GOLF_TEST_BROWSER") == "required":
        pytest.fail(problem + " (GOLF_TEST_BROWSER=required)")
    pytest.skip(problem)  # the browser guard: skips only when GOLF_TEST_BROWSER is not "required"


@contextmanager
def launch() -> Iterator[Browser]:
    """Headless Chromium in which no host name but 127.0.0.1 resolves."""
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[f"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE {LOCAL_HOST}"],
        )
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class PlayPage:
    """A page of the web client and what it did: requests to other hosts (blocked), failed requests, errors."""

    page: Page
    base_url: str
    shots: Path
    size: str
    blocked: list[str] = field(default_factory=list)
    csp: list[str] = field(default_factory=list)
    server_errors: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def on_request_failed(self, request: Request) -> None:
        if request.failure == "csp":
            self.csp.append(request.url)

    def on_response(self, response: Response) -> None:
        if response.status >= 500:
            self.server_errors.append(f"{response.request.method} {response.url}: HTTP {response.status}")

    def screenshot(self, name: str) -> Path:
        """A full-page screenshot saved as ``<size>-<name>.png`` in the test's output folder."""
        path = self.shots / f"{self.size}-{name}.png"
        self.page.screenshot(path=path, full_page=True)
        return path

    def axe(self) -> list[dict[str, Any]]:
        """axe-core's violations on the page as it stands (WCAG 2.1 A and AA, and best practices)."""
        assert AXE.is_file(), f"axe-core is missing at {AXE}: npm install (make test runs it)"
        if not self.page.evaluate("typeof window.axe !== 'undefined'"):
            self.page.evaluate(AXE.read_text())  # evaluated by the test, not loaded by the page: the CSP stands
        result = self.page.evaluate(
            "() => axe.run(document, {runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']})"
        )
        return [
            {"id": v["id"], "impact": v["impact"], "help": v["help"], "nodes": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"]
        ]

    def check_accessible(self, what: str) -> None:
        violations = self.axe()
        assert not violations, f"{what} ({self.size}): axe-core found\n{json.dumps(violations, indent=1)}"

    def check_clean(self) -> None:
        """No request left the server's host, the CSP refused nothing, no 5xx, no script error on the page."""
        refused = set(self.page.evaluate("window.__refused || []")) | set(self.csp)
        assert not refused, f"the page's CSP refused: {sorted(refused)}"
        assert not self.blocked, f"the page asked another host: {self.blocked}"
        assert not self.server_errors, f"the server failed: {self.server_errors}"
        assert not self.errors, f"errors on the page: {self.errors}"


@contextmanager
def play_page(browser: Browser, base_url: str, shots: Path, size: str) -> Iterator[PlayPage]:
    """The web client at ``/play/`` in a fresh context of ``size`` ("phone" or "desktop"), not yet signed in."""
    context = browser.new_context(**SIZES[size], service_workers="block")
    context.set_default_timeout(TIMEOUT_MS)
    seen = PlayPage(context.new_page(), base_url, shots, size)

    def gate(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).hostname == LOCAL_HOST:
            route.continue_()
        else:
            seen.blocked.append(url)
            route.abort("blockedbyclient")

    context.route("**/*", gate)
    context.add_init_script(CSP_WATCH)
    seen.page.on("requestfailed", seen.on_request_failed)
    seen.page.on("response", seen.on_response)
    seen.page.on("pageerror", lambda err: seen.errors.append(str(err)))
    try:
        seen.page.goto(f"{base_url}/play/", wait_until="load")
        yield seen
    finally:
        context.close()


def sign_in(play: PlayPage, name: str) -> None:
    """Sign in as a guest called ``name`` from the client's sign-in form."""
    page = play.page
    page.get_by_label("Your name (optional)").fill(name)
    page.get_by_role("button", name="Play as guest").click()
    page.locator("#who .name").filter(has_text=name).wait_for()
