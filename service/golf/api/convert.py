"""Domain values to protobuf messages and back. Games reach the wire only through ``view``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from golf.app.errors import InvalidArgument
from golf.app.identity import PlayerRecord
from golf.app.players import SignedIn
from golf.app.quoting import shown
from golf.app.records import (
    AUTOPLAY,
    UNDO,
    DealRecord,
    GameFilter,
    GameSnapshot,
    MoveRecord,
    RoundFilter,
    Unranked,
    action_moves,
)
from golf.app.rounds import RoundSnapshot
from golf.engine.cards import Card
from golf.engine.solitaire.difficulty import Difficulty
from golf.engine.solitaire.moves import Draw, Move, PlayColumn, parse_move
from golf.engine.solitaire.rules import SolitaireRules, UndoPolicy
from golf.engine.solitaire.state import Status
from golf.engine.solitaire.view import view
from golf.v1 import cards_pb2, players_pb2, solitaire_pb2

_STATUS = {
    Status.IN_PROGRESS: solitaire_pb2.GAME_STATUS_IN_PROGRESS,
    Status.WON: solitaire_pb2.GAME_STATUS_WON,
    Status.LOST: solitaire_pb2.GAME_STATUS_LOST,
}
_UNDO = {
    UndoPolicy.UNLIMITED: solitaire_pb2.UNDO_POLICY_UNLIMITED,
    UndoPolicy.LIMITED: solitaire_pb2.UNDO_POLICY_LIMITED,
    UndoPolicy.NONE: solitaire_pb2.UNDO_POLICY_NONE,
}
_UNDO_BACK = {v: k for k, v in _UNDO.items()}
DIFFICULTIES = {
    Difficulty.EASY: solitaire_pb2.DIFFICULTY_EASY,
    Difficulty.MEDIUM: solitaire_pb2.DIFFICULTY_MEDIUM,
    Difficulty.HARD: solitaire_pb2.DIFFICULTY_HARD,
}
_DIFFICULTY_BACK = {v: k for k, v in DIFFICULTIES.items()}
_RANKS = frozenset(range(1, 14))
_SUITS = frozenset(range(1, 5))
_SEED_SOURCE = {
    "server": solitaire_pb2.SEED_SOURCE_SERVER,
    "client": solitaire_pb2.SEED_SOURCE_CLIENT,
    "pysol": solitaire_pb2.SEED_SOURCE_PYSOL,
}
_STATUS_BACK = {v: k.value for k, v in _STATUS.items()}
UNRANKED = {
    Unranked.PRACTICE: solitaire_pb2.UNRANKED_REASON_PRACTICE,
    Unranked.STOCK_SEEN: solitaire_pb2.UNRANKED_REASON_STOCK_DRAW_UNDONE,
}
"""Why a game or a record counts for no board, on the wire (``Game.unranked_reason``, ``HistoryEntry``)."""
# Built once: converting cards is the hot path of every response.
_CARD_PROTOS = {
    Card(rank, suit): cards_pb2.Card(rank=rank, suit=suit + 1, code=Card(rank, suit).code)  # type: ignore[arg-type]
    for rank in range(1, 14)
    for suit in range(4)
}


def card_to_proto(card: Card) -> cards_pb2.Card:
    return _CARD_PROTOS[card]


def card_from_proto(msg: cards_pb2.Card, field: str) -> Card:
    """A card from its ``code``, or from ``rank`` and ``suit`` when the code is empty; all given must agree, and
    a rank or suit outside its enum (a number no client should send) is refused, never read as another card."""
    if msg.rank and msg.rank not in _RANKS:
        raise InvalidArgument(f"{field}.rank", f"{field}.rank must be one of RANK_ACE to RANK_KING (1 to 13)")
    if msg.suit and msg.suit not in _SUITS:
        raise InvalidArgument(f"{field}.suit", f"{field}.suit must be one of SUIT_CLUBS to SUIT_SPADES (1 to 4)")
    if msg.code:
        try:
            card = Card.parse(msg.code)
        except ValueError:
            raise InvalidArgument(f"{field}.code", f"not a card code: {shown(msg.code)}") from None
        if (msg.rank and msg.rank != card.rank) or (msg.suit and msg.suit != card.suit + 1):
            raise InvalidArgument(field, f"rank and suit do not match code {shown(msg.code)}")
        return card
    if not msg.rank or not msg.suit:
        raise InvalidArgument(field, "a card needs its code, or its rank and suit")
    return Card(int(msg.rank), int(msg.suit) - 1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def timestamp(when: datetime) -> Timestamp:
    """``when`` (aware; naive is taken as UTC, as ``Timestamp.FromDatetime`` does) to the microsecond, in integer
    arithmetic (``FromDatetime`` costs several times more, on every table event)."""
    since = when - (_EPOCH if when.tzinfo is not None else _EPOCH.replace(tzinfo=None))
    return Timestamp(seconds=since.days * 86400 + since.seconds, nanos=since.microseconds * 1000)


def rules_to_proto(rules: SolitaireRules) -> solitaire_pb2.SolitaireRules:
    return solitaire_pb2.SolitaireRules(
        decks=rules.decks,
        columns=rules.columns,
        column_height=rules.column_height,
        wrap=rules.wrap,
        queens_on_kings=rules.queens_on_kings,
        draw_only_when_stuck=rules.draw_only_when_stuck,
        undo_policy=_UNDO[rules.undo_policy],
        undo_limit=rules.undo_limit,
    )


def rules_overrides(msg: solitaire_pb2.SolitaireRules) -> dict[str, Any]:
    """The options a request set, by name: unset fields keep the preset's value."""
    out: dict[str, Any] = {}
    for name in (
        "decks",
        "columns",
        "column_height",
        "wrap",
        "queens_on_kings",
        "draw_only_when_stuck",
        "undo_limit",
    ):
        if msg.HasField(name):
            out[name] = getattr(msg, name)
    if msg.HasField("undo_policy"):
        if msg.undo_policy not in _UNDO_BACK:
            raise InvalidArgument("rules.undoPolicy", "choose UNLIMITED, LIMITED or NONE")
        out["undo_policy"] = _UNDO_BACK[msg.undo_policy]
    return out


def difficulty_from_proto(value: int, field: str = "difficulty") -> Difficulty | None:
    if value == solitaire_pb2.DIFFICULTY_UNSPECIFIED:
        return None
    if value not in _DIFFICULTY_BACK:
        raise InvalidArgument(field, "choose DIFFICULTY_EASY, DIFFICULTY_MEDIUM or DIFFICULTY_HARD")
    return _DIFFICULTY_BACK[value]  # type: ignore[index]


def move_to_proto(move: Move, *, hide_draw: bool = False) -> solitaire_pb2.Move:
    if isinstance(move, Draw):
        card = None if hide_draw or move.card is None else card_to_proto(move.card)
        return solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock(card=card))
    return solitaire_pb2.Move(
        play_column=solitaire_pb2.PlayColumn(column=move.column, card=card_to_proto(move.card) if move.card else None)
    )


def move_from_proto(msg: solitaire_pb2.Move, field: str = "move") -> Move:
    kind = msg.WhichOneof("kind")
    if kind == "draw_stock":
        if msg.draw_stock.HasField("card"):
            # Refusing a wrong guess without turning a card would tell the player what the next card is not.
            raise InvalidArgument(f"{field}.drawStock.card", "a draw cannot name the card it turns; send drawStock: {}")
        return Draw()
    if kind == "play_column":
        play = msg.play_column
        card = card_from_proto(play.card, f"{field}.playColumn.card") if play.HasField("card") else None
        return PlayColumn(play.column, card)
    raise InvalidArgument(field, "a move needs playColumn or drawStock")


def deal_to_proto(deal: DealRecord) -> solitaire_pb2.Deal:
    """The public face of a deal: layout and start card, never the stock order or the seed."""
    layout = deal.layout
    msg = solitaire_pb2.Deal(
        id=deal.id,
        preset=deal.preset,
        preset_version=deal.preset_version,
        rules=rules_to_proto(deal.rules),
        columns=[cards_pb2.Column(cards=[_CARD_PROTOS[c] for c in col]) for col in layout.columns],
        start_card=_CARD_PROTOS[layout.start],
        stock_count=len(layout.stock),
        commitment=deal.commitment,
        shuffle_algorithm=deal.algorithm,
        create_time=timestamp(deal.created_at),
        seed_source=_SEED_SOURCE[deal.seed_source],
    )
    if deal.pysol_number is not None:
        msg.pysol_deal_number = deal.pysol_number
    verdict = deal.verdict
    if verdict is not None and verdict.winnable is not None:
        msg.winnable = verdict.winnable
        if verdict.difficulty:
            msg.difficulty = DIFFICULTIES[Difficulty(verdict.difficulty)]
        if verdict.difficulty_score is not None:
            msg.difficulty_score = verdict.difficulty_score
    return msg


def _elapsed(snap: GameSnapshot) -> Duration:
    end = snap.game.finished_at or snap.as_of
    elapsed = Duration()
    elapsed.FromTimedelta(max(end - snap.game.created_at, end - end))
    return elapsed


_WIRE_LIMIT = 8192
"""Entries of each cache of wire bytes below; a full cache is emptied and fills again with what is in play now."""
_column_wire: dict[tuple[Card, ...], bytes] = {}
_legal_move_wire: dict[Move, bytes] = {}
_rules_wire: dict[SolitaireRules, bytes] = {}


def _keep(cache: dict[Any, bytes], key: Any, game: solitaire_pb2.Game) -> bytes:
    """The wire bytes of ``game`` (a ``Game`` holding only ``key``'s part), kept in ``cache`` for the next reply."""
    if len(cache) >= _WIRE_LIMIT:
        cache.clear()
    wire = cache[key] = game.SerializeToString()
    return wire


def _columns_wire(columns: tuple[tuple[Card, ...], ...]) -> bytes:
    """``columns`` as the wire bytes of ``Game.columns``: merged into a game, they are parsed in C at once, where
    building each card and column message (and copying them into the game) costs most of a reply. A column is
    encoded once and kept: a move changes one column, so the others come from here."""
    kept = _column_wire.get
    return b"".join(
        kept(col)
        or _keep(
            _column_wire, col, solitaire_pb2.Game(columns=[cards_pb2.Column(cards=[_CARD_PROTOS[c] for c in col])])
        )
        for col in columns
    )


def _legal_moves_wire(moves: tuple[Move, ...]) -> bytes:
    """``moves`` as the wire bytes of ``Game.legal_moves`` (a draw never naming its card), each encoded once."""
    kept = _legal_move_wire.get
    return b"".join(
        kept(m) or _keep(_legal_move_wire, m, solitaire_pb2.Game(legal_moves=[move_to_proto(m, hide_draw=True)]))
        for m in moves
    )


def _rules_part(rules: SolitaireRules) -> bytes:
    """``rules`` as the wire bytes of ``Game.rules``, encoded once per rule set."""
    return _rules_wire.get(rules) or _keep(_rules_wire, rules, solitaire_pb2.Game(rules=rules_to_proto(rules)))


def game_to_proto(snap: GameSnapshot) -> solitaire_pb2.Game:
    """The game as its player may see it: everything goes through ``view``."""
    msg = solitaire_pb2.Game()
    fill_game(msg, snap)
    return msg


def fill_game(msg: solitaire_pb2.Game, snap: GameSnapshot) -> None:
    """``game_to_proto`` into ``msg``, an empty ``Game`` (a reply's field, filled in place rather than copied in)."""
    seen = view(snap.state, snap.seed)
    game = snap.game
    rules = snap.deal.rules
    msg.id = game.id
    msg.deal_id = game.deal_id
    msg.status = _STATUS[seen.status]
    msg.score = seen.score
    msg.version = game.version
    msg.MergeFromString(_columns_wire(seen.columns) + _legal_moves_wire(seen.legal_moves) + _rules_part(rules))
    msg.pile_top.CopyFrom(_CARD_PROTOS[seen.pile_top])
    msg.pile_count = seen.pile_count
    msg.stock_count = seen.stock_count
    msg.elapsed.CopyFrom(_elapsed(snap))
    msg.create_time.CopyFrom(timestamp(game.created_at))
    msg.update_time.CopyFrom(timestamp(game.updated_at))
    msg.moves_played = seen.pile_count - 1
    msg.hints_used = game.hints_used
    msg.undos_used = game.undos_used
    msg.round_id = game.round_id or ""
    msg.hole = game.hole or 0
    msg.player_id = game.owner_id
    msg.practice = game.practice
    msg.autoplay_assists = game.autoplay_assists
    unranked = game.unranked
    msg.ranked = unranked is None
    if unranked is not None:
        msg.unranked_reason = UNRANKED[unranked]
    left = rules.undos_left(game.undos_used)
    if left is not None:
        msg.undos_left = left
    if seen.revealed_seed is not None and seen.revealed_stock is not None:
        msg.reveal.seed = seen.revealed_seed
        msg.reveal.stock.extend(_CARD_PROTOS[c] for c in seen.revealed_stock)
        verdict = snap.deal.verdict
        if verdict is not None:
            post = msg.post_mortem
            post.SetInParent()
            if verdict.winnable is not None:
                post.winnable = verdict.winnable
            if verdict.fewest_left is not None:
                post.fewest_cards_left = verdict.fewest_left
            post.winning_line.extend(move_to_proto(parse_move(code)) for code in verdict.solution)


def log_to_proto(entries: list[MoveRecord]) -> list[solitaire_pb2.LoggedMove]:
    """A game's log; its drawn cards were turned face up, so naming them reveals nothing new."""
    undone = {e.undone_by: e.seq for e in entries if e.undone_by is not None}
    out = []
    for entry in entries:
        msg = solitaire_pb2.LoggedMove(seq=entry.seq, create_time=timestamp(entry.created_at))
        if entry.code == UNDO:
            msg.undo_of = undone.get(entry.seq, 0)
        elif entry.code.startswith(AUTOPLAY):
            msg.auto_play.moves.extend(move_to_proto(m) for m in action_moves(entry.code))
        else:
            msg.move.CopyFrom(move_to_proto(action_moves(entry.code)[0]))
        if entry.undone_by is not None:
            msg.undone_by = entry.undone_by
        out.append(msg)
    return out


def round_to_proto(snap: RoundSnapshot) -> solitaire_pb2.Round:
    record = snap.round
    last = max((h.game.updated_at for h in snap.holes), default=record.created_at)
    return solitaire_pb2.Round(
        id=record.id,
        preset=record.preset,
        rules=rules_to_proto(record.rules),
        holes=record.holes,
        par=record.par,
        status=solitaire_pb2.ROUND_STATUS_FINISHED if snap.finished else solitaire_pb2.ROUND_STATUS_IN_PROGRESS,
        played=[
            solitaire_pb2.RoundHole(
                hole=h.game.hole or 0,
                game_id=h.game.id,
                deal_id=h.game.deal_id,
                status=_STATUS[h.state.status],
                score=h.state.score,
                elapsed=_elapsed(h),
            )
            for h in snap.holes
        ],
        total=snap.total,
        create_time=timestamp(record.created_at),
        update_time=timestamp(last),
        player_id=record.owner_id,
    )


def player_to_proto(player: PlayerRecord) -> players_pb2.Player:
    return players_pb2.Player(id=player.id, display_name=player.display_name, create_time=timestamp(player.created_at))


def credentials_to_proto(signed: SignedIn) -> players_pb2.Credentials:
    msg = players_pb2.Credentials(
        access_token=signed.access.token,
        token_type="Bearer",
        access_token_expire_time=timestamp(signed.access.expires_at),
    )
    if signed.refresh is not None:
        msg.refresh_token = signed.refresh_token
        msg.refresh_token_expire_time.CopyFrom(timestamp(signed.refresh.expires_at))
    return msg


def time_range(
    req: Any, names: tuple[str, str] = ("created_after", "created_before")
) -> tuple[datetime | None, datetime | None]:
    """The request's two optional time bounds (``names``: its fields), refused when out of range."""
    out: list[datetime | None] = []
    for name in names:
        if not req.HasField(name):
            out.append(None)
            continue
        try:
            out.append(getattr(req, name).ToDatetime(tzinfo=UTC))
        except (ValueError, OverflowError, OSError):
            head, *rest = name.split("_")
            field = head + "".join(w.title() for w in rest)
            raise InvalidArgument(field, f"{field} is not a valid time") from None
    return out[0], out[1]


def game_filter(req: Any) -> GameFilter:
    """The filters of a ``ListGamesRequest``."""
    after, before = time_range(req)
    status = _STATUS_BACK.get(req.status) if req.status else None
    if req.status and status is None:
        raise InvalidArgument("status", "unknown game status")
    return GameFilter(preset=req.preset or None, status=status, created_after=after, created_before=before)


def round_filter(req: Any) -> RoundFilter:
    """The filters of a ``ListRoundsRequest``."""
    after, before = time_range(req)
    finished = {
        solitaire_pb2.ROUND_STATUS_UNSPECIFIED: None,
        solitaire_pb2.ROUND_STATUS_IN_PROGRESS: False,
        solitaire_pb2.ROUND_STATUS_FINISHED: True,
    }
    if req.status not in finished:
        raise InvalidArgument("status", "unknown round status")
    return RoundFilter(
        preset=req.preset or None, finished=finished[req.status], created_after=after, created_before=before
    )
