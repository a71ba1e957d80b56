"""Named, versioned presets of Card Golf. A preset is a :class:`GolfRules`. Each preset has its own version: its
meaning never changes under the same name and version. A change makes a new version and the old ones stay in
:data:`HISTORY`, so ``preset(name, version)`` gives the rules a table was made with (tables also store their whole
rules)."""

from __future__ import annotations

from dataclasses import replace

from golf.engine.cardgolf.options import FlipRule, FourAlikeScope, Power, StartMode
from golf.engine.cardgolf.rules import STANDARD_VALUES, GolfRules

SIX_CARD = GolfRules()

PRESETS: dict[str, GolfRules] = {
    "six-card": SIX_CARD,
    # Seed 001: four or more players, two packs and four jokers, 3 rows of 2, the top two cards turned up, pairs side
    # by side, kings 0, jokers -2, aces 1, queens and jacks 10, "all other cards are face value" (a two is 2), a
    # joker pair -4, four alike in a group of four: +10 to each opponent; once a player has every card face up the
    # others look at their face-down cards before their last turn.
    "six-card-jokers": replace(
        SIX_CARD,
        min_players=4,
        values=(1, 2, *STANDARD_VALUES[2:]),
        start_fixed=True,
        look_before_last_turn=True,
        decks=2,
        jokers=4,
        rows=3,
        cols=2,
        match_columns=False,
        match_rows=True,
        joker_pair_value=-4,
        four_alike_scope=FourAlikeScope.BLOCK,
        four_alike_opponents=10,
    ),
    # Four-card: 2x2, look at two privately, end by knocking (four cards face up do not end the hole: the player
    # must choose to knock).
    "four-card": replace(
        SIX_CARD,
        rows=2,
        cols=2,
        start_mode=StartMode.PEEK,
        start_cards=2,
        knocking=True,
        end_on_all_face_up=False,
    ),
    "eight-card": replace(SIX_CARD, rows=2, cols=4),
    # Nine-card: two packs, 3x3, three turned up, a column of three equal scores 0.
    "nine-card": replace(SIX_CARD, decks=2, rows=3, cols=3, start_cards=3),
    # Cambio (Malaysian simple version): cards stay face down, end by knocking; J peek own, Q peek an opponent's,
    # K blind swap, joker shuffles an opponent's cards.
    "cambio": replace(
        SIX_CARD,
        rows=2,
        cols=2,
        jokers=2,
        start_mode=StartMode.PEEK,
        start_cards=2,
        swap_face_up=False,
        end_on_all_face_up=False,
        knocking=True,
        match_columns=False,
        powers=(
            ("J", Power.PEEK_OWN),
            ("Q", Power.PEEK_OPPONENT),
            ("K", Power.BLIND_SWAP),
            ("X", Power.SHUFFLE_OPPONENT),
        ),
    ),
    # Powers (seed 004): six cards, look at two, all face down, end by knocking; red kings -1; every power of the
    # table (the queen is a dud; the black kings cancel a knock by being seen; the 2 lends two powers of the cards
    # 3 to king, never the ace's).
    "powers": replace(
        SIX_CARD,
        start_mode=StartMode.PEEK,
        start_cards=2,
        swap_face_up=False,
        end_on_all_face_up=False,
        knocking=True,
        match_columns=False,
        special_values=(("KH", -1), ("KD", -1)),
        two_powers_from_three=True,
        powers=(
            ("J", Power.PEEK_OWN),
            ("T", Power.PEEK_OPPONENT),
            ("9", Power.GIVE_TO_OPPONENT),
            ("7", Power.SWAP_LINES),
            ("6", Power.BLIND_SWAP),
            ("4", Power.TURN_UP_OR_DOWN),
            ("3", Power.SHUFFLE_OPPONENT),
            ("8", Power.DRAW_TWO),
            ("5", Power.SHIELD),
            ("2", Power.TWO_POWERS),
            ("A", Power.ADD_OR_REMOVE),
            ("KS", Power.CANCEL_KNOCK),
            ("KC", Power.CANCEL_KNOCK),
        ),
    ),
    "six-card-flip": replace(SIX_CARD, flip_after_discard=FlipRule.OPTIONAL),
    # Cutthroat Golf (seed 004): kings are worth 15, and a king drawn from the stock may be traded for any other
    # player's face-up card, which the player must then put in their own grid.
    "cutthroat": replace(
        SIX_CARD,
        values=(*SIX_CARD.values[:12], 15),
        powers=(("K", Power.TRADE_FOR_UP_CARD),),
    ),
}
"""The newest version of every preset, by name."""

DESCRIPTIONS: dict[str, str] = {
    "six-card": "The classic game: a 2x3 grid, two cards turned up, a column of a pair scores 0, kings 0, twos -2.",
    "six-card-jokers": "For four or more: six cards in 3 rows of 2 from two packs and four jokers, the top two turned "
    "up; twos 2, jokers -2, pairs side by side 0, a joker pair -4, four alike in a block +10 to each opponent.",
    "four-card": "A 2x2 grid: look at two of your cards privately; the hole ends when a player knocks.",
    "eight-card": "Six-card on a 2x4 grid.",
    "nine-card": "A 3x3 grid from two packs: three cards turned up, a column of three alike scores 0.",
    "cambio": "Cambio: a 2x2 grid kept face down, two peeked at; drawn jacks peek at your own card, queens at an "
    "opponent's, kings swap blind, jokers shuffle an opponent's cards; knock to end the hole.",
    "powers": "Powers: six cards kept face down, two peeked at, red kings -1; drawn power cards peek, swap, give, "
    "shuffle, turn, shield, draw two, add or remove cards, or (the 2) lend two powers of the cards 3 to king; black "
    "kings cancel a knock; knock to end the hole.",
    "six-card-flip": "Six-card where a player who discards a drawn card may turn up one of their face-down cards.",
    "cutthroat": "Cutthroat: six-card with kings worth 15; a king drawn from the stock may be traded for another "
    "player's face-up card, which goes into your own grid.",
}
"""What each preset is, in a sentence, for clients listing them (``ListTablePresets``)."""

HISTORY: dict[str, tuple[GolfRules, ...]] = {
    name: (rules,) for name, rules in PRESETS.items() if name not in ("four-card", "six-card-jokers", "powers")
}
"""Every version of every preset, oldest first (version ``n`` is ``HISTORY[name][n - 1]``)."""
HISTORY["four-card"] = (
    replace(PRESETS["four-card"], end_on_all_face_up=True),  # 1: also ended when four cards were face up
    PRESETS["four-card"],  # 2: ends by knocking only, as its text says
)
_JOKERS_2 = replace(PRESETS["six-card-jokers"], min_players=2, values=STANDARD_VALUES)  # twos -2, from 2 players
HISTORY["six-card-jokers"] = (
    replace(_JOKERS_2, start_fixed=False, look_before_last_turn=False),  # 1: start cards chosen
    _JOKERS_2,  # 2: the top two cards turned up; a look before the last turn (seed 001)
    PRESETS["six-card-jokers"],  # 3: twos 2 ("all other cards are face value"), four or more players (seed 001)
)
_POWERS_2 = replace(PRESETS["powers"], two_powers_from_three=False)  # the 2 lent the ace's power too
HISTORY["powers"] = (
    replace(_POWERS_2, powers=PRESETS["powers"].powers[:7]),  # 1: 8, 5, 2, ace, black king were duds
    _POWERS_2,  # 2: the 8, 5, 2, ace and black king powers
    PRESETS["powers"],  # 3: the 2 lends powers of the cards 3 to king only, not the ace's (seed 004)
)


def preset_version(name: str) -> int:
    """The newest version of the preset ``name``."""
    return len(HISTORY[name])


def preset(name: str, version: int | None = None) -> GolfRules:
    """The preset called ``name``, its newest version or ``version``; raises ``KeyError`` naming the known names
    (or versions)."""
    versions = HISTORY.get(name)
    if versions is None:
        raise KeyError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}")
    if version is None:
        return versions[-1]
    if not 1 <= version <= len(versions):
        raise KeyError(f"preset {name!r} has versions 1 to {len(versions)}, not {version}")
    return versions[version - 1]
