"""Named, versioned presets of Card Golf. A preset is a :class:`GolfRules`; its name and version are stored with
each deal so an old deal keeps the rules it was played under."""

from __future__ import annotations

from dataclasses import replace

from golf.engine.cardgolf.options import FlipRule, FourAlikeScope, Power, StartMode
from golf.engine.cardgolf.rules import GolfRules

PRESET_VERSION = 3
"""Bumped whenever a preset's fields change. 2: four-card's holes end by knocking only (as its text says), not
also when a player's four cards are face up. 3: six-card-jokers turns up the top two cards, and the others look at
their face-down cards before their last turn (seed 001). A table stores its whole rules, so tables made before keep
theirs."""

SIX_CARD = GolfRules()

PRESETS: dict[str, GolfRules] = {
    "six-card": SIX_CARD,
    # Seed 001: two packs and four jokers, 3 rows of 2, the top two cards turned up, pairs side by side, kings 0,
    # jokers -2, a joker pair -4, four alike in a group of four: +10 to each opponent; once a player has every card
    # face up the others look at their face-down cards before their last turn.
    "six-card-jokers": replace(
        SIX_CARD,
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
    # Powers (seed 004): six cards, look at two, all face down, end by knocking; red kings -1. The powers of
    # 8 (draw two more), 5 (shield), 2 (two powers), ace (add/remove a card) and the black king's knock cancel are
    # not modelled; those ranks are duds.
    "powers": replace(
        SIX_CARD,
        start_mode=StartMode.PEEK,
        start_cards=2,
        swap_face_up=False,
        end_on_all_face_up=False,
        knocking=True,
        match_columns=False,
        special_values=(("KH", -1), ("KD", -1)),
        powers=(
            ("J", Power.PEEK_OWN),
            ("T", Power.PEEK_OPPONENT),
            ("9", Power.GIVE_TO_OPPONENT),
            ("7", Power.SWAP_LINES),
            ("6", Power.BLIND_SWAP),
            ("4", Power.TURN_UP_OR_DOWN),
            ("3", Power.SHUFFLE_OPPONENT),
        ),
    ),
    "six-card-flip": replace(SIX_CARD, flip_after_discard=FlipRule.OPTIONAL),
}


def preset(name: str) -> GolfRules:
    """The preset called ``name``; raises ``KeyError`` listing the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}") from None
