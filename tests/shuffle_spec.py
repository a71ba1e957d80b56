"""The published ``golf-shuffle-v1`` algorithm written again from its specification (docs/fairness.md), without the
engine's code: what clients' checks of a revealed deal run, solitaire's and card Golf's alike."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")


def _words(seed: str) -> Iterator[int]:
    """Block ``i`` = SHA-256(UTF-8 seed || i as 8 big-endian bytes), read as four big-endian 64-bit words."""
    block = 0
    while True:
        digest = hashlib.sha256(seed.encode("utf-8") + block.to_bytes(8, "big")).digest()
        for k in range(0, 32, 8):
            yield int.from_bytes(digest[k : k + 8], "big")
        block += 1


def golf_shuffle_v1(items: list[T], seed: str) -> list[T]:
    """Fisher-Yates from the end, each index drawn without modulo bias."""
    out = list(items)
    words = _words(seed)
    for i in range(len(out) - 1, 0, -1):
        n = i + 1
        limit = 2**64 - (2**64 % n)
        w = next(words)
        while w >= limit:
            w = next(words)
        j = w % n
        out[i], out[j] = out[j], out[i]
    return out
