"""Card Golf rules to protobuf messages and back: every option of a table's rules, a house rule's options, and the
options a request sets (``golf.api.table_convert`` converts the rest of a table)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import fields
from typing import Any, TypeVar

from golf.app.errors import InvalidArgument
from golf.engine.cardgolf.cards import JOKER_CODES
from golf.engine.cardgolf.house_rules import HouseRule
from golf.engine.cardgolf.options import (
    FlipRule,
    FourAlikeScope,
    KnockerBonus,
    KnockerPenalty,
    Power,
    StartMode,
    StockOut,
)
from golf.engine.cardgolf.rules import GolfRules
from golf.v1 import card_golf_pb2 as cg

__all__ = [
    "POWERS",
    "by_name",
    "from_contract",
    "house_rule_rules",
    "rules_message",
    "rules_overrides",
    "rules_to_proto",
]

T = TypeVar("T")


def by_name(enum: type[Any], proto: Any, prefix: str) -> dict[Any, Any]:
    """Each member of the engine's ``enum`` with the contract's value of the same name (``prefix`` + NAME)."""
    return {member: proto.Value(prefix + member.name) for member in enum}


_START_MODE = by_name(StartMode, cg.StartMode, "START_MODE_")
_FLIP_RULE = by_name(FlipRule, cg.FlipRule, "FLIP_RULE_")
_STOCK_OUT = by_name(StockOut, cg.StockOut, "STOCK_OUT_")
_FOUR_ALIKE = by_name(FourAlikeScope, cg.FourAlikeScope, "FOUR_ALIKE_SCOPE_")
_KNOCKER_PENALTY = by_name(KnockerPenalty, cg.KnockerPenalty, "KNOCKER_PENALTY_")
_KNOCKER_BONUS = by_name(KnockerBonus, cg.KnockerBonus, "KNOCKER_BONUS_")
POWERS = by_name(Power, cg.Power, "POWER_")
"""The contract's ``Power`` of each of the engine's powers."""


def from_contract(table: Mapping[Any, Any], value: int, field: str) -> Any:
    """The engine's member whose contract value in ``table`` is ``value``; any other value is refused naming
    ``field``."""
    for member, number in table.items():
        if number == value:
            return member
    names = ", ".join(m.name for m in table)
    raise InvalidArgument(field, f"{field} must be one of {names}")


_ENUM_OPTIONS: dict[str, dict[Any, Any]] = {
    "start_mode": _START_MODE,
    "flip_after_discard": _FLIP_RULE,
    "stock_out": _STOCK_OUT,
    "four_alike_scope": _FOUR_ALIKE,
    "knocker_penalty": _KNOCKER_PENALTY,
    "knocker_bonus": _KNOCKER_BONUS,
}
_LISTS = ("values", "special_values", "powers")
"""The options held as a list or a map, each converted on its own."""
_PLAIN_OPTIONS = tuple(
    f.name for f in fields(GolfRules) if f.name not in _ENUM_OPTIONS and f.name not in _LISTS and f.name != "holes"
)
"""The options whose proto field holds the engine's value as it is (numbers and flags): every field of the rules
but the enumerations, the lists and ``holes`` (the table's own field)."""


def _json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.title() for w in rest)


@functools.lru_cache(maxsize=256)
def rules_message(rules: GolfRules) -> cg.CardGolfRules:
    """The message of ``rules``, cached and shared: copy it (``CopyFrom``), never change it."""
    # A map keeps no order (upb's iterates by hash, and clients' decoders may sort it): the ordered lists carry
    # the order of the rules text, which the commitment covers.
    msg = cg.CardGolfRules(
        values=rules.values,
        special_values=dict(rules.special_values),
        powers={key: POWERS[power] for key, power in rules.powers},
        ordered_special_values=[
            cg.CardGolfRules.SpecialValue(code=code, points=points) for code, points in rules.special_values
        ],
        ordered_powers=[cg.CardGolfRules.PowerPair(key=key, power=POWERS[power]) for key, power in rules.powers],
    )
    for name in _PLAIN_OPTIONS:
        value = getattr(rules, name)
        if value is not None:  # joker_pair_value, block_of_four_value, straight_value: None is no such rule
            setattr(msg, name, value)
    for name, table in _ENUM_OPTIONS.items():
        setattr(msg, name, table[getattr(rules, name)])
    return msg


def rules_to_proto(rules: GolfRules) -> cg.CardGolfRules:
    """Every option of ``rules`` (the optional points, ``joker_pair_value``, ``block_of_four_value`` and
    ``straight_value``, only when the rules have them). A new message each call."""
    out = cg.CardGolfRules()
    out.CopyFrom(rules_message(rules))
    return out


def house_rule_rules(rule: HouseRule, base: GolfRules) -> cg.CardGolfRules:
    """The options the house rule ``rule`` sets, as they come out when it is applied to ``base``; every other field
    of the message unset (a house rule changing part of ``values`` or ``special_values`` shows the whole list)."""
    msg = rules_to_proto(rule.apply(base))
    for f in msg.DESCRIPTOR.fields:
        if _ORDERED.get(f.name, f.name) not in rule.options:
            msg.ClearField(f.name)  # type: ignore[arg-type]  # every field name of CardGolfRules
    return msg


def _card_key(key: str, field: str, ranks_too: bool) -> str:
    """A card code (``10H`` written ``TH``, as the engine names cards) or, for powers, a rank (``10`` as ``T``)."""
    text = key.strip().upper()
    if text.startswith("10"):
        text = "T" + text[2:]
    ranks = "A23456789TJQK"
    if text in JOKER_CODES or (len(text) == 2 and text[0] in ranks and text[1] in "CDHS"):
        return text
    if ranks_too and len(text) == 1 and text in ranks + "X":
        return text
    what = "a rank or a card code" if ranks_too else "a card code"
    raise InvalidArgument(f"{field}[{key!r}]", f"{field} keys must be {what}, not {key!r}")


def rules_overrides(msg: cg.CardGolfRules, field: str = "rules") -> dict[str, Any]:
    """The rule options a request set, by engine name and value, for ``TableOptions.build``: unset fields (and an
    empty ``values`` list or an empty map) keep the preset's value."""
    out: dict[str, Any] = {}
    for name in _PLAIN_OPTIONS:
        if msg.HasField(name):  # type: ignore[arg-type]  # every name is an optional field of CardGolfRules
            out[name] = getattr(msg, name)
    for name, table in _ENUM_OPTIONS.items():
        if msg.HasField(name):  # type: ignore[arg-type]
            out[name] = from_contract(table, getattr(msg, name), f"{field}.{_json_name(name)}")
    if msg.values:
        if len(msg.values) != 13:
            raise InvalidArgument(f"{field}.values", f"{field}.values must give 13 values, ace to king")
        out["values"] = tuple(msg.values)
    specials = _pairs(
        f"{field}.specialValues",
        list(msg.special_values.items()),
        f"{field}.orderedSpecialValues",
        [(pair.code, pair.points) for pair in msg.ordered_special_values],
        lambda points, _where: points,
        ranks_too=False,
    )
    if specials:
        out["special_values"] = specials
    powers = _pairs(
        f"{field}.powers",
        list(msg.powers.items()),
        f"{field}.orderedPowers",
        [(pair.key, pair.power) for pair in msg.ordered_powers],
        lambda value, where: from_contract(POWERS, value, where),
        ranks_too=True,
    )
    if powers:
        out["powers"] = powers
    return out


_ORDERED = {"ordered_special_values": "special_values", "ordered_powers": "powers"}
"""The ordered list of each map of the rules, by field name: the map's option."""


def _pairs(
    field: str,
    mapped: list[tuple[str, T]],
    ordered_field: str,
    ordered: list[tuple[str, T]],
    value_of: Callable[[T, str], Any],
    *,
    ranks_too: bool,
) -> tuple[tuple[str, Any], ...]:
    """The pairs of a map option (``specialValues``, ``powers``) a request set, keys as the engine writes them: from
    the map sorted by key, or from its ordered list in the list's order (both given: they must hold the same pairs).
    Empty when neither is set."""
    from_map = _keyed(field, mapped, value_of, ranks_too)
    from_list = _keyed(ordered_field, ordered, value_of, ranks_too)
    if from_map and from_list and from_map != from_list:
        raise InvalidArgument(ordered_field, f"{ordered_field} and {field} must hold the same pairs when both are set")
    return tuple(from_list.items()) if from_list else tuple(sorted(from_map.items()))


def _keyed(
    field: str, pairs: list[tuple[str, T]], value_of: Callable[[T, str], Any], ranks_too: bool
) -> dict[str, Any]:
    """``pairs`` by key written as the engine writes it, in their order; a key given twice is refused."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        code = _card_key(key, field, ranks_too=ranks_too)
        if code in out:
            raise InvalidArgument(field, f"{field} names {code} twice")
        out[code] = value_of(value, f"{field}[{key!r}]")
    return out
