"""The reference web client at ``/play``: static ES modules and CSS (``golf/web``), no build step.

The client holds no rules: it calls the public REST API (and its Server-Sent Events) like any portal would, so it is
served by the same app only for convenience; a portal may host the files anywhere that can reach the API. The
pages may load nothing from another host (``Content-Security-Policy``), and none of these routes is in the OpenAPI
document.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from starlette.responses import PlainTextResponse, RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

PLAY_URL = "/play"
WEB_DIR = Path(__file__).resolve().parent.parent / "web"

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",  # the API, on the same origin
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
        "object-src 'none'",
    ]
)
"""Only this origin's scripts, styles and API: no inline script, no other host."""

HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    # A new deployment's files are seen at once: the files are small, and revalidation is a 304.
    (b"cache-control", b"no-cache"),
]


SERVED = (".html", ".js", ".css", "/")
"""What is served from the folder: the page and its modules and styles (not its README or tsconfig)."""


class _Secured:
    """``app`` with the client's security headers on every response; only the client's own files are served."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not scope["path"].endswith(SERVED):
            await PlainTextResponse("Not Found", status_code=404)(scope, receive, send)  # as StaticFiles says it
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, send_secured)


def add_play(app: FastAPI) -> None:
    """Serve the web client's files under ``/play/`` (``/play`` redirects there; ``index.html`` is the page)."""

    async def to_index(request: Request) -> RedirectResponse:
        # Behind a proxy that mounts the app under a prefix, the redirect carries it.
        return RedirectResponse(f"{request.scope.get('root_path', '')}{PLAY_URL}/", status_code=308)

    app.add_api_route(PLAY_URL, to_index, methods=["GET"], include_in_schema=False)
    app.mount(PLAY_URL, _Secured(StaticFiles(directory=WEB_DIR, html=True)), name="play")
