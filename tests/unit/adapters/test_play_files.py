"""The web client's files at ``/play``, in process: the page and every module it imports (transitively) answer with
their content type and the security headers; scripts and styles load only from the app itself; nothing under /play
is in the OpenAPI document; a path outside the client's folder is not served. tests/e2e/test_play_*.py drive the
client in a browser."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from html.parser import HTMLParser

import httpx
import pytest

from golf.adapters.edge import Edge
from golf.adapters.rest import build_rest_app
from golf.adapters.web import WEB_DIR
from tests.unit.adapters.one_rpc import RPCS

IMPORTS = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(\s*|^import\s+)["'](\./[^"']+)["']""", re.MULTILINE)
"""A module's relative imports: ``import ... from "./x.js"``, ``import("./x.js")``, ``import "./x.js"``."""


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.inline_scripts = 0
        self.inline_styles = 0
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.urls += [v for k, v in attrs if k in ("src", "href") and v is not None]
        self._in_script = tag == "script" and "src" not in found
        self.inline_styles += tag == "style" or "style" in found

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline_scripts += 1


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = build_rest_app(RPCS, Edge(None, None))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://golf") as c:
        yield c


async def test_play_redirects_to_its_folder(client: httpx.AsyncClient) -> None:
    response = await client.get("/play")
    assert response.status_code == 308 and response.headers["location"] == "/play/"


async def test_page_and_every_module_it_loads_are_served(client: httpx.AsyncClient) -> None:
    page = await client.get("/play/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert page.headers["x-content-type-options"] == "nosniff"
    links = _Links()
    links.feed(page.text)
    assert links.inline_scripts == 0 and links.inline_styles == 0, "the CSP would refuse inline scripts and styles"
    local = [u for u in links.urls if not u.startswith(("data:", "#", "/docs"))]
    assert set(local) == {"style.css", "app.js"}, local

    seen: set[str] = set()
    todo = list(local)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        response = await client.get(f"/play/{name}")
        assert response.status_code == 200, name
        kind = "text/css" if name.endswith(".css") else "text/javascript"
        assert response.headers["content-type"].startswith(kind), (name, response.headers["content-type"])
        assert "content-security-policy" in response.headers, name
        todo += [m.removeprefix("./") for m in IMPORTS.findall(response.text)]
    shipped = {p.name for p in WEB_DIR.iterdir() if p.suffix in (".js", ".css")}
    assert seen == shipped, f"files nothing loads: {sorted(shipped - seen)}"
    for name in seen - {"style.css"}:
        source = (WEB_DIR / name).read_text()
        # No other host: every import is relative, and fetch() calls only the API's own paths.
        assert not re.search(r"""\bfrom\s*["'](?!\./)""", source), name
        assert "http://" not in source and "https://" not in source, name


async def test_outside_the_folder_and_unknown_files_are_not_found(client: httpx.AsyncClient) -> None:
    for path in (
        "/play/../pyproject.toml",
        "/play/%2e%2e/adapters/web.py",
        "/play/nothing.js",
        "/play/README.md",
        "/play/tsconfig.json",
    ):
        response = await client.get(path)
        assert response.status_code == 404, path


async def test_play_is_not_in_the_api_document(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert not [p for p in paths if p.startswith("/play")]
