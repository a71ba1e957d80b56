"""One wire contract: the same deal played with the same moves over REST and over gRPC gives the same messages."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

from golf.v1 import solitaire_pb2
from tests.e2e.support import (
    ERROR_TABLE,
    Grpc,
    Reply,
    Rest,
    choose_move,
    draw,
    move_request,
    pb,
    play,
    scrub,
    unfit_column,
)

_VOLATILE_JSON = {"id", "dealId", "createTime", "updateTime", "elapsed"}


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in _VOLATILE_JSON}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def same(rest: Reply, grpc_reply: Reply) -> None:
    """Both succeeded with equal messages, or both failed with the same Error and matching status codes."""
    assert rest.ok == grpc_reply.ok, (rest.raw[:300], grpc_reply.raw[:300])
    if rest.ok:
        assert scrub(rest.message) == scrub(grpc_reply.message)
        # The REST body is exactly the proto3 JSON of the gRPC message (defaults written out, int64 as strings).
        expected = json_format.MessageToJson(grpc_reply.message, always_print_fields_with_no_presence=True)
        assert _strip(json.loads(rest.raw)) == _strip(json.loads(expected))
        return
    assert rest.error is not None and grpc_reply.error is not None
    assert scrub(rest.error) == scrub(grpc_reply.error)
    code, status = ERROR_TABLE[rest.error.reason]
    assert (rest.http_status, grpc_reply.grpc_code) == (status, code)


def both(rest: Rest, grpc_client: Grpc, call: str, *args: Any) -> tuple[Any, Any]:
    a, b = getattr(rest, call)(*args), getattr(grpc_client, call)(*args)
    same(a, b)
    return a.message, b.message


def _for_game(req: Message, game: solitaire_pb2.Game) -> Any:
    out = type(req)()
    out.CopyFrom(req)
    out.game_id = game.id  # type: ignore[attr-defined]
    return out


@pytest.mark.parametrize(
    "deal_request",
    [
        pb.CreateDealRequest(pysol_deal_number=1),
        pb.CreateDealRequest(preset="two-decks", seed="parity-two-decks"),
        pb.CreateDealRequest(preset="wrap", seed="parity-wrap", rules=solitaire_pb2.SolitaireRules(decks=1)),
    ],
    ids=["pysol-1", "two-decks-seed", "wrap-seed"],
)
def test_whole_game_is_the_same_over_rest_and_grpc(rest: Rest, grpc_client: Grpc, deal_request: Any) -> None:
    deal_r, deal_g = both(rest, grpc_client, "create_deal", deal_request)
    got_r, got_g = rest.get_deal(deal_r.deal.id), grpc_client.get_deal(deal_g.deal.id)
    same(got_r, got_g)
    game_r = rest.create_game(pb.CreateGameRequest(deal_id=deal_r.deal.id)).expect_ok().game
    game_g = grpc_client.create_game(pb.CreateGameRequest(deal_id=deal_g.deal.id)).expect_ok().game
    assert scrub(game_r) == scrub(game_g)

    def play_both(req: pb.PlayMoveRequest) -> tuple[Reply, Reply]:
        a, b = rest.play_move(_for_game(req, game_r)), grpc_client.play_move(_for_game(req, game_g))
        same(a, b)
        return a, b

    step = 0
    while game_r.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS:
        step += 1
        assert step < 500
        move = choose_move(game_r)
        assert move == choose_move(game_g)
        req = move_request(game_r, move, expected=game_r.version)
        a, b = play_both(req)
        assert a.ok and not a.message.replayed
        if step % 4 == 0:
            play_both(req)  # a retry: replayed on both
        if step % 5 == 0:
            play_both(move_request(game_r, draw(), expected=game_r.version))  # stale now
        game_r, game_g = a.message.game, b.message.game
        if step % 3 == 0 and game_r.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS:
            col = unfit_column(game_r)
            if col is not None:
                play_both(move_request(game_r, play(col)))
            play_both(move_request(game_r, play(99)))
        if step % 7 == 0:
            same(rest.get_game(game_r.id), grpc_client.get_game(game_g.id))

    assert game_r.HasField("reveal") and game_g.HasField("reveal")
    same(rest.get_game(game_r.id), grpc_client.get_game(game_g.id))
    # Reading a finished game waits for the solver's verdict: both transports show the same one.
    final_r = rest.get_game(game_r.id).expect_ok().game
    final_g = grpc_client.get_game(game_g.id).expect_ok().game
    assert final_r.HasField("post_mortem") and final_r.post_mortem == final_g.post_mortem
    play_both(move_request(game_r, draw()))  # GAME_OVER on both
    # The finished games, as listed: each listing has the game; the two entries agree.
    listed_r = {g.id: g for g in rest.list_games(page_size=100).expect_ok().games}
    listed_g = {g.id: g for g in grpc_client.list_games(page_size=100).expect_ok().games}
    assert scrub(listed_r[game_r.id]) == scrub(listed_g[game_g.id])
    assert scrub(listed_r[game_r.id]) == scrub(game_r)
