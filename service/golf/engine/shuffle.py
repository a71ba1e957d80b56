"""Fair, version-stable shuffling.

Algorithm ``golf-shuffle-v1`` (a specification, never to be changed; a new algorithm gets a new name):

1. The seed is a string; its UTF-8 bytes are ``S``.
2. A stream of 64-bit words: block ``i`` (i = 0, 1, ...) is ``SHA-256(S || i as 8 big-endian bytes)``, read as four
   big-endian 64-bit words in order.
3. ``below(n)`` takes words ``w`` until ``w < 2**64 - (2**64 mod n)`` and returns ``w mod n`` (no modulo bias).
4. Fisher-Yates from the end: for ``i`` from ``len - 1`` down to ``1``, swap item ``i`` with item ``below(i + 1)``.

Seeds for new deals come from :func:`new_seed` (``secrets``); nothing here touches the global ``random``.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")
ALGORITHM = "golf-shuffle-v1"
_WORD = 1 << 64


def new_seed() -> str:
    """A fresh 128-bit seed from the operating system's secure generator, as 32 hex digits."""
    return secrets.token_hex(16)


def _words(seed: str) -> Iterator[int]:
    base = seed.encode("utf-8")
    block = 0
    while True:
        digest = hashlib.sha256(base + block.to_bytes(8, "big")).digest()
        for k in range(0, 32, 8):
            yield int.from_bytes(digest[k : k + 8], "big")
        block += 1


def shuffled(items: list[T], seed: str) -> list[T]:
    """A new list with ``items`` shuffled by ``golf-shuffle-v1`` under ``seed``."""
    out = list(items)
    words = _words(seed)
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        limit = _WORD - (_WORD % n)
        w = next(words)
        while w >= limit:
            w = next(words)
        j = w % n
        out[i], out[j] = out[j], out[i]
    return out


def commitment(algorithm: str, seed: str, rules_text: str) -> str:
    """SHA-256 hex of ``algorithm + "\\n" + seed + "\\n" + rules_text``: published with the deal before play,
    checkable once the game reveals the seed."""
    return hashlib.sha256(f"{algorithm}\n{seed}\n{rules_text}".encode()).hexdigest()
