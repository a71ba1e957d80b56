"""The documentation pages, in process: ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) link only to the app's own
URLs, every asset they link to answers with its content type, and none of them is in the OpenAPI document.
tests/e2e/test_docs_browser.py renders them in a browser without network."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser

import httpx
import pytest

from golf.adapters.docs import ASSETS, ASSETS_URL
from golf.adapters.edge import Edge
from golf.adapters.rest import build_rest_app
from tests.unit.adapters.one_rpc import RPCS

CONTENT_TYPES = {
    ".js": ("text/javascript", "application/javascript"),
    ".css": ("text/css",),
    ".png": ("image/png",),
}


class _Links(HTMLParser):
    """Every URL an HTML page makes the browser load: ``src`` and ``href`` attributes, and ReDoc's spec-url."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.urls += [v for k, v in attrs if k in ("src", "href", "spec-url") and v is not None]


def _links(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    # Swagger UI takes the document's URL in its script: `url: '/openapi.json'`.
    return parser.urls + re.findall(r"""\burl:\s*['"]([^'"]*)['"]""", html)


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = build_rest_app(RPCS, Edge(None, None))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://golf") as c:
        yield c


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
async def test_pages_link_only_to_local_assets_that_answer(client: httpx.AsyncClient, page: str) -> None:
    resp = await client.get(page)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/html")
    assert "://" not in resp.text, "the page names another host"
    # The browser may load nothing from another host, whatever the bundled scripts ask for.
    policy = dict(d.strip().split(" ", 1) for d in resp.headers["content-security-policy"].split(";"))
    assert policy["default-src"] == "'self'"
    for directive in ("script-src", "style-src", "img-src", "connect-src", "font-src", "worker-src"):
        assert "http" not in policy[directive] and "*" not in policy[directive], directive
    links = _links(resp.text)
    assert "/openapi.json" in links
    assets = [u for u in links if u != "/openapi.json"]
    assert f"{ASSETS_URL}/favicon.png" in assets
    assert any(u.endswith(".js") for u in assets)
    for url in assets:
        assert url.startswith(f"{ASSETS_URL}/"), url
        got = await client.get(url)
        assert got.status_code == 200, url
        suffix = url[url.rindex(".") :]
        assert got.headers["content-type"].split(";")[0] in CONTENT_TYPES[suffix], (url, got.headers["content-type"])
        assert len(got.content) > 1000, url


async def test_every_asset_is_served(client: httpx.AsyncClient) -> None:
    for name in ASSETS:
        resp = await client.get(f"{ASSETS_URL}/{name}")
        assert resp.status_code == 200, name
    missing = await client.get(f"{ASSETS_URL}/nothing.js")
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/json"  # the API's Error body, like any unknown path


async def test_docs_routes_are_not_in_the_openapi_document(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert paths, "the RPC routes are"
    assert not [p for p in paths if p.startswith(("/docs", "/redoc"))]
    # FastAPI's own OAuth2 redirect page is not served either: the API's tokens are bearer tokens.
    assert (await client.get("/docs/oauth2-redirect")).status_code == 404


async def test_pages_behind_a_path_prefix_link_under_it() -> None:
    """Behind a proxy serving the app under ``/golf`` (uvicorn's ``--root-path``), the links carry the prefix."""
    app = build_rest_app(RPCS, Edge(None, None))  # type: ignore[arg-type]
    transport = httpx.ASGITransport(app=app, root_path="/golf")
    async with httpx.AsyncClient(transport=transport, base_url="http://golf") as c:
        for page in ("/docs", "/redoc"):
            links = _links((await c.get(page)).text)
            assert links and all(u.startswith("/golf/") for u in links), links
