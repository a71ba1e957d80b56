"""The container's health check: ``python -m golf.adapters.probe [path]`` exits 0 when the service answers.

GET ``path`` (default ``/healthz``) on 127.0.0.1 at ``GOLF_HTTP_PORT``; exit 1 on anything but 200. Only the
standard library, so the check costs a fraction of a second and loads none of the service.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request


def probe(path: str = "/healthz", timeout: float = 2.0) -> int:
    """0 when GET ``path`` answers 200, else 1 (with the reason on stderr)."""
    url = f"http://127.0.0.1:{os.environ.get('GOLF_HTTP_PORT', '8080')}{path}"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return 0 if reply.status == 200 else 1
    except (OSError, urllib.error.URLError) as err:
        print(f"{url}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(probe(sys.argv[1] if len(sys.argv) > 1 else "/healthz"))
