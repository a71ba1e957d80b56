"""The API's documentation pages, Swagger UI at ``/docs`` and ReDoc at ``/redoc``, served whole by the app.

FastAPI's own pages load their scripts, styles and favicon from a CDN (and ReDoc its fonts from Google), so
without internet they are blank. Here the same pages point at the copies the ``fastapi-offline`` package ships,
served under ``/docs/assets``. Their ``Content-Security-Policy`` lets the browser load nothing from another host:
ReDoc's bundle would still fetch Redocly's logo for its "API docs by Redocly" link (it hides the logo when that
fails). None of these routes is in the OpenAPI document.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

DOCS_URL = "/docs"
REDOC_URL = "/redoc"
ASSETS_URL = "/docs/assets"
ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
ASSETS = ("swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png")
"""The files served under ``ASSETS_URL``, from ``ASSETS_DIR``."""

SWAGGER_UI_PARAMETERS = {
    # Swagger UI would send the document to an online validator for its badge: not from here.
    "validatorUrl": None,
    # The bearer token typed into "Authorize" survives reloading the page.
    "persistAuthorization": True,
}

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        # The pages' own inline script (Swagger UI's settings) and the styles both UIs set inline.
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "worker-src 'self' blob:",  # ReDoc's search index runs in a worker made from a blob
        "connect-src 'self'",  # the OpenAPI document, and Swagger UI's "Try it out"
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    ]
)
"""What the docs pages may load: only this origin's URLs (and data:/blob: ones the pages make themselves)."""


def add_docs(app: FastAPI) -> None:
    """Serve Swagger UI at ``/docs`` and ReDoc at ``/redoc`` for ``app.openapi_url``, from local assets only.
    ``app`` is made with ``docs_url=None, redoc_url=None`` (FastAPI's own pages load from a CDN)."""
    openapi_url = app.openapi_url
    assert openapi_url is not None, "the docs pages need the OpenAPI document"
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")

    def url(request: Request, path: str) -> str:
        # Behind a proxy that mounts the app under a prefix, the pages' links carry it.
        return f"{request.scope.get('root_path', '')}{path}"

    def page(html: HTMLResponse) -> HTMLResponse:
        html.headers["content-security-policy"] = CONTENT_SECURITY_POLICY
        return html

    async def swagger_ui(request: Request) -> HTMLResponse:
        return page(
            get_swagger_ui_html(
                openapi_url=url(request, openapi_url),
                title=f"{app.title} - Swagger UI",
                swagger_js_url=url(request, f"{ASSETS_URL}/swagger-ui-bundle.js"),
                swagger_css_url=url(request, f"{ASSETS_URL}/swagger-ui.css"),
                swagger_favicon_url=url(request, f"{ASSETS_URL}/favicon.png"),
                oauth2_redirect_url=None,  # bearer tokens only: no OAuth2 flow to come back from
                swagger_ui_parameters=SWAGGER_UI_PARAMETERS,
            )
        )

    async def redoc(request: Request) -> HTMLResponse:
        return page(
            get_redoc_html(
                openapi_url=url(request, openapi_url),
                title=f"{app.title} - ReDoc",
                redoc_js_url=url(request, f"{ASSETS_URL}/redoc.standalone.js"),
                redoc_favicon_url=url(request, f"{ASSETS_URL}/favicon.png"),
                with_google_fonts=False,
            )
        )

    app.add_api_route(DOCS_URL, swagger_ui, methods=["GET"], include_in_schema=False)
    app.add_api_route(REDOC_URL, redoc, methods=["GET"], include_in_schema=False)
