"""House rules by name: the changes of rule options players know from other Golf servers and from the texts'
alternatives, each a name, a one-line description and what it does to a :class:`GolfRules`.

House rules compose: :func:`apply_house_rules` applies them in order to a preset's rules. Two house rules that
decide the same thing (``initial_flips_0`` and ``initial_flips_1``; ``lucky_swing`` and ``eagle_eye``, both about
jokers) conflict and are refused, as are unknown names and a name given twice. Most set options to fixed values; a
few change a preset's own values in part (``super_kings`` sets the king in ``values``, ``one_eyed_jacks_zero`` adds
two entries to ``special_values``, ``eagle_eye`` adds jokers only when the rules have none), so they compose with
the preset and with each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from golf.engine.cardgolf.options import FlipRule, KnockerPenalty
from golf.engine.cardgolf.rules import GolfRules

__all__ = ["HOUSE_RULES", "HouseRule", "HouseRuleError", "apply_house_rules", "check_house_rules", "conflicts_of"]

_RANKS = "A23456789TJQK"
"""Rank characters, ace to king: the index of a rank in ``GolfRules.values``."""


@dataclass(frozen=True, slots=True)
class HouseRule:
    """One named house rule. ``decides`` names what it settles (an option, or one entry of ``values`` or
    ``special_values`` such as ``values.K``): two house rules deciding a common thing conflict. ``options`` are the
    :class:`GolfRules` fields it may change."""

    name: str
    description: str
    decides: tuple[str, ...]
    change: Callable[[GolfRules], GolfRules]

    @property
    def options(self) -> tuple[str, ...]:
        """The :class:`GolfRules` fields this house rule may change, in the order it names them."""
        return tuple(dict.fromkeys(key.partition(".")[0] for key in self.decides))

    def apply(self, rules: GolfRules) -> GolfRules:
        """``rules`` with this house rule's changes."""
        return self.change(rules)


class HouseRuleError(ValueError):
    """House rules that cannot be applied: an unknown name, a name given twice, or two that conflict. ``index`` is
    the position of the offending name in the list given (``None`` when no single name is at fault)."""

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


def _set(**options: object) -> Callable[[GolfRules], GolfRules]:
    """A change setting ``options`` to fixed values."""

    def change(rules: GolfRules) -> GolfRules:
        return rules.with_options(**options)

    return change


def _value(rank: str, points: int) -> Callable[[GolfRules], GolfRules]:
    """A change of one rank's points in ``values`` (the other ranks keep the rules' own)."""
    index = _RANKS.index(rank)

    def change(rules: GolfRules) -> GolfRules:
        values = list(rules.values)
        values[index] = points
        return replace(rules, values=tuple(values))

    return change


def _special(**points: int) -> Callable[[GolfRules], GolfRules]:
    """Points of single cards by code, merged into the rules' own ``special_values`` (these codes replaced)."""

    def change(rules: GolfRules) -> GolfRules:
        merged = dict(rules.special_values)
        merged.update(points)
        return replace(rules, special_values=tuple(sorted(merged.items())))

    return change


def _eagle_eye(rules: GolfRules) -> GolfRules:
    # Jokers worth something need jokers in the packs: two when the rules have none, else the rules' own number.
    return rules.with_options(joker_value=2, joker_pair_value=-4, jokers=rules.jokers or 2)


def _rule(name: str, description: str, decides: Iterable[str], change: Callable[[GolfRules], GolfRules]) -> HouseRule:
    return HouseRule(name, description, tuple(decides), change)


_CATALOGUE = (
    # -- the start and the turn --------------------------------------------------------------------------------
    _rule("initial_flips_0", "Nobody turns up a card before the first turn.", ["start_cards"], _set(start_cards=0)),
    _rule(
        "initial_flips_1", "Each player turns up one card before the first turn.", ["start_cards"], _set(start_cards=1)
    ),
    _rule(
        "initial_flips_2", "Each player turns up two cards before the first turn.", ["start_cards"], _set(start_cards=2)
    ),
    _rule(
        "flip_never",
        "Discarding a drawn card never lets you turn up a face-down card.",
        ["flip_after_discard"],
        _set(flip_after_discard=FlipRule.NONE),
    ),
    _rule(
        "speed_golf",
        "Speed golf: after discarding a drawn card you must turn up one of your face-down cards.",
        ["flip_after_discard"],
        _set(flip_after_discard=FlipRule.COMPULSORY),
    ),
    _rule(
        "flip_endgame",
        "After discarding you may turn up a face-down card, but only once someone has at most one face-down card.",
        ["flip_after_discard"],
        _set(flip_after_discard=FlipRule.ENDGAME),
    ),
    _rule(
        "flip_as_turn",
        "Instead of drawing, you may turn up one of your face-down cards as your whole turn.",
        ["flip_as_turn"],
        _set(flip_as_turn=True),
    ),
    _rule(
        "early_out",
        "With one or two face-down cards left you may turn them all up instead of drawing, and so go out.",
        ["early_out"],
        _set(early_out=True),
    ),
    # -- card values -------------------------------------------------------------------------------------------
    _rule(
        "lucky_swing",
        "Lucky swing: a single joker in the pack, worth -5.",
        ["jokers", "joker_value"],
        _set(jokers=1, joker_value=-5),
    ),
    _rule("super_kings", "Kings are worth -2.", ["values.K"], _value("K", -2)),
    _rule("ten_penny", "Tens are worth 1.", ["values.T"], _value("T", 1)),
    _rule(
        "one_eyed_jacks_zero",
        "The one-eyed jacks (hearts and spades) are worth 0.",
        ["special_values.JH", "special_values.JS"],
        _special(JH=0, JS=0),
    ),
    _rule(
        "eagle_eye",
        "Eagle eye: a joker alone is worth +2, a matched pair of jokers -4 (two jokers are added if there are none).",
        ["jokers", "joker_value", "joker_pair_value"],
        _eagle_eye,
    ),
    # -- pairs and lines ---------------------------------------------------------------------------------------
    _rule(
        "negative_pairs_keep_value",
        "Matched twos and jokers keep their negative points instead of scoring 0.",
        ["negative_pairs_keep_value"],
        _set(negative_pairs_keep_value=True),
    ),
    _rule(
        "like_value_pairs",
        "Cards of the same value match, not only the same rank (a queen and a jack, both 10, cancel).",
        ["pairs_by_value"],
        _set(pairs_by_value=True),
    ),
    # -- hole scores -------------------------------------------------------------------------------------------
    _rule("blackjack", "Blackjack: a hole score of exactly 21 becomes 0.", ["blackjack"], _set(blackjack=True)),
    _rule(
        "wolfpack", "Wolfpack: all four jacks in your grid score -20.", ["four_jacks_value"], _set(four_jacks_value=-20)
    ),
    _rule(
        "four_of_a_kind",
        "Four cards of one rank in two matched columns score -20.",
        ["four_in_two_columns_value"],
        _set(four_in_two_columns_value=-20),
    ),
    _rule(
        "nine_card_straight",
        "Hole in one: a grid whose cards make a straight (all ranks different and consecutive, ace low) scores -12.",
        ["straight_value"],
        _set(straight_value=-12),
    ),
    _rule(
        "shoot_the_moon",
        "Shooting the moon: a grid scoring the most a grid can scores 0, and every other player scores that most.",
        ["shoot_the_moon"],
        _set(shoot_the_moon=True),
    ),
    _rule(
        "four_kings",
        "A line (a side) of four kings scores -16.",
        ["four_kings_line_value"],
        _set(four_kings_line_value=-16),
    ),
    _rule(
        "four_alike_wins",
        "Four alike at the end of a hole wins the whole match at once.",
        ["four_alike_wins_match"],
        _set(four_alike_wins_match=True),
    ),
    # -- bonuses and penalties ---------------------------------------------------------------------------------
    _rule(
        "knock_bonus",
        "The first player to turn up every card gets -5.",
        ["first_out_bonus"],
        _set(first_out_bonus=-5),
    ),
    _rule(
        "underdog",
        "Underdog: the lowest scorer of each hole gets -3 (each of them on a tie).",
        ["underdog_bonus"],
        _set(underdog_bonus=-3),
    ),
    _rule(
        "tied_shame",
        "Tied shame: players whose hole scores are equal each get +5.",
        ["tied_penalty"],
        _set(tied_penalty=5),
    ),
    _rule(
        "knock_penalty",
        "A player who goes out without the lowest score of the hole gets +10.",
        ["knocker_penalty"],
        _set(knocker_penalty=KnockerPenalty.PLUS_10),
    ),
)

HOUSE_RULES: dict[str, HouseRule] = {rule.name: rule for rule in _CATALOGUE}
"""Every house rule by name, in the catalogue's order."""


def conflicts_of(name: str) -> tuple[str, ...]:
    """The house rules that cannot be combined with ``name`` (they decide something it decides), in catalogue order.
    Raises :class:`HouseRuleError` for an unknown name."""
    rule = _known(name, None)
    mine = set(rule.decides)
    return tuple(other.name for other in _CATALOGUE if other is not rule and mine.intersection(other.decides))


def check_house_rules(names: Iterable[str]) -> tuple[HouseRule, ...]:
    """The house rules called ``names``, in order. Raises :class:`HouseRuleError` for an unknown name, a name given
    twice, or a name that conflicts with one before it (its ``index`` is the later name's)."""
    chosen: list[HouseRule] = []
    decided: dict[str, str] = {}
    for index, name in enumerate(names):
        rule = _known(name, index)
        if rule in chosen:
            raise HouseRuleError(f"house rule {name!r} is given twice", index)
        for key in rule.decides:
            if key in decided:
                raise HouseRuleError(
                    f"house rules {decided[key]!r} and {name!r} conflict: both decide {key.replace('.', ' ')}", index
                )
        decided.update(dict.fromkeys(rule.decides, name))
        chosen.append(rule)
    return tuple(chosen)


def apply_house_rules(rules: GolfRules, names: Iterable[str]) -> GolfRules:
    """``rules`` with the house rules called ``names`` applied in order (checked first: see
    :func:`check_house_rules`). The result is not validated: a house rule may not fit the rules it is applied to
    (``early_out`` needs ``end_on_all_face_up``), which :meth:`GolfRules.validate` reports."""
    for rule in check_house_rules(names):
        rules = rule.apply(rules)
    return rules


def _known(name: str, index: int | None) -> HouseRule:
    rule = HOUSE_RULES.get(name)
    if rule is None:
        shown = name if len(name) <= 64 else name[:61] + "..."
        raise HouseRuleError(f"unknown house rule {shown!r}; known: {', '.join(HOUSE_RULES)}", index)
    return rule
