"""A small memo keyed by object identity, for work on immutable objects that many calls see again (a table's
finished holes, seen by every event of the rest of its match)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class IdentityMemo(Generic[K, V]):
    """``make(obj)`` once per object while the object is remembered. Each entry keeps its object alive, so an id
    is never taken for another object's; at ``limit`` entries the memo is emptied and fills again with what is in
    use now. Only for immutable objects, whose value cannot change."""

    __slots__ = ("_entries", "_limit", "_make")

    def __init__(self, make: Callable[[K], V], limit: int = 4096) -> None:
        self._make = make
        self._limit = limit
        self._entries: dict[int, tuple[K, V]] = {}

    def __call__(self, obj: K) -> V:
        hit = self._entries.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = self._make(obj)
        if len(self._entries) >= self._limit:
            self._entries.clear()
        self._entries[id(obj)] = (obj, value)
        return value
