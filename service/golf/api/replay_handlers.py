"""The handler of ``golf.v1.RecordService.GetReplay``, shared by gRPC and REST, and its row of the RPC table.

Each step's state reaches the wire through the conversions every other reply uses (``game_to_proto``,
``table_to_proto``), over the views the replay use case made: a spectator's, until the last step's reveal."""

from __future__ import annotations

from golf.api.convert import game_to_proto, timestamp
from golf.api.rpc import CallContext, Rpc
from golf.api.table_convert import table_to_proto
from golf.app.errors import InvalidArgument
from golf.app.history import RecordKind
from golf.app.records import GameSnapshot
from golf.app.replays import ReplayService
from golf.v1 import record_service_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["RecordService"].full_name

_KINDS: dict[int, RecordKind] = {
    pb.RECORD_KIND_SOLITAIRE_GAME: RecordKind.GAME,
    pb.RECORD_KIND_SOLITAIRE_ROUND: RecordKind.ROUND,
    pb.RECORD_KIND_CARD_GOLF_MATCH: RecordKind.MATCH,
}


class ReplayHandlers:
    """Protobuf in, protobuf out. Requests arrive checked against the contract's field rules; domain errors
    propagate, and the transports turn them into replies."""

    def __init__(self, replays: ReplayService) -> None:
        self.replays = replays

    async def get_replay(self, req: pb.GetReplayRequest, ctx: CallContext) -> pb.GetReplayResponse:
        kind = _KINDS.get(req.kind)
        if kind is None:
            raise InvalidArgument("kind", "choose RECORD_KIND_SOLITAIRE_GAME, _SOLITAIRE_ROUND or _CARD_GOLF_MATCH")
        page = await self.replays.get_replay(ctx.player, kind, req.record_id, req.first_step, req.max_steps)
        resp = pb.GetReplayResponse(total_steps=page.total)
        for step in page.steps:
            msg = resp.steps.add(index=step.index, hole=step.hole)
            msg.time.CopyFrom(timestamp(step.time))
            if isinstance(step.state, GameSnapshot):
                msg.game.CopyFrom(game_to_proto(step.state))
            else:
                table_to_proto(step.state, into=msg.table)
        return resp

    def rpcs(self) -> list[Rpc]:
        """The RPC of the service this module serves, with its handler (route and summary are in the contract)."""
        return [Rpc(SERVICE, "GetReplay", pb.GetReplayRequest, pb.GetReplayResponse, self.get_replay)]
