"""One public RPC (GetGame, answering an empty game) for the REST app of the in-process page tests."""

from __future__ import annotations

from typing import Any

from golf.api.rpc import CallContext, Rpc
from golf.v1 import solitaire_service_pb2 as pb


async def _get_game(message: Any, ctx: CallContext) -> pb.GetGameResponse:
    return pb.GetGameResponse()


RPCS = [Rpc("golf.v1.SolitaireService", "GetGame", pb.GetGameRequest, pb.GetGameResponse, _get_game, public=True)]
