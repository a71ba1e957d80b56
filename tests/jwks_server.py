"""A portal's JWKS endpoint served by a test on 127.0.0.1: its keys can be rotated, and it can be made to hold its
answers (a slow or hung endpoint) until released. It counts the requests it got and those it is holding."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
_HOLD_AT_MOST = 60.0  # a held request is answered by then whatever happens: no test hangs on it


def jwk(key: PrivateKey, kid: str) -> dict[str, Any]:
    """The public JWK of ``key`` named ``kid``, as a portal publishes it."""
    if isinstance(key, rsa.RSAPrivateKey):
        body = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
        return {**body, "kid": kid, "use": "sig", "alg": "RS256"}
    body = json.loads(ECAlgorithm.to_jwk(key.public_key()))
    return {**body, "kid": kid, "use": "sig", "alg": "ES256"}


class JwksServer:
    """Serves ``{"keys": [...]}`` at ``url``; ``serve`` rotates the keys, ``hold`` and ``release`` delay answers."""

    def __init__(self, *keys: dict[str, Any]) -> None:
        self.requests = 0
        self.holding = 0
        self._body = b""
        self._open = threading.Event()
        self._open.set()
        self._lock = threading.Lock()
        self.serve(*keys)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with outer._lock:
                    outer.requests += 1
                    outer.holding += 1
                outer._open.wait(_HOLD_AT_MOST)
                with outer._lock:
                    outer.holding -= 1
                body = outer._body
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:
                    pass  # the client gave up waiting (its timeout) and closed the connection

            def log_message(self, format: str, *args: Any) -> None:
                pass  # keep test output clean

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"
        self._thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def serve(self, *keys: dict[str, Any]) -> None:
        """Publish exactly ``keys`` from now on (rotating the others away)."""
        self._body = json.dumps({"keys": list(keys)}).encode()

    def hold(self) -> None:
        """Requests from now on get no answer until ``release``."""
        self._open.clear()

    def release(self) -> None:
        """Answer the held requests, and the next ones at once."""
        self._open.set()

    def close(self) -> None:
        self.release()
        self.server.shutdown()
        self.server.server_close()
        self._thread.join()


@contextmanager
def jwks_server(*keys: dict[str, Any]) -> Iterator[JwksServer]:
    """A running ``JwksServer``, closed afterwards."""
    server = JwksServer(*keys)
    try:
        yield server
    finally:
        server.close()
