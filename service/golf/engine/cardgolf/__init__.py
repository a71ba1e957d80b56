"""Card Golf for two or more players (six-card and its family, power-card variants): rules, presets, deals,
moves, scoring with breakdowns, the per-seat view, matches of 9 or 18 holes, and computer opponents.

Pure: the standard library only; chance comes in as seeds (``golf-shuffle-v1``) or explicit ``random.Random``.
"""

from golf.engine.cardgolf.cards import GCard, Joker, build_deck, parse_card, parse_cards
from golf.engine.cardgolf.moves import (
    Discard,
    DrawDiscard,
    DrawStock,
    Flip,
    IllegalMove,
    Knock,
    Move,
    Pass,
    PeekStroke,
    Refusal,
    Reveal,
    Swap,
    UsePower,
    parse_move,
)
from golf.engine.cardgolf.options import (
    FlipRule,
    FourAlikeScope,
    KnockerBonus,
    KnockerPenalty,
    Power,
    StartMode,
    StockOut,
)
from golf.engine.cardgolf.outcome import HoleResult, SeatResult, hole_result
from golf.engine.cardgolf.powers import CARDS as POWER_CARDS  # installs the power cards' rules into the state
from golf.engine.cardgolf.presets import PRESETS, preset, preset_version
from golf.engine.cardgolf.rules import GolfRules
from golf.engine.cardgolf.scoring import GridScore, ScoreLine, score_grid
from golf.engine.cardgolf.state import EndReason, HoleState, Phase, Source, deal
from golf.engine.cardgolf.view import SeatView, view

__all__ = [
    "POWER_CARDS",
    "PRESETS",
    "Discard",
    "DrawDiscard",
    "DrawStock",
    "EndReason",
    "Flip",
    "FlipRule",
    "FourAlikeScope",
    "GCard",
    "GolfRules",
    "GridScore",
    "HoleResult",
    "HoleState",
    "IllegalMove",
    "Joker",
    "Knock",
    "KnockerBonus",
    "KnockerPenalty",
    "Move",
    "Pass",
    "PeekStroke",
    "Phase",
    "Power",
    "Refusal",
    "Reveal",
    "ScoreLine",
    "SeatResult",
    "SeatView",
    "Source",
    "StartMode",
    "StockOut",
    "Swap",
    "UsePower",
    "build_deck",
    "deal",
    "hole_result",
    "parse_card",
    "parse_cards",
    "parse_move",
    "preset",
    "preset_version",
    "score_grid",
    "view",
]
