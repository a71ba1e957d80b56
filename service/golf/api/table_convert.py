"""Live card Golf tables to protobuf messages and back: cards, moves, holes, score sheets and tables (the rules:
``golf.api.table_rules_convert``).

A table reaches the wire only as a :class:`~golf.app.tables.read_model.TableSnapshot`, whose view is already the one
the caller may see (``golf.app.tables.views.view_for``, over the engine's one observation function): a card the
viewer may not know is ``None`` there and is never set here. Every move a table lists converts back to the same
engine move, so ``Table.legal_moves`` entries may be sent back to ``Act`` as they are.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from datetime import timedelta
from typing import TypeVar

from google.protobuf.duration_pb2 import Duration

from golf.api.convert import card_to_proto as plain_card_to_proto
from golf.api.convert import timestamp
from golf.api.table_rules_convert import POWERS, by_name, from_contract, rules_message
from golf.app.errors import InvalidArgument
from golf.app.memo import IdentityMemo
from golf.app.tables.read_model import SeatInfo, TableSnapshot, TableView
from golf.app.tables.status import MatchEnd, TableStatus
from golf.engine.cardgolf.bots.catalogue import bot_name, parse_bot_name
from golf.engine.cardgolf.cards import JOKER_CODES, JOKER_RANK, GCard
from golf.engine.cardgolf.match import ScoreSheet
from golf.engine.cardgolf.moves import (
    Discard,
    DrawDiscard,
    DrawStock,
    Flip,
    FlipAll,
    Keep,
    Knock,
    Move,
    Pass,
    PeekStroke,
    Reveal,
    Swap,
    UsePower,
)
from golf.engine.cardgolf.options import Power
from golf.engine.cardgolf.outcome import HoleResult
from golf.engine.cardgolf.state import EndReason, Phase, Source
from golf.engine.cardgolf.view import SeatView
from golf.engine.shuffle import ALGORITHM
from golf.v1 import card_golf_pb2 as cg
from golf.v1 import cards_pb2

__all__ = [
    "BOT_LEVELS",
    "BOT_PERSONALITIES",
    "bot_from_proto",
    "bot_level_from_proto",
    "bot_level_to_proto",
    "bot_personality_to_proto",
    "card_to_proto",
    "hole_result_to_proto",
    "hole_to_proto",
    "move_from_proto",
    "move_to_proto",
    "score_sheet_to_proto",
    "table_to_proto",
]

T = TypeVar("T")

# -- enums: the engine's and the contract's, by name -------------------------------------------------------------
_PHASE = by_name(Phase, cg.HolePhase, "HOLE_PHASE_")
_SOURCE = by_name(Source, cg.CardSource, "CARD_SOURCE_")
_END_REASON = by_name(EndReason, cg.HoleEndReason, "HOLE_END_REASON_")
_TABLE_STATUS = by_name(TableStatus, cg.TableStatus, "TABLE_STATUS_")
_MATCH_END = by_name(MatchEnd, cg.MatchEnd, "MATCH_END_")

BOT_LEVELS: dict[str, cg.BotLevel.ValueType] = {
    "random": cg.BOT_LEVEL_RANDOM,
    "beginner": cg.BOT_LEVEL_BEGINNER,
    "greedy": cg.BOT_LEVEL_GREEDY,
    "advanced": cg.BOT_LEVEL_ADVANCED,
    "strong": cg.BOT_LEVEL_STRONG,
}
"""The engine's bot levels (``golf.engine.cardgolf.bots.BOT_NAMES``) and their ``BotLevel``."""
_BOT_NAMES: dict[int, str] = {level: name for name, level in BOT_LEVELS.items()}
BOT_PERSONALITIES: dict[str, cg.BotPersonality.ValueType] = {
    "pair-hunter": cg.BOT_PERSONALITY_PAIR_HUNTER,
    "racer": cg.BOT_PERSONALITY_RACER,
    "cautious": cg.BOT_PERSONALITY_CAUTIOUS,
    "gambler": cg.BOT_PERSONALITY_GAMBLER,
}
"""The engine's bot personalities (``golf.engine.cardgolf.bots.PERSONALITIES``) and their ``BotPersonality``."""
_PERSONALITY_NAMES: dict[int, str] = {value: name for name, value in BOT_PERSONALITIES.items()}
MISSED_ACTIONS: dict[str, cg.MissedTurnsAction.ValueType] = {
    "bot": cg.MISSED_TURNS_ACTION_BOT,
    "resign": cg.MISSED_TURNS_ACTION_RESIGN,
}
"""The table's ``missed_action`` and its ``MissedTurnsAction``."""
_MISSED_ACTION_NAMES: dict[int, str] = {level: name for name, level in MISSED_ACTIONS.items()}


def bot_level_to_proto(name: str | None) -> cg.BotLevel.ValueType:
    """``BotLevel`` of an engine bot name, with or without a personality (unspecified for ``None``: no bot)."""
    return BOT_LEVELS[parse_bot_name(name).level.name] if name is not None else cg.BOT_LEVEL_UNSPECIFIED


def bot_personality_to_proto(name: str | None) -> cg.BotPersonality.ValueType:
    """``BotPersonality`` of an engine bot name (unspecified for no bot or a bot of no personality)."""
    personality = parse_bot_name(name).personality if name is not None else None
    return BOT_PERSONALITIES[personality.name] if personality is not None else cg.BOT_PERSONALITY_UNSPECIFIED


def bot_from_proto(level: int, personality: int, field: str = "personality") -> str:
    """The engine's bot name of a ``BotLevel`` and a ``BotPersonality`` (unspecified: none), e.g.
    ``strong+racer``; an unknown personality, or one for the random level, is refused naming ``field``."""
    name = bot_level_from_proto(level)
    if personality == cg.BOT_PERSONALITY_UNSPECIFIED:
        return name
    style = _PERSONALITY_NAMES.get(personality)
    if style is None:
        raise InvalidArgument(field, "choose a defined BotPersonality, or leave it unspecified")
    try:
        return bot_name(name, style)
    except ValueError as refused:
        raise InvalidArgument(field, str(refused)) from None


def bot_level_from_proto(level: int, field: str = "level") -> str:
    """The engine's bot name of a ``BotLevel``; the unspecified level (or a number of no level) is refused."""
    name = _BOT_NAMES.get(level)
    if name is None:
        choices = ", ".join(cg.BotLevel.Name(level) for level in BOT_LEVELS.values())
        raise InvalidArgument(field, f"choose one of {choices}")
    return name


def missed_action_from_proto(action: int, field: str = "turnClock.action") -> str:
    """``bot`` or ``resign`` (the unspecified action is ``bot``, the contract's default)."""
    if action == cg.MISSED_TURNS_ACTION_UNSPECIFIED:
        return "bot"
    name = _MISSED_ACTION_NAMES.get(action)
    if name is None:
        raise InvalidArgument(field, "choose MISSED_TURNS_ACTION_BOT or MISSED_TURNS_ACTION_RESIGN")
    return name


# -- cards -------------------------------------------------------------------------------------------------------
_JOKER_PROTOS = tuple(cards_pb2.Card(code=code, joker=True) for code in JOKER_CODES)


def card_to_proto(card: GCard) -> cards_pb2.Card:
    """A card of card Golf: a plain card as solitaire sends it, a joker with ``joker`` set and code XB or XR (its
    rank and suit unspecified)."""
    if card.rank == JOKER_RANK:
        return _JOKER_PROTOS[card.suit]
    return plain_card_to_proto(card)  # type: ignore[arg-type]  # a Card: its rank is not the joker's


def _cards(cards: Iterable[GCard]) -> list[cards_pb2.Card]:
    return [card_to_proto(c) for c in cards]


# -- moves -------------------------------------------------------------------------------------------------------
def _pass() -> cg.CardGolfMove:
    # ``pass`` is a Python keyword: the field is reached through its name.
    msg = cg.CardGolfMove()
    getattr(msg, "pass").SetInParent()
    return msg


def move_to_proto(move: Move) -> cg.CardGolfMove:
    """The move as the contract writes it (a draw from the stock never names its card: moves do not hold cards)."""
    if isinstance(move, Reveal):
        return cg.CardGolfMove(reveal=cg.CardGolfMove.Reveal(positions=move.positions))
    if isinstance(move, DrawStock):
        return cg.CardGolfMove(draw_stock=cg.CardGolfMove.DrawStock())
    if isinstance(move, DrawDiscard):
        return cg.CardGolfMove(draw_discard=cg.CardGolfMove.DrawDiscard())
    if isinstance(move, Swap):
        return cg.CardGolfMove(swap=cg.CardGolfMove.Swap(position=move.position))
    if isinstance(move, Discard):
        return cg.CardGolfMove(discard=cg.CardGolfMove.Discard())
    if isinstance(move, Flip):
        return cg.CardGolfMove(flip=cg.CardGolfMove.Flip(position=move.position))
    if isinstance(move, Pass):
        return _pass()
    if isinstance(move, Knock):
        return cg.CardGolfMove(knock=cg.CardGolfMove.Knock())
    if isinstance(move, PeekStroke):
        return cg.CardGolfMove(peek_stroke=cg.CardGolfMove.PeekStroke(position=move.position))
    if isinstance(move, FlipAll):
        return cg.CardGolfMove(flip_all=cg.CardGolfMove.FlipAll())
    if isinstance(move, Keep):
        return cg.CardGolfMove(keep=cg.CardGolfMove.Keep(choice=move.choice, position=move.position))
    use = cg.CardGolfMove.UsePower(seat=move.seat, position=move.position, own=move.own)
    if move.power is not None:  # the engine names a power by its value ("draw_two")
        use.power = POWERS[Power(move.power)]
    return cg.CardGolfMove(use_power=use)


def move_from_proto(msg: cg.CardGolfMove, field: str = "move") -> Move:
    """The engine's move for a ``CardGolfMove``; one with no kind set is refused naming ``field``."""
    kind = msg.WhichOneof("kind")
    if kind == "reveal":
        return Reveal(tuple(msg.reveal.positions))
    if kind == "draw_stock":
        return DrawStock()
    if kind == "draw_discard":
        return DrawDiscard()
    if kind == "swap":
        return Swap(msg.swap.position)
    if kind == "discard":
        return Discard()
    if kind == "flip":
        return Flip(msg.flip.position)
    if kind == "pass":
        return Pass()
    if kind == "knock":
        return Knock()
    if kind == "peek_stroke":
        return PeekStroke(msg.peek_stroke.position)
    if kind == "use_power":
        power = msg.use_power
        named = None
        if power.power != cg.POWER_UNSPECIFIED:
            named = from_contract(POWERS, power.power, f"{field}.usePower.power").value
        return UsePower(
            power.seat if power.HasField("seat") else None,
            power.position if power.HasField("position") else None,
            power.own if power.HasField("own") else None,
            named,
        )
    if kind == "flip_all":
        return FlipAll()
    if kind == "keep":
        return Keep(msg.keep.choice, msg.keep.position)
    raise InvalidArgument(field, f"{field} must set one of its kinds (reveal, drawStock, swap ...)")


# -- holes, results, the score sheet -----------------------------------------------------------------------------
def hole_result_to_proto(result: HoleResult, hole_number: int) -> cg.HoleResult:
    """A finished hole's scores with each seat's breakdown; ``hole_number`` is 1-based."""
    msg = cg.HoleResult(
        hole_number=hole_number,
        seats=[
            cg.SeatHoleScore(
                seat=s.seat,
                total=s.total,
                lines=[
                    cg.ScoreLine(rule=line.rule, positions=line.positions, points=line.points, note=line.note)
                    for line in s.lines
                ],
            )
            for s in result.seats
        ],
        end_reason=_END_REASON[result.reason],
        winners=result.winners,
        wins_match=result.wins_match,
    )
    if result.ender is not None:
        msg.ender = result.ender
    return msg


def _grid_card(card: GCard | None, up: bool, over: bool, shielded: bool) -> cg.GridCard:
    # A place with no card: its card is ``None`` in the view like an unknown card's, but an unknown card is face
    # down and the hole goes on, while an empty place is face up (nothing there to hide), or any place of a hole
    # that is over (every card is shown then).
    if card is None and (up or over):
        return cg.GridCard(empty=True, shielded=shielded)
    return cg.GridCard(face_up=up, card=card_to_proto(card) if card is not None else None, shielded=shielded)


@functools.lru_cache(maxsize=4096)
def _grid(
    seat: int,
    cards: tuple[GCard | None, ...],
    face_up: tuple[bool, ...],
    over: bool,
    shields: frozenset[int],
    aside: tuple[GCard, ...],
) -> cg.Grid:
    # Memoised: a move changes one grid at most, so most grids of a table are the ones it sent last time.
    return cg.Grid(
        seat=seat,
        cards=[
            _grid_card(card, up, over, p in shields) for p, (card, up) in enumerate(zip(cards, face_up, strict=True))
        ],
        aside=_cards(aside),
    )


def _per_seat(values: tuple[T, ...], seat: int, default: T) -> T:
    # The view's per-seat tuples of the power cards are empty when no seat has any (a hole without powers).
    return values[seat] if seat < len(values) else default


def hole_to_proto(hole: SeatView, hole_number: int) -> cg.HoleView:
    """A hole as the view shows it: a card the viewer may not know is ``None`` in the view, and unset here; an
    empty place (the ace of Powers) is ``None`` too, but face up (or in a hole that is over), and ``empty`` here.
    ``offered`` is the view's: the mover's only."""
    over = hole.phase is Phase.OVER
    grids = [
        _grid(
            seat,
            cards,
            up,
            over,
            _per_seat(hole.shields, seat, frozenset()),
            _per_seat(hole.aside, seat, ()),
        )
        for seat, (cards, up) in enumerate(zip(hole.grids, hole.face_up, strict=True))
    ]
    msg = cg.HoleView(
        phase=_PHASE[hole.phase],
        ready=hole.ready,
        grids=grids,
        discard=_cards(hole.discard),
        stock_count=hole.stock_count,
        held=card_to_proto(hole.held) if hole.held is not None else None,
        held_from=_SOURCE[hole.held_from] if hole.held_from is not None else cg.CARD_SOURCE_UNSPECIFIED,
        end_reason=_END_REASON[hole.end_reason] if hole.end_reason is not None else cg.HOLE_END_REASON_UNSPECIFIED,
        turns=hole.turns,
        strokes=hole.strokes,
        result=hole_result_to_proto(hole.result, hole_number) if hole.result is not None else None,
        offered=_cards(hole.offered),
        charges=hole.charges,
    )
    # During the setup every seat not ready chooses at once (the view names the first of them): no one seat moves.
    if hole.to_move is not None and hole.phase not in (Phase.SETUP, Phase.OVER):
        msg.to_move = hole.to_move
    if hole.ender is not None:
        msg.ender = hole.ender
    return msg


_RESULTS: IdentityMemo[HoleResult, dict[int, cg.HoleResult]] = IdentityMemo(lambda _: {})
_FINISHED_HOLES: IdentityMemo[SeatView, dict[int, cg.HoleView]] = IdentityMemo(lambda _: {})
"""A finished hole's messages, by hole number: made once, then copied into every table of the rest of the match
(a finished hole and its views do not change)."""


def _result(result: HoleResult, hole_number: int) -> cg.HoleResult:
    made = _RESULTS(result)
    msg = made.get(hole_number)
    if msg is None:
        msg = made[hole_number] = hole_result_to_proto(result, hole_number)
    return msg


def _finished_hole(hole: SeatView, hole_number: int) -> cg.HoleView:
    made = _FINISHED_HOLES(hole)
    msg = made.get(hole_number)
    if msg is None:
        msg = made[hole_number] = hole_to_proto(hole, hole_number)
    return msg


def score_sheet_to_proto(sheet: ScoreSheet) -> cg.ScoreSheet:
    """Points per hole and seat, the running totals, the seats leading (the winners once the match is over) and those
    that won outright."""
    return cg.ScoreSheet(
        holes=[cg.HolePoints(points=row) for row in sheet.holes],
        totals=sheet.totals,
        leaders=sheet.leaders,
        won_by=sheet.won_by,
    )


_SHEETS: IdentityMemo[ScoreSheet, cg.ScoreSheet] = IdentityMemo(score_sheet_to_proto)
"""A match's score sheet changes once a hole: its message is made once for every event of the hole (and copied)."""


# -- tables ------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def _seat_to_proto(info: SeatInfo) -> cg.TableSeat:  # memoised (seats seldom change); copied into each table
    # ``bot`` is set for every seat a bot plays: a bot's, a resigned player's and an away player's.
    return cg.TableSeat(
        seat=info.seat,
        player_id=info.player_id or "",
        bot=bot_level_to_proto(info.bot),
        bot_personality=bot_personality_to_proto(info.bot),
        resigned=info.resigned,
        away=info.away,
        missed_turns=info.missed,
    )


def _duration(seconds: float) -> Duration:
    out = Duration()
    out.FromTimedelta(timedelta(seconds=seconds))
    return out


def _turn_clock(view: TableView) -> cg.TurnClock | None:
    if view.turn_seconds is None:
        return None
    return cg.TurnClock(
        turn_time=_duration(view.turn_seconds),
        missed_turns_limit=view.missed_turns_limit,
        action=MISSED_ACTIONS[view.missed_action],
    )


def table_to_proto(snapshot: TableSnapshot, into: cg.Table | None = None) -> cg.Table:
    """The table as the snapshot's caller sees it (their seat's view with their legal moves, or a spectator's);
    the join code only for the table's creator (the snapshot decides). Written into ``into`` when given (a field
    of the message it goes out in, so the table is not copied once more), else into a new message."""
    view = snapshot.view
    hole_number = view.hole_number or 0
    msg = cg.Table() if into is None else into
    msg.id = snapshot.table_id
    msg.preset = view.preset
    msg.rules.CopyFrom(rules_message(view.rules))
    msg.holes = view.holes
    msg.listed = view.listed
    msg.join_code = snapshot.join_code or ""
    msg.owner_id = snapshot.owner_id
    msg.create_time.CopyFrom(timestamp(snapshot.created_at))
    msg.version = view.version
    msg.status = _TABLE_STATUS[view.status]
    msg.match_end = _MATCH_END[view.end] if view.end is not None else cg.MATCH_END_UNSPECIFIED
    msg.seats.extend(_seat_to_proto(info) for info in view.seats)
    msg.hole_number = hole_number
    msg.awaiting.extend(view.awaiting)
    if view.hole is not None:
        msg.hole.CopyFrom(hole_to_proto(view.hole, hole_number))
    if view.last_hole is not None:
        msg.last_hole.CopyFrom(_finished_hole(view.last_hole, len(view.results)))
    msg.score_sheet.CopyFrom(_SHEETS(view.sheet))
    msg.results.extend(_result(r, n) for n, r in enumerate(view.results, start=1))
    msg.legal_moves.extend(move_to_proto(m) for m in view.legal_moves)
    clock = _turn_clock(view)
    if clock is not None:
        msg.turn_clock.CopyFrom(clock)
    if snapshot.turn_deadline is not None:
        msg.turn_deadline.CopyFrom(timestamp(snapshot.turn_deadline))
    msg.bot_delay.CopyFrom(_duration(view.bot_delay_ms / 1000))
    msg.seat_count = len(view.seats)
    if snapshot.seat is not None:
        msg.your_seat = snapshot.seat
    # The commitment is the view's (made once per table); the seed is in the view only once the match is over.
    msg.commitment = view.commitment
    msg.shuffle_algorithm = ALGORITHM
    if view.seed is not None:
        msg.seed = view.seed
    return msg
