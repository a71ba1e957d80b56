"""One handler per RPC of ``golf.v1.SolitaireService``, shared by gRPC and REST, and its rows of the RPC table."""

from __future__ import annotations

from typing import Any

from golf.api.convert import (
    deal_to_proto,
    difficulty_from_proto,
    fill_game,
    game_filter,
    game_to_proto,
    log_to_proto,
    move_from_proto,
    move_to_proto,
    round_filter,
    round_to_proto,
    rules_overrides,
)
from golf.api.rpc import CallContext, Rpc
from golf.app.dealing import Dealer
from golf.app.rounds import RoundService
from golf.app.solitaire import SolitaireService
from golf.v1 import solitaire_service_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["SolitaireService"].full_name


def _optional_version(req: Any) -> int | None:
    return int(req.expected_version) if req.HasField("expected_version") else None


class SolitaireHandlers:
    """Protobuf in, protobuf out. Requests arrive checked against the contract's field rules (golf.api.validation);
    domain errors propagate, and the transports turn them into replies."""

    def __init__(self, games: SolitaireService, rounds: RoundService, dealer: Dealer) -> None:
        self.games = games
        self.rounds = rounds
        self.dealer = dealer

    async def create_deal(self, req: pb.CreateDealRequest, ctx: CallContext) -> pb.CreateDealResponse:
        deal = await self.games.create_deal(
            ctx.player,
            req.preset,
            rules_overrides(req.rules),
            req.seed if req.HasField("seed") else None,
            req.pysol_deal_number if req.HasField("pysol_deal_number") else None,
            winnable_only=req.winnable_only,
            difficulty=difficulty_from_proto(req.difficulty),
        )
        return pb.CreateDealResponse(deal=deal_to_proto(deal))

    async def get_deal(self, req: pb.GetDealRequest, ctx: CallContext) -> pb.GetDealResponse:
        deal = await self.games.get_deal(req.deal_id)
        return pb.GetDealResponse(deal=deal_to_proto(deal))

    async def create_game(self, req: pb.CreateGameRequest, ctx: CallContext) -> pb.CreateGameResponse:
        snap = await self.games.create_game(
            ctx.player,
            req.deal_id,
            req.preset,
            rules_overrides(req.rules),
            winnable_only=req.winnable_only if req.HasField("winnable_only") else True,
            difficulty=difficulty_from_proto(req.difficulty),
        )
        reply = pb.CreateGameResponse()
        fill_game(reply.game, snap)
        return reply

    async def get_game(self, req: pb.GetGameRequest, ctx: CallContext) -> pb.GetGameResponse:
        snap = await self.games.get_game(ctx.player, req.game_id)
        reply = pb.GetGameResponse()
        fill_game(reply.game, snap)
        return reply

    async def list_games(self, req: pb.ListGamesRequest, ctx: CallContext) -> pb.ListGamesResponse:
        snaps, token = await self.games.list_games(ctx.player, req.page_size, req.page_token, game_filter(req))
        return pb.ListGamesResponse(games=[game_to_proto(s) for s in snaps], next_page_token=token)

    async def play_move(self, req: pb.PlayMoveRequest, ctx: CallContext) -> pb.PlayMoveResponse:
        snap = await self.games.play_move(
            ctx.player,
            req.game_id,
            move_from_proto(req.move),
            req.idempotency_key,
            _optional_version(req),
        )
        # The game is filled in place: building it apart and passing it in would copy every card once more.
        reply = pb.PlayMoveResponse(move=move_to_proto(snap.made[0]) if snap.made else None, replayed=snap.replayed)
        fill_game(reply.game, snap)
        return reply

    async def list_moves(self, req: pb.ListMovesRequest, ctx: CallContext) -> pb.ListMovesResponse:
        entries = await self.games.list_moves(ctx.player, req.game_id)
        return pb.ListMovesResponse(moves=log_to_proto(entries))

    async def hint(self, req: pb.HintRequest, ctx: CallContext) -> pb.HintResponse:
        move, snap, replayed = await self.games.hint(ctx.player, req.game_id, req.idempotency_key)
        return pb.HintResponse(move=move_to_proto(move, hide_draw=True), game=game_to_proto(snap), replayed=replayed)

    async def undo(self, req: pb.UndoRequest, ctx: CallContext) -> pb.UndoResponse:
        snap = await self.games.undo(ctx.player, req.game_id, req.idempotency_key, _optional_version(req))
        reply = pb.UndoResponse(replayed=snap.replayed)
        fill_game(reply.game, snap)
        return reply

    async def auto_play(self, req: pb.AutoPlayRequest, ctx: CallContext) -> pb.AutoPlayResponse:
        snap = await self.games.autoplay(ctx.player, req.game_id, req.idempotency_key, _optional_version(req))
        return pb.AutoPlayResponse(
            game=game_to_proto(snap), moves=[move_to_proto(m) for m in snap.made], replayed=snap.replayed
        )

    async def create_round(self, req: pb.CreateRoundRequest, ctx: CallContext) -> pb.CreateRoundResponse:
        snap, game = await self.rounds.create_round(
            ctx.player,
            req.preset,
            rules_overrides(req.rules),
            req.holes,
            req.par if req.HasField("par") else None,
            req.winnable_only if req.HasField("winnable_only") else True,
            difficulty_from_proto(req.difficulty),
        )
        return pb.CreateRoundResponse(round=round_to_proto(snap), game=game_to_proto(game))

    async def get_round(self, req: pb.GetRoundRequest, ctx: CallContext) -> pb.GetRoundResponse:
        snap = await self.rounds.get_round(ctx.player, req.round_id)
        return pb.GetRoundResponse(round=round_to_proto(snap))

    async def start_next_hole(self, req: pb.StartNextHoleRequest, ctx: CallContext) -> pb.StartNextHoleResponse:
        snap, game = await self.rounds.start_next_hole(ctx.player, req.round_id)
        return pb.StartNextHoleResponse(round=round_to_proto(snap), game=game_to_proto(game))

    async def get_daily_deal(self, req: pb.GetDailyDealRequest, ctx: CallContext) -> pb.GetDailyDealResponse:
        deal = await self.dealer.daily(req.date, req.preset, ctx.player.player_id)
        return pb.GetDailyDealResponse(deal=deal_to_proto(deal))

    async def list_rounds(self, req: pb.ListRoundsRequest, ctx: CallContext) -> pb.ListRoundsResponse:
        snaps, token = await self.rounds.list_rounds(ctx.player, req.page_size, req.page_token, round_filter(req))
        return pb.ListRoundsResponse(rounds=[round_to_proto(s) for s in snaps], next_page_token=token)

    def rpcs(self) -> list[Rpc]:
        """Every RPC of the service with its handler (routes and summaries are in the contract)."""
        S = SERVICE
        return [
            Rpc(S, "CreateDeal", pb.CreateDealRequest, pb.CreateDealResponse, self.create_deal),
            Rpc(S, "GetDeal", pb.GetDealRequest, pb.GetDealResponse, self.get_deal),
            Rpc(S, "CreateGame", pb.CreateGameRequest, pb.CreateGameResponse, self.create_game),
            Rpc(S, "GetGame", pb.GetGameRequest, pb.GetGameResponse, self.get_game),
            Rpc(S, "ListGames", pb.ListGamesRequest, pb.ListGamesResponse, self.list_games),
            Rpc(S, "PlayMove", pb.PlayMoveRequest, pb.PlayMoveResponse, self.play_move),
            Rpc(S, "ListMoves", pb.ListMovesRequest, pb.ListMovesResponse, self.list_moves),
            Rpc(S, "Hint", pb.HintRequest, pb.HintResponse, self.hint),
            Rpc(S, "Undo", pb.UndoRequest, pb.UndoResponse, self.undo),
            Rpc(S, "AutoPlay", pb.AutoPlayRequest, pb.AutoPlayResponse, self.auto_play),
            Rpc(S, "CreateRound", pb.CreateRoundRequest, pb.CreateRoundResponse, self.create_round),
            Rpc(S, "GetRound", pb.GetRoundRequest, pb.GetRoundResponse, self.get_round),
            Rpc(S, "StartNextHole", pb.StartNextHoleRequest, pb.StartNextHoleResponse, self.start_next_hole),
            Rpc(S, "GetDailyDeal", pb.GetDailyDealRequest, pb.GetDailyDealResponse, self.get_daily_deal),
            Rpc(S, "ListRounds", pb.ListRoundsRequest, pb.ListRoundsResponse, self.list_rounds),
        ]
