"""One handler per RPC of ``golf.v1.PlayerService``, shared by gRPC and REST, and its rows of the RPC table."""

from __future__ import annotations

from golf.api.convert import credentials_to_proto, player_to_proto
from golf.api.errors import invalid
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
        if not req.player_id:
            raise invalid("playerId", 'playerId is required (a player\'s id, or "me")')
        player = await self.players.get_player(ctx.player, req.player_id)
        return pb.GetPlayerResponse(player=player_to_proto(player))

    def rpcs(self) -> list[Rpc]:
        """Every RPC with its REST route; path parameters are request fields in lowerCamelCase."""
        S = SERVICE
        return [
            Rpc(S, "CreateGuest", pb.CreateGuestRequest, pb.CreateGuestResponse, "POST", "/v1/players:guest",
                "Sign up a guest: a new player, an access token (an hour) and a refresh token the device keeps.",
                self.create_guest, public=True),
            Rpc(S, "RefreshToken", pb.RefreshTokenRequest, pb.RefreshTokenResponse, "POST", "/v1/tokens:refresh",
                "A new access token for the player of a refresh token (signing in again as the same player).",
                self.refresh_token, public=True),
            Rpc(S, "RevokeToken", pb.RevokeTokenRequest, pb.RevokeTokenResponse, "POST", "/v1/tokens:revoke",
                "Revoke a refresh token (sign a device out); access tokens it gave run out within the hour.",
                self.revoke_token, public=True),
            Rpc(S, "GetPlayer", pb.GetPlayerRequest, pb.GetPlayerResponse, "GET", "/v1/players/{playerId}",
                "A player's public profile; \"me\" is the caller (a portal's token makes its player on first sight).",
                self.get_player),
        ]  # fmt: skip
