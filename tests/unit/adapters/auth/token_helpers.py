"""What the token tests share: a signing key, a portal's issuer, a clock, a JWK resolver, PEM keys and claims."""

from __future__ import annotations

import time
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

KEY = b"a-test-signing-key-of-at-least-32-bytes!"
PORTAL = "https://portal.example"


class Clock:
    """A clock the tests move."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


class Resolver:
    """Records what resolve_external is asked; a player id per subject."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None]] = []

    async def __call__(self, issuer: str, subject: str, name: str | None) -> str:
        self.calls.append((issuer, subject, name))
        return f"player-of-{subject}"


def pem(private_key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey) -> str:
    """The public key of ``private_key`` in PEM."""
    return (
        private_key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def claims(now: float, **changes: Any) -> dict[str, Any]:
    """Valid claims of our own issuer; a change to None drops the claim."""
    base: dict[str, Any] = {"iss": "golf", "aud": "golf", "sub": "p1", "iat": int(now), "exp": int(now) + 600}
    base.update(changes)
    return {k: v for k, v in base.items() if v is not None}


def own(now: float, **changes: Any) -> str:
    """A token of our own issuer, signed with ``KEY``, of ``claims(now, **changes)``."""
    return jwt.encode(claims(now, **changes), KEY, algorithm="HS256")
