"""JSON objects that give a key twice: refused, as protobuf's own ``json_format`` refuses them, never taken
last-wins (``{"preset": "wrap", "preset": "standard"}`` would deal ``standard`` while a log or a proxy that reads
the first value saw ``wrap``).

The fast JSON parser keeps the last value without a word, so :func:`duplicate_key` first compares the keys the
parsed object holds with an upper bound of the keys in the text, its colons (every key is followed by one): when
they agree, no key can have been given twice, at the cost of a count of bytes. Only otherwise (a key given twice,
or a string value holding a colon: a URL, a time) is the text parsed again, keeping every pair, to find the key.
"""

from __future__ import annotations

import json
from typing import Any

MAX_PATH_ECHO = 64
"""The most characters of a client's key an answer repeats (as ``golf.adapters.json_input.MAX_ECHO``)."""


class _Pairs(list[tuple[str, Any]]):
    """An object of the text as its pairs, in order, duplicates kept."""


def _keys_held(value: Any) -> int:
    """How many keys the parsed objects in ``value`` hold, at every depth (a loop: the fast parser takes nesting
    deeper than Python's recursion)."""
    held, stack = 0, [value]
    while stack:
        item = stack.pop()
        kind = type(item)  # the parser makes plain dicts and lists only (and a type test is cheaper than isinstance)
        if kind is dict:
            held += len(item)
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return held


def _clip(key: str) -> str:
    key = key if len(key) <= MAX_PATH_ECHO else key[:MAX_PATH_ECHO] + "…"
    return key if key.isascii() else key.encode("utf-8", "replace").decode("utf-8")


def _first_twice(value: Any) -> str | None:
    """The path of the first key given twice in one of the objects of ``value`` (in the text's order)."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, prefix = stack.pop()
        inner: list[tuple[Any, str]] = []
        if isinstance(item, _Pairs):
            seen: set[str] = set()
            for key, child in item:
                path = f"{prefix}.{_clip(key)}" if prefix else _clip(key)
                if key in seen:
                    return path
                seen.add(key)
                inner.append((child, path))
        elif isinstance(item, list):
            inner = [(child, f"{prefix}[{n}]") for n, child in enumerate(item)]
        stack.extend(reversed(inner))
    return None


def duplicate_key(raw: bytes | bytearray | str, parsed: Any = None) -> str | None:
    """The path (keys as sent, cut, ``a.b[0].c``) of the first key an object of the JSON text ``raw`` gives twice,
    or ``None``. ``parsed`` is the text as already parsed (a key given twice there holds one value), if it is: with
    it, a text without a repeated key is told apart by a count alone."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    if parsed is not None and data.count(b":") == _keys_held(parsed):
        return None
    try:
        pairs = json.loads(data, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        # Not JSON this parser reads (the caller's own parse says what is wrong with it), or nested deeper than it
        # goes (about 1,000 levels; no request message is a tenth as deep, so such a text is all unknown keys).
        return None
    return _first_twice(pairs)


def twice_message(path: str) -> str:
    """The reason a request with the key ``path`` given twice is refused."""
    return f"{path}: the key is given twice in one object (which value is meant?)"
