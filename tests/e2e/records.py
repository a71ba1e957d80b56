"""Helpers of the e2e tier for records: ``golf.v1.RecordService`` (and the display name of ``PlayerService``) over
either transport with one interface."""

from __future__ import annotations

from golf.v1 import player_service_pb2 as ppb
from golf.v1 import player_service_pb2_grpc, record_service_pb2_grpc
from golf.v1 import record_service_pb2 as rpb
from tests.e2e.support import Client, Reply, ServiceCalls

SERVICE = rpb.DESCRIPTOR.services_by_name["RecordService"]
PLAYERS = ppb.DESCRIPTOR.services_by_name["PlayerService"]


class Records(ServiceCalls):
    """The RecordService RPCs for ``client``'s player, over ``client``'s transport."""

    def __init__(self, client: Client) -> None:
        super().__init__(client, SERVICE, rpb, record_service_pb2_grpc.RecordServiceStub)
        self.players = ServiceCalls(client, PLAYERS, ppb, player_service_pb2_grpc.PlayerServiceStub)

    def history(self, player_id: str = "me", **fields: object) -> Reply:
        return self.call("ListHistory", rpb.ListHistoryRequest(player_id=player_id, **fields))  # type: ignore[arg-type]

    def board(self, **fields: object) -> Reply:
        return self.call("GetLeaderboard", rpb.GetLeaderboardRequest(**fields))  # type: ignore[arg-type]

    def rename(self, name: str, player_id: str = "me") -> Reply:
        return self.players.call("SetDisplayName", ppb.SetDisplayNameRequest(player_id=player_id, display_name=name))

    def replay(self, record_id: str, kind: int, first: int = 0, most: int = 0) -> Reply:
        req = rpb.GetReplayRequest(record_id=record_id, kind=kind, first_step=first, max_steps=most)  # type: ignore[arg-type]
        return self.call("GetReplay", req)

    def whole(self, record_id: str, kind: int, page: int = 500) -> list[rpb.ReplayStep]:
        """Every step of the replay, ``page`` at a time."""
        steps: list[rpb.ReplayStep] = []
        while True:
            got = self.replay(record_id, kind, len(steps), page).expect_ok()
            steps += got.steps
            if len(steps) >= got.total_steps:
                assert len(steps) == got.total_steps and [s.index for s in steps] == list(range(len(steps)))
                return steps
