"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) render in a real browser with no network but the server's.

Debian's Chromium (``make chromium`` installs it), headless, driven by Playwright, which never downloads a browser
here. Every request the pages make to any host but 127.0.0.1 is aborted and recorded, the browser cannot resolve
any other host name, and the test fails if there was one: the pages must work from the app's own assets. Loads
the pages' Content-Security-Policy refused in the browser are recorded too, and only ReDoc's logo (its bundle names
Redocly's CDN) may be among them. Without Chromium the test skips, or fails with GOLF_TEST_BROWSER=required (as in
CI). Screenshots are left in the test's ``tmp_path``.

One test for both pages: one server and one browser (about 5 s of the test's 10-15 s), whichever worker runs it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.e2e.browser import CSP_WATCH, LOCAL_HOST, TIMEOUT_MS, launch, need_browser
from tests.e2e.support import Server, migrate

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page, Request, Response, Route

API_TITLE = "Golf game service"
RENDER_MS = 60_000
"""The first render of a page's whole document (ReDoc's lays out every operation in one go, which took more than
``TIMEOUT_MS`` once under a CI run's load); every later wait has ``TIMEOUT_MS``."""
REDOCLY_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
"""Fetched by ReDoc's "API docs by Redocly" link whatever its options; the pages' CSP stops it in the browser."""


@pytest.fixture
def docs_server(tmp_path: Path) -> Iterator[Server]:
    need_browser()
    url = f"sqlite:///{tmp_path / 'golf.db'}"
    migrate(url)
    srv = Server(url, tmp_path).start()
    try:
        yield srv
    finally:
        srv.terminate()


@pytest.fixture
def browser(docs_server: Server) -> Iterator[Browser]:
    with launch() as chromium:  # no host name but 127.0.0.1 resolves in it, beside the request routing below
        yield chromium


@dataclass
class Visit:
    """What a page did: the URLs it asked for (all of them, and those blocked), its failures and errors."""

    page: Page
    requested: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    """Requests to another host, aborted before they left the browser."""
    csp: list[str] = field(default_factory=list)
    """Requests the page's Content-Security-Policy stopped in the browser: they never reach the network."""
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def on_request_failed(self, request: Request) -> None:
        (self.csp if request.failure == "csp" else self.failed).append(request.url)

    def on_response(self, response: Response) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.url}: HTTP {response.status}")

    def check_only_local(self, base_url: str, may_refuse: frozenset[str] = frozenset()) -> None:
        """Nothing reached the network but the server; the CSP refused nothing but ``may_refuse``; no errors."""
        refused = set(self.page.evaluate("window.__refused")) | set(self.csp)
        assert refused <= may_refuse, f"the page's CSP refused: {sorted(refused)}"
        assert not self.blocked, f"the page asked another host: {self.blocked}"
        sent = [u for u in self.requested if u not in self.csp and not u.startswith("data:")]
        elsewhere = [u for u in sent if not u.startswith(f"{base_url}/")]
        assert not elsewhere, f"requests outside the server: {elsewhere}"
        assert not self.failed, f"failed requests: {self.failed}"
        assert not self.errors, f"errors on the page: {self.errors}"


@contextmanager
def visiting(browser: Browser) -> Iterator[Visit]:
    """A page in a fresh browser context whose requests to anywhere but 127.0.0.1 are aborted and recorded."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    context.set_default_timeout(TIMEOUT_MS)
    seen = Visit(context.new_page())

    def gate(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).hostname == LOCAL_HOST:
            route.continue_()
        else:
            seen.blocked.append(url)
            route.abort("blockedbyclient")

    context.route("**/*", gate)
    context.add_init_script(CSP_WATCH)
    seen.page.on("request", lambda r: seen.requested.append(r.url))
    seen.page.on("requestfailed", seen.on_request_failed)
    seen.page.on("response", seen.on_response)
    seen.page.on("websocket", lambda ws: seen.blocked.append(ws.url))
    seen.page.on("pageerror", lambda err: seen.errors.append(str(err)))
    try:
        yield seen
    finally:
        context.close()


def _operations(openapi: dict[str, Any]) -> list[tuple[str, str]]:
    """(tag, operationId) of every operation of the document."""
    return [(op["tags"][0], op["operationId"]) for item in openapi["paths"].values() for op in item.values()]


def test_docs_and_redoc_render_offline(browser: Browser, docs_server: Server, tmp_path: Path) -> None:
    base = docs_server.http_url
    operations = _operations(httpx.get(f"{base}/openapi.json", timeout=10).json())
    assert len(operations) > 10 and any(op == "CreateGame" for _, op in operations)
    tags = sorted({tag for tag, _ in operations})
    _check_swagger_ui(browser, base, operations, tags, tmp_path / "docs.png")
    _check_redoc(browser, base, operations, tags, tmp_path / "redoc.png")


def _check_swagger_ui(
    browser: Browser, base: str, operations: list[tuple[str, str]], tags: list[str], screenshot: Path
) -> None:
    with visiting(browser) as seen:
        page = seen.page
        page.goto(f"{base}/docs", wait_until="load")
        page.locator(".swagger-ui .info .title").filter(has_text=API_TITLE).wait_for(timeout=RENDER_MS)
        page.locator(".opblock").nth(len(operations) - 1).wait_for()
        page.screenshot(path=screenshot)

        # Every operation is listed under its tag (Swagger UI's element ids: operations-<tag>-<operationId>).
        ids = page.locator(".opblock[id]").evaluate_all("els => els.map(e => e.id)")
        assert sorted(ids) == sorted(f"operations-{tag}-{op}" for tag, op in operations), "/docs"
        shown_tags = page.locator(".opblock-tag[data-tag]").evaluate_all("els => els.map(e => e.dataset.tag)")
        assert sorted(shown_tags) == tags, "/docs"
        create = page.locator('[id^="operations-"][id$="-CreateGame"]')
        assert "/v1/games" in create.locator(".opblock-summary-path").inner_text()
        # Its stylesheet is applied (the operation's method is a coloured badge), not just its script run.
        method = create.locator(".opblock-summary-method")
        assert method.inner_text().strip() == "POST"
        colour = method.evaluate("e => getComputedStyle(e).backgroundColor")
        assert colour not in ("", "rgba(0, 0, 0, 0)", "transparent"), "/docs: swagger-ui.css not applied"
        # Opening an operation shows its details, from the document the page loaded.
        create.locator(".opblock-summary").click()
        create.locator(".opblock-body").wait_for()
        assert page.locator("text=Failed to load API definition").count() == 0

        for url in ("/openapi.json", "/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"):
            assert f"{base}{url}" in seen.requested, url
        seen.check_only_local(base)


def _check_redoc(
    browser: Browser, base: str, operations: list[tuple[str, str]], tags: list[str], screenshot: Path
) -> None:
    with visiting(browser) as seen:
        page = seen.page
        page.goto(f"{base}/redoc", wait_until="load")
        page.locator("h1").filter(has_text=API_TITLE).first.wait_for(timeout=RENDER_MS)
        create = page.locator('[id="operation/CreateGame"]')
        create.wait_for()
        page.screenshot(path=screenshot)

        assert "/v1/games" in create.inner_text()
        # Every operation has its section, and the menu lists every tag.
        ids = page.locator('[id^="operation/"]').evaluate_all("els => els.map(e => e.id)")
        assert sorted(ids) == sorted(f"operation/{op}" for _, op in operations), "/redoc"
        menu = page.locator(".menu-content").inner_text()
        assert all(tag in menu for tag in tags), ("/redoc", menu)
        assert page.locator("text=Something went wrong").count() == 0

        for url in ("/openapi.json", "/docs/assets/redoc.standalone.js"):
            assert f"{base}{url}" in seen.requested, url
        seen.check_only_local(base, may_refuse=frozenset({REDOCLY_LOGO}))
        # The logo's image is gone once its load fails (ReDoc's own fallback): nothing broken is shown.
        assert page.locator('img[alt="redocly logo"]').count() == 0
