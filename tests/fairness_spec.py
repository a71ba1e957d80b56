"""docs/fairness.md written again as code, from the page alone: the rules texts from what the API shows (its proto3
JSON), the commitment, the deals of solitaire (``golf-shuffle-v1`` and PySolFC's numbered deals, with their own
Microsoft ``rand`` and Mersenne Twister) and the holes of a card Golf match. It imports nothing of the service."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from tests.shuffle_spec import golf_shuffle_v1

RANKS = "A23456789TJQK"
SUITS = "CDHS"

# -- the commitment and the rules texts (section 1) -----------------------------------------------------------


def commitment(algorithm: str, seed: str, rules_text: str) -> str:
    """Lower-case hex SHA-256 of ``algorithm + "\\n" + seed + "\\n" + rules text``."""
    return hashlib.sha256(f"{algorithm}\n{seed}\n{rules_text}".encode()).hexdigest()


def dumps(data: dict[str, Any]) -> str:
    """Compact JSON, keys sorted by character code."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def snake(name: str) -> str:
    """``columnHeight`` -> ``column_height``: ``_`` before each capital, lower-cased."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


SOLITAIRE_KEYS = (
    "column_height",
    "columns",
    "decks",
    "draw_only_when_stuck",
    "queens_on_kings",
    "undo_limit",
    "undo_policy",
    "wrap",
)
"""Every key of a solitaire rules text (the page's table); each always written."""


def solitaire_text(rules: dict[str, Any]) -> str:
    """The rules text of a deal whose rules the API shows as ``rules`` (``SolitaireRules`` in proto3 JSON)."""
    shown = {snake(k): v for k, v in rules.items()}
    data: dict[str, Any] = {}
    for key in SOLITAIRE_KEYS:
        if key == "undo_policy":
            data[key] = shown[key].removeprefix("UNDO_POLICY_").lower()
        elif key in ("draw_only_when_stuck", "queens_on_kings", "wrap"):
            data[key] = bool(shown.get(key, False))  # a field at its zero value may be left out of the JSON
        else:
            data[key] = shown.get(key, 0)
    return dumps(data)


LATER_OPTIONS: dict[str, Any] = {
    "blackjack": False,
    "early_out": False,
    "first_out_bonus": 0,
    "flip_as_turn": False,
    "four_alike_wins_match": False,
    "four_in_two_columns_value": 0,
    "four_jacks_value": 0,
    "four_kings_line_value": 0,
    "look_before_last_turn": False,
    "min_players": 2,
    "negative_pairs_keep_value": False,
    "pairs_by_value": False,
    "peeks_stay_visible": True,
    "shoot_the_moon": False,
    "start_fixed": False,
    "straight_value": None,
    "tied_penalty": 0,
    "two_powers_from_three": False,
    "underdog_bonus": 0,
}
"""The options written only when they differ from these defaults (the page's second table)."""
NULLABLE = ("block_of_four_value", "joker_pair_value", "straight_value")
"""Options the API leaves out when the rules have none: ``null`` in the text."""
ENUM_PREFIXES = (
    "START_MODE_",
    "FLIP_RULE_",
    "STOCK_OUT_",
    "FOUR_ALIKE_SCOPE_",
    "KNOCKER_PENALTY_",
    "KNOCKER_BONUS_",
    "POWER_",
)
_MAPS = ("specialValues", "powers", "orderedSpecialValues", "orderedPowers")


def enum_text(value: str) -> str:
    """``START_MODE_TURN_UP`` -> ``turn_up``."""
    for prefix in ENUM_PREFIXES:
        if value.startswith(prefix):
            return value.removeprefix(prefix).lower()
    raise AssertionError(f"not an enumeration of the rules: {value!r}")


def card_golf_text(rules: dict[str, Any], holes: int) -> str:
    """The rules text of a table whose rules the API shows as ``rules`` (``CardGolfRules`` in proto3 JSON) and whose
    match has ``holes`` holes."""
    data: dict[str, Any] = {}
    for name, value in rules.items():
        if name not in _MAPS:
            data[snake(name)] = enum_text(value) if isinstance(value, str) else value
    data["special_values"] = [[p["code"], p.get("points", 0)] for p in rules.get("orderedSpecialValues", [])]
    data["powers"] = [[p["key"], enum_text(p["power"])] for p in rules.get("orderedPowers", [])]
    for key in NULLABLE:
        data.setdefault(key, None)
    data["holes"] = holes
    for key, default in LATER_OPTIONS.items():
        if data.get(key, default) == default:
            data.pop(key, None)
    return dumps(data)


# -- solitaire deals (sections 2 and 3) -----------------------------------------------------------------------
Deal = tuple[list[list[str]], str, list[str]]
"""Columns (back to front), the card that starts the pile, the stock in turning order."""


def solitaire_deal(rules_text: str, seed: str) -> Deal:
    """A ``golf-shuffle-v1`` deal."""
    rules = json.loads(rules_text)
    deck = [r + s for _ in range(rules["decks"]) for s in SUITS for r in RANKS]
    cards = golf_shuffle_v1(deck, seed)
    columns, n = rules["columns"], rules["columns"] * rules["column_height"]
    return [cards[c:n:columns] for c in range(columns)], cards[n], cards[n + 1 :]


# -- PySolFC numbered deals (section 4) -----------------------------------------------------------------------
class MsRand:
    """Microsoft's C library ``rand``, state first N."""

    def __init__(self, n: int) -> None:
        self.x = n

    def randint(self, n: int) -> int:
        """``randint(0, n)``."""
        self.x = (self.x * 214013 + 2531011) % 2**32
        return ((self.x >> 16) & 0x7FFF) % (n + 1)


class Mt19937:
    """The Mersenne Twister as Python's ``random.Random(N)`` seeds it, written from the page."""

    M32 = 0xFFFFFFFF

    def __init__(self, n: int) -> None:
        key = []
        while True:
            key.append(n & self.M32)
            n >>= 32
            if not n:
                break
        mt = self._init_genrand(19650218)
        i, j = 1, 0
        for _ in range(max(624, len(key))):
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525)) + key[j] + j) & self.M32
            i, j = i + 1, j + 1
            if i >= 624:
                mt[0], i = mt[623], 1
            if j >= len(key):
                j = 0
        for _ in range(623):
            mt[i] = ((mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941)) - i) & self.M32
            i += 1
            if i >= 624:
                mt[0], i = mt[623], 1
        mt[0] = 0x80000000
        self.mt, self.index = mt, 624

    def _init_genrand(self, s: int) -> list[int]:
        mt = [s]
        for i in range(1, 624):
            mt.append((1812433253 * (mt[i - 1] ^ (mt[i - 1] >> 30)) + i) & self.M32)
        return mt

    def word(self) -> int:
        mt = self.mt
        if self.index >= 624:
            for k in range(624):
                y = (mt[k] & 0x80000000) | (mt[(k + 1) % 624] & 0x7FFFFFFF)
                mt[k] = mt[(k + 397) % 624] ^ (y >> 1) ^ (0x9908B0DF if y & 1 else 0)
            self.index = 0
        y = mt[self.index]
        self.index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        return y ^ (y >> 18)

    def random(self) -> float:
        a, b = self.word() >> 5, self.word() >> 6
        return (a * 67108864 + b) / 9007199254740992

    def randint(self, n: int) -> int:
        """``randint(0, n)``."""
        return int(self.random() * (n + 1))


def pysol_seed(number: int) -> str:
    """The seed string of PySolFC deal ``number``."""
    return f"pysol:{number}"


def pysol_deal(number: int) -> Deal:
    """PySolFC's Golf deal ``number``."""
    rng: MsRand | Mt19937
    if number <= 32000:
        cards = [r + s for r in RANKS for s in SUITS]
        rng = MsRand(number)
    else:
        cards = [r + s for s in "CSHD" for r in RANKS]
        rng = Mt19937(number)
    for n in range(51, 0, -1):
        j = rng.randint(n)
        cards[n], cards[j] = cards[j], cards[n]
    cards.reverse()
    return [cards[c:35:7] for c in range(7)], cards[35], cards[36:]


# -- card Golf holes (section 5) ------------------------------------------------------------------------------
def hole_deal(rules_text: str, players: int, match_seed: str, hole: int) -> dict[str, Any]:
    """Hole ``hole`` (0-based): each seat's grid (positions 0 .. n-1), the pile's first card, the stock in drawing
    order and the seat that plays first."""
    rules = json.loads(rules_text)
    n = rules["rows"] * rules["cols"]
    packs = rules["decks"] or (1 if players <= 4 and not (rules["rows"] == 3 and rules["cols"] == 3) else 2)
    deck = [r + s for _ in range(packs) for s in SUITS for r in RANKS]
    deck += ["XB" if k % 2 == 0 else "XR" for k in range(rules["jokers"])]
    cards = golf_shuffle_v1(deck, f"{match_seed}:hole:{hole}")
    grids = [[cards[s + i * players] for i in range(n)] for s in range(players)]
    return {"grids": grids, "pile": cards[players * n], "stock": cards[players * n + 1 :], "first": hole % players}
