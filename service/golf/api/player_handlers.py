"""One handler per RPC of ``golf.v1.PlayerService``, shared by gRPC and REST, and its rows of the RPC table."""

from __future__ import annotations

from golf.api.convert import credentials_to_proto, player_to_proto
from golf.api.rpc import CallContext, Rpc
from golf.app.players import PlayerService
from golf.v1 import player_service_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["PlayerService"].full_name


class PlayerHandlers:
    """Protobuf in, protobuf out. Domain errors propagate; the transports turn them into replies."""

    def __init__(self, players: PlayerService) -> None:
        self.players = players

    async def create_guest(self, req: pb.CreateGuestRequest, ctx: CallContext) -> pb.CreateGuestResponse:
        signed = await self.players.create_guest(req.display_name, ctx.address)
        return pb.CreateGuestResponse(player=player_to_proto(signed.player), credentials=credentials_to_proto(signed))

    async def refresh_token(self, req: pb.RefreshTokenRequest, ctx: CallContext) -> pb.RefreshTokenResponse:
        signed = await self.players.refresh(req.refresh_token, ctx.address)
        return pb.RefreshTokenResponse(player=player_to_proto(signed.player), credentials=credentials_to_proto(signed))

    async def revoke_token(self, req: pb.RevokeTokenRequest, ctx: CallContext) -> pb.RevokeTokenResponse:
        await self.players.revoke(req.refresh_token, ctx.address)
        return pb.RevokeTokenResponse()

    async def get_player(self, req: pb.GetPlayerRequest, ctx: CallContext) -> pb.GetPlayerResponse:
        player = await self.players.get_player(ctx.player, req.player_id)
        return pb.GetPlayerResponse(player=player_to_proto(player))

    async def set_display_name(self, req: pb.SetDisplayNameRequest, ctx: CallContext) -> pb.SetDisplayNameResponse:
        player = await self.players.set_display_name(ctx.player, req.player_id, req.display_name)
        return pb.SetDisplayNameResponse(player=player_to_proto(player))

    def rpcs(self) -> list[Rpc]:
        """Every RPC of the service with its handler (routes and summaries are in the contract)."""
        S = SERVICE
        return [
            Rpc(S, "CreateGuest", pb.CreateGuestRequest, pb.CreateGuestResponse, self.create_guest, public=True),
            Rpc(S, "RefreshToken", pb.RefreshTokenRequest, pb.RefreshTokenResponse, self.refresh_token, public=True),
            Rpc(S, "RevokeToken", pb.RevokeTokenRequest, pb.RevokeTokenResponse, self.revoke_token, public=True),
            Rpc(S, "GetPlayer", pb.GetPlayerRequest, pb.GetPlayerResponse, self.get_player),
            Rpc(S, "SetDisplayName", pb.SetDisplayNameRequest, pb.SetDisplayNameResponse, self.set_display_name),
        ]
