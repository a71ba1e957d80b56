"""Every option of Card Golf for two or more players (grids, turns, knocking, jokers, house scoring rules, power
cards). Defaults are ``six-card``."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from golf.engine.cardgolf.cards import ONE_EYED_JACKS, GCard, is_joker, rank_char
from golf.engine.cardgolf.options import (
    FlipRule,
    FourAlikeScope,
    KnockerBonus,
    KnockerPenalty,
    Power,
    StartMode,
    StockOut,
)

MIN_PLAYERS, MAX_PLAYERS = 2, 8
GRIDS = ((2, 3), (3, 2), (2, 2), (2, 4), (4, 2), (3, 3))
"""Grid shapes (rows, columns) the texts describe."""
STANDARD_VALUES = (1, -2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 0)
"""Points of ace .. king in the default game."""


@dataclass(frozen=True, slots=True)
class GolfRules:
    """The parameters of Card Golf. Each field is one option; the defaults are the ``six-card`` game."""

    # -- cards ----------------------------------------------------------------------------------------------
    decks: int = 0
    """Packs of 52; 0 means the default: one pack for 2 to 4 players, two for more."""
    jokers: int = 0
    """Jokers added to the packs (the texts use 2 or 4)."""
    # -- layout and start -------------------------------------------------------------------------------------
    rows: int = 2
    cols: int = 3
    start_mode: StartMode = StartMode.TURN_UP
    start_cards: int = 2
    """Cards each player turns up (or peeks at) before the first turn."""
    start_fixed: bool = False
    """The start cards are the first ``start_cards`` positions in reading order (the top row), turned up (or peeked
    at) at the deal: the players do not choose them (six-card with jokers, seed 001)."""
    min_players: int = MIN_PLAYERS
    """The fewest players the game is for (seed 001's six-card with jokers: "four or more")."""
    # -- the turn --------------------------------------------------------------------------------------------
    swap_face_up: bool = True
    """A card swapped into a grid lies face up; when false it lies face down and only its owner knows it."""
    flip_after_discard: FlipRule = FlipRule.NONE
    taken_discard_must_swap: bool = True
    """A card taken from the discard pile must be swapped in, never put straight back."""
    stock_out: StockOut = StockOut.RESHUFFLE
    peek_stroke: int = 0
    """Four-card house rule: when above 0, a player may look at one of their face-down cards again instead of
    taking a turn, for this many points."""
    jack_discard_skips_next: bool = False
    """When a jack lands on the discard pile, the next player loses their turn."""
    flip_as_turn: bool = False
    """House rule ("flip as action"): instead of drawing, a player may turn up one of their face-down cards, which
    is their whole turn."""
    early_out: bool = False
    """House rule ("knock early"): a player with one or two face-down cards may, instead of drawing, turn them all
    up at once and so go out (the others then have their last turns)."""
    # -- the end of a hole -----------------------------------------------------------------------------------
    end_on_all_face_up: bool = True
    """A player whose cards are all face up ends the hole."""
    final_turns: bool = True
    """After a player ends the hole (all face up, or knocking) every other player has one more turn."""
    peeks_stay_visible: bool = True
    """A seat's view keeps showing the face-down cards it has seen (peeked at, swapped in, was shown) for the rest of
    the hole, for apps that do the remembering; when false (the strict game) it shows one only from the move that let
    the seat see it (a peek always shows its card, even one seen before) until that seat's next move, and players
    remember."""
    look_before_last_turn: bool = False
    """When a player has turned up every card and ended the hole, each other player looks at their own face-down
    cards before their last turn (seed 001)."""
    knocking: bool = False
    """A player may knock instead of taking a turn, which ends the hole."""
    max_rounds: int = 60
    """Safety net: the hole ends after this many rounds of turns (a server must not run forever)."""
    # -- card values -----------------------------------------------------------------------------------------
    values: tuple[int, ...] = STANDARD_VALUES
    """Points of ace, two, ..., king."""
    joker_value: int = -2
    special_values: tuple[tuple[str, int], ...] = ()
    """Points of single cards by code, overriding ``values``: ``(("QS", 40),)``, red kings ``-1`` ..."""
    wild_one_eyed_jacks: bool = False
    """The jacks of hearts and spades match any card of a line or pair."""
    pairs_by_value: bool = False
    """The literal "like value" reading: cards of the same value match (a queen and a jack, both 10), not only
    cards of the same rank."""
    negative_pairs_keep_value: bool = False
    """House rule: cards worth less than 0 (twos, jokers) keep their points inside a matched line or pair."""
    # -- matches ---------------------------------------------------------------------------------------------
    match_columns: bool = True
    """A column of equal ranks scores 0 (even twos)."""
    match_rows: bool = False
    match_diagonals: bool = False
    """Square grids only: both diagonals."""
    match_adjacent_pairs: bool = False
    """Every orthogonally adjacent equal pair scores 0."""
    joker_pair_value: int | None = None
    """Points of a matched line or pair made of jokers only (-4); ``None`` scores it 0 like any match."""
    block_of_four_value: int | None = None
    """Points of a 2x2 block of four equal cards (-25 in nine-card)."""
    four_alike_scope: FourAlikeScope = FourAlikeScope.BLOCK
    four_alike_self: int = 0
    """Points added to the owner of four alike (a bonus when negative)."""
    four_alike_opponents: int = 0
    """Points added to each opponent of the owner of four alike (+10)."""
    four_jacks_value: int = 0
    """House rule "wolfpack": points added to a grid holding four jacks (-20)."""
    four_in_two_columns_value: int = 0
    """House rule "four of a kind": points added to a grid whose two matched columns hold the same rank (the same
    value with ``pairs_by_value``) (-20)."""
    four_kings_line_value: int = 0
    """Eight-card: points added for a line (a side) of four kings (-16)."""
    straight_value: int | None = None
    """Nine-card "hole in one": a grid whose cards make a straight (every rank different and consecutive, ace low,
    no jokers) scores this instead (-12); ``None``: no such rule."""
    shoot_the_moon: bool = False
    """A grid that scores the most a grid can (every card at the highest card value, nothing matched: 60 in
    six-card) scores 0 for the hole, and every other player scores that most."""
    blackjack: bool = False
    """House rule: a hole score of exactly 21 becomes 0."""
    four_alike_wins_match: bool = False
    """Four alike (in the ``four_alike_scope``) at the end of a hole wins the whole match at once."""
    # -- hole bonuses and penalties --------------------------------------------------------------------------
    first_out_bonus: int = 0
    """Points added to the first player to turn up every card (-5, "knock bonus")."""
    underdog_bonus: int = 0
    """Points added to the lowest scorer of each hole, every one of them on a tie (-3, "underdog")."""
    tied_penalty: int = 0
    """Points added to every player whose hole score equals another player's (+5, "tied shame")."""
    # -- knocker ---------------------------------------------------------------------------------------------
    knocker_penalty: KnockerPenalty = KnockerPenalty.NONE
    knocker_bonus: KnockerBonus = KnockerBonus.NONE
    # -- powers ----------------------------------------------------------------------------------------------
    powers: tuple[tuple[str, Power], ...] = ()
    """Power of a card drawn from the stock and discarded, keyed by rank character (``J``, ``X`` for jokers) or
    by full code (``KS``); codes win over ranks."""
    two_powers_from_three: bool = False
    """The 2 of Powers lends only the powers of the cards 3 to king (seed 004: "two powers from 3 - Black King"),
    never the ace's (or a joker's); false, as in ``powers`` before version 3 (tables stored with it keep it): the
    powers of any of the table's other power cards."""
    # -- match -----------------------------------------------------------------------------------------------
    holes: int = 9

    # -- derived ---------------------------------------------------------------------------------------------
    @property
    def cards_per_grid(self) -> int:
        """Cards in each player's grid."""
        return self.rows * self.cols

    def decks_for(self, players: int) -> int:
        """Packs used by ``players`` players."""
        if self.decks:
            return self.decks
        return 1 if players <= 4 and self.cards_per_grid != 9 else 2

    def deck_size(self, players: int) -> int:
        """Cards in the game for ``players`` players."""
        return 52 * self.decks_for(players) + self.jokers

    def card_value(self, card: GCard) -> int:
        """Points of one card on its own."""
        for code, points in self.special_values:
            if code == card.code:
                return points
        if is_joker(card):
            return self.joker_value
        return self.values[card.rank - 1]

    def is_wild(self, card: GCard) -> bool:
        """Whether ``card`` matches anything under these rules."""
        return self.wild_one_eyed_jacks and card in ONE_EYED_JACKS

    def power_of(self, card: GCard) -> Power | None:
        """The power ``card`` has when drawn from the stock, if any."""
        by_rank = None
        for key, power in self.powers:
            if key == card.code:
                return power
            if key == rank_char(card):
                by_rank = power
        return by_rank

    def validate(self, players: int | None = None) -> None:
        """Raise ``ValueError`` naming the field when the rules (for ``players`` players) cannot make a game."""
        if (self.rows, self.cols) not in GRIDS:
            raise ValueError(f"rows: grid {self.rows}x{self.cols} is not one of {GRIDS}")
        if not 0 <= self.decks <= 4:
            raise ValueError("decks: must be 0 (automatic) to 4")
        if not 0 <= self.jokers <= 8:
            raise ValueError("jokers: must be 0 to 8")
        if not 0 <= self.start_cards <= self.cards_per_grid:
            raise ValueError("start_cards: must be between 0 and the cards of a grid")
        if len(self.values) != 13:
            raise ValueError("values: must give 13 values, ace to king")
        if not (self.end_on_all_face_up or self.knocking):
            raise ValueError("knocking: a hole needs a way to end (all face up, or knocking)")
        if self.max_rounds < 1:
            raise ValueError("max_rounds: must be at least 1")
        if self.holes < 1:
            raise ValueError("holes: must be at least 1")
        if not MIN_PLAYERS <= self.min_players <= MAX_PLAYERS:
            raise ValueError(f"min_players: must be {MIN_PLAYERS} to {MAX_PLAYERS}")
        if self.peek_stroke < 0:
            raise ValueError("peek_stroke: must not be negative")
        if self.early_out and self.end_on_all_face_up is False:
            raise ValueError("early_out: going out early needs end_on_all_face_up")
        if self.match_diagonals and self.rows != self.cols:
            raise ValueError("match_diagonals: only square grids have diagonals")
        for code, _ in self.special_values:
            if len(code) != 2:
                raise ValueError(f"special_values: not a card code: {code!r}")
        if players is not None:
            if not MIN_PLAYERS <= players <= MAX_PLAYERS:
                raise ValueError(f"players: must be {MIN_PLAYERS} to {MAX_PLAYERS}")
            if players < self.min_players:
                raise ValueError(f"players: these rules are for {self.min_players} or more players")
            if players * self.cards_per_grid + 2 > self.deck_size(players):
                raise ValueError("decks: the grids need more cards than the decks hold")

    def canonical(self) -> str:
        """Stable JSON of every field, stored with each deal and used in its commitment."""
        data: dict[str, Any] = asdict(self)
        for f in fields(self):
            value = getattr(self, f.name)
            if hasattr(value, "value") and not isinstance(value, int):
                data[f.name] = value.value
        data["powers"] = [[key, power.value] for key, power in self.powers]
        data["special_values"] = [list(pair) for pair in self.special_values]
        data["values"] = list(self.values)
        for name in ADDED_OPTIONS:  # written only when set: the text (and so the commitment) of older rules stands
            if getattr(self, name) == _DEFAULTS[name]:
                del data[name]
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_canonical(cls, text: str) -> GolfRules:
        """The rules written by :meth:`canonical`."""
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GolfRules:
        """Rules from a plain mapping of field names (enum fields by value); unknown names raise ``ValueError``."""
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"unknown rule options: {sorted(unknown)}")
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            kwargs[name] = _coerce(name, value)
        return cls(**kwargs)

    def with_options(self, **changes: Any) -> GolfRules:
        """A copy with some options changed (values coerced as in :meth:`from_dict`)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in changes.items():
            if name not in data:
                raise ValueError(f"unknown rule option: {name!r}")
            data[name] = _coerce(name, value)
        return GolfRules(**data)


_ENUMS: dict[str, type[Any]] = {
    "start_mode": StartMode,
    "flip_after_discard": FlipRule,
    "stock_out": StockOut,
    "four_alike_scope": FourAlikeScope,
    "knocker_penalty": KnockerPenalty,
    "knocker_bonus": KnockerBonus,
}


def _coerce(name: str, value: Any) -> Any:
    if name in _ENUMS:
        return _ENUMS[name](value) if not isinstance(value, _ENUMS[name]) else value
    if name == "values":
        return tuple(int(v) for v in value)
    if name == "special_values":
        return tuple((str(code), int(points)) for code, points in value)
    if name == "powers":
        return tuple((str(key), p if isinstance(p, Power) else Power(p)) for key, p in value)
    return value


ADDED_OPTIONS = (
    "start_fixed",
    "look_before_last_turn",
    "peeks_stay_visible",
    "flip_as_turn",
    "early_out",
    "pairs_by_value",
    "negative_pairs_keep_value",
    "four_jacks_value",
    "four_in_two_columns_value",
    "four_kings_line_value",
    "straight_value",
    "shoot_the_moon",
    "blackjack",
    "four_alike_wins_match",
    "first_out_bonus",
    "underdog_bonus",
    "tied_penalty",
    "min_players",
    "two_powers_from_three",
)
"""Options added after rules were first published: :meth:`GolfRules.canonical` writes each only when it differs from
its default, so the canonical text (and the commitment) of rules that do not use them is what it always was."""
_DEFAULTS = {f.name: f.default for f in fields(GolfRules)}
