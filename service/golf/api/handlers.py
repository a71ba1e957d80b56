"""One handler per RPC, shared by gRPC and REST, and the table of RPCs both transports are built from."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from golf.api.convert import deal_to_proto, game_to_proto, move_from_proto, move_to_proto, rules_overrides
from golf.api.errors import invalid
from golf.app.solitaire import SolitaireService
from golf.v1 import solitaire_service_pb2 as pb

Handler = Callable[[Any], Awaitable[Message]]


@dataclass(frozen=True)
class Rpc:
    """An RPC of ``golf.v1.SolitaireService`` and its REST route."""

    name: str
    request: type[Message]
    response: type[Message]
    http_method: str
    http_path: str
    summary: str
    handler: Handler


def _require(value: str, field: str) -> str:
    if not value:
        raise invalid(field, f"{field} is required")
    return value


class SolitaireHandlers:
    """Protobuf in, protobuf out. Domain errors propagate; the transports turn them into replies."""

    def __init__(self, service: SolitaireService) -> None:
        self.service = service

    async def create_deal(self, req: pb.CreateDealRequest) -> pb.CreateDealResponse:
        deal = await self.service.create_deal(
            req.preset,
            rules_overrides(req.rules),
            req.seed if req.HasField("seed") else None,
            req.pysol_deal_number if req.HasField("pysol_deal_number") else None,
        )
        return pb.CreateDealResponse(deal=deal_to_proto(deal))

    async def get_deal(self, req: pb.GetDealRequest) -> pb.GetDealResponse:
        deal = await self.service.get_deal(_require(req.deal_id, "dealId"))
        return pb.GetDealResponse(deal=deal_to_proto(deal))

    async def create_game(self, req: pb.CreateGameRequest) -> pb.CreateGameResponse:
        snap = await self.service.create_game(req.deal_id, req.preset, rules_overrides(req.rules))
        return pb.CreateGameResponse(game=game_to_proto(snap))

    async def get_game(self, req: pb.GetGameRequest) -> pb.GetGameResponse:
        snap = await self.service.get_game(_require(req.game_id, "gameId"))
        return pb.GetGameResponse(game=game_to_proto(snap))

    async def list_games(self, req: pb.ListGamesRequest) -> pb.ListGamesResponse:
        snaps, token = await self.service.list_games(req.page_size, req.page_token)
        return pb.ListGamesResponse(games=[game_to_proto(s) for s in snaps], next_page_token=token)

    async def play_move(self, req: pb.PlayMoveRequest) -> pb.PlayMoveResponse:
        if not req.HasField("move"):
            raise invalid("move", "move is required")
        snap = await self.service.play_move(
            _require(req.game_id, "gameId"),
            move_from_proto(req.move),
            req.idempotency_key,
            req.expected_version if req.HasField("expected_version") else None,
        )
        made = move_to_proto(snap.made) if snap.made is not None else None
        return pb.PlayMoveResponse(game=game_to_proto(snap), move=made, replayed=snap.replayed)

    def rpcs(self) -> list[Rpc]:
        """Every RPC with its REST route; path parameters are request fields in lowerCamelCase."""
        return [
            Rpc("CreateDeal", pb.CreateDealRequest, pb.CreateDealResponse, "POST", "/v1/deals",
                "Deal a new layout from a preset, rule options, a seed or a PySolFC deal number.",
                self.create_deal),
            Rpc("GetDeal", pb.GetDealRequest, pb.GetDealResponse, "GET", "/v1/deals/{dealId}",
                "A deal's public layout and its commitment.", self.get_deal),
            Rpc("CreateGame", pb.CreateGameRequest, pb.CreateGameResponse, "POST", "/v1/games",
                "Start a game on a deal, or on a new deal.", self.create_game),
            Rpc("GetGame", pb.GetGameRequest, pb.GetGameResponse, "GET", "/v1/games/{gameId}",
                "The game as its player sees it, with the legal moves.", self.get_game),
            Rpc("ListGames", pb.ListGamesRequest, pb.ListGamesResponse, "GET", "/v1/games",
                "Games, newest first, a page at a time.", self.list_games),
            Rpc("PlayMove", pb.PlayMoveRequest, pb.PlayMoveResponse, "POST", "/v1/games/{gameId}/moves",
                "Play one move; safe to retry with the same idempotency key.", self.play_move),
        ]  # fmt: skip
