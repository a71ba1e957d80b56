"""Hidden information, checked from the client side: every payload a client received scanned for the stock cards it
had not seen turned and for the seed."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

from google.protobuf.message import Message

from golf.v1 import solitaire_pb2
from tests.e2e.support import (
    Reply,
    pb,
)

IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS
# A card code standing alone in text (not inside an id, an enum name or a hex digest).
CODE = re.compile(r"(?<![A-Za-z0-9_])([A2-9TJQK][CDHS])(?![A-Za-z0-9_])")


@dataclass
class Seen:
    """One payload the client received, with how many stock cards the client had seen turned by then."""

    reply: Reply
    turned: int
    over: bool


def _games(message: Message, game_id: str) -> list[solitaire_pb2.Game]:
    """Every ``Game`` of ``game_id`` anywhere in ``message``."""
    found = []
    if isinstance(message, solitaire_pb2.Game):
        return [message] if message.id == game_id else []
    for fd, value in message.ListFields():
        if fd.message_type is None:
            continue
        for item in value if fd.is_repeated else [value]:
            found += _games(item, game_id)
    return found


def _own_text(reply: Reply, game_id: str) -> str:
    """The text of a payload that concerns this game: a listing also holds other games, of other deals."""
    if not isinstance(reply.message, pb.ListGamesResponse):
        return reply.raw
    body = json.loads(reply.raw)
    games = body.pop("games")
    return json.dumps([body, *(g for g in games if g["id"] == game_id)])


def check_payload(
    seen: Seen,
    game_id: str,
    columns: list[list[str]],
    start: str,
    stock: list[str],
    seed: str,
) -> None:
    """What one payload may show: the deal's columns and start card, and the stock cards turned so far."""
    allowed = Counter([c for col in columns for c in col] + [start] + stock[: seen.turned])
    where = f"{seen.reply.transport} payload (turned {seen.turned}): {seen.reply.raw[:400]}"
    if not seen.over:
        # Text anywhere (messages, metadata) but other games of a listing (the player's earlier game of the same
        # client-seeded deal, finished, shows its seed): the seed and unseen codes must not appear at all.
        own = _own_text(seen.reply, game_id)
        assert seed not in own, f"the seed leaked in {where}"
        for code in set(CODE.findall(own)):
            assert allowed[code] > 0, f"hidden stock card {code} in {where}"
    message = seen.reply.message if seen.reply.ok else seen.reply.error
    for game in _games(message, game_id):
        if game.status == IN_PROGRESS:
            assert not game.HasField("reveal"), f"reveal before the end in {where}"
        # Positions: each column is what is left of the dealt column, the pile top was dealt or turned.
        for i, col in enumerate(game.columns):
            assert [c.code for c in col.cards] == columns[i][: len(col.cards)], where
        visible = Counter([c.code for col in game.columns for c in col.cards] + [game.pile_top.code])
        # Multiplicities (two decks hold every card twice): no more copies than the player may have seen.
        assert not visible - allowed, f"cards {visible - allowed} beyond what was turned in {where}"
        # The pile top is either the start card, a column card or the last stock card turned.
        assert game.pile_top.code in allowed, where
        fronts = {i: col.cards[-1].code for i, col in enumerate(game.columns) if col.cards}
        for move in game.legal_moves:
            if move.WhichOneof("kind") == "draw_stock":
                assert not move.draw_stock.HasField("card"), f"a legal draw names its card in {where}"
            else:
                assert move.play_column.card.code == fronts[move.play_column.column], where
        if game.status != IN_PROGRESS:
            assert game.reveal.seed == seed
        assert game.stock_count >= len(stock) - seen.turned, where
    if isinstance(message, pb.PlayMoveResponse) and message.move.WhichOneof("kind") == "draw_stock":
        drawn = message.move.draw_stock.card.code
        assert allowed[drawn] > 0 and drawn == message.game.pile_top.code, where
    if isinstance(message, (pb.CreateDealResponse, pb.GetDealResponse)):
        deal = message.deal
        assert [[c.code for c in col.cards] for col in deal.columns] == columns
        assert deal.start_card.code == start and deal.stock_count == len(stock)
