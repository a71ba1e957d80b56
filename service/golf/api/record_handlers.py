"""One handler per query RPC of ``golf.v1.RecordService`` (histories, leaderboards, deal statistics), shared by
gRPC and REST, and their rows of the RPC table. Replays and exports have their own modules."""

from __future__ import annotations

from google.protobuf.duration_pb2 import Duration

from golf.api.convert import DIFFICULTIES, UNRANKED, time_range, timestamp
from golf.api.rpc import CallContext, Rpc
from golf.app.boards import Period, is_rating_board
from golf.app.history import Family, HistoryFilter, PlayedRecord, RecordKind, Result
from golf.app.record_queries import BoardKind, BoardQuery, DealReport, Ranked, RecordQueries
from golf.engine.solitaire.difficulty import Difficulty
from golf.v1 import record_service_pb2 as pb
from golf.v1 import solitaire_pb2

SERVICE = pb.DESCRIPTOR.services_by_name["RecordService"].full_name

KINDS = {
    RecordKind.GAME: pb.RECORD_KIND_SOLITAIRE_GAME,
    RecordKind.ROUND: pb.RECORD_KIND_SOLITAIRE_ROUND,
    RecordKind.MATCH: pb.RECORD_KIND_CARD_GOLF_MATCH,
}
RESULTS = {Result.WON: pb.RECORD_RESULT_WON, Result.LOST: pb.RECORD_RESULT_LOST, Result.DRAWN: pb.RECORD_RESULT_DRAWN}
_RESULTS_BACK = {v: k for k, v in RESULTS.items()}
_NOT_UNRANKED = solitaire_pb2.UNRANKED_REASON_UNSPECIFIED
FAMILIES = {pb.GAME_FAMILY_SOLITAIRE: Family.SOLITAIRE, pb.GAME_FAMILY_CARD_GOLF: Family.CARD_GOLF}
_BOARDS = {
    pb.LEADERBOARD_KIND_DEAL: BoardKind.DEAL,
    pb.LEADERBOARD_KIND_DAILY_DEAL: BoardKind.DAILY_DEAL,
    pb.LEADERBOARD_KIND_ROUNDS: BoardKind.ROUNDS,
    pb.LEADERBOARD_KIND_MATCH_WINS: BoardKind.MATCH_WINS,
    pb.LEADERBOARD_KIND_POINTS_PER_HOLE: BoardKind.POINTS_PER_HOLE,
    pb.LEADERBOARD_KIND_RATING: BoardKind.RATING,
}
_PERIODS = {
    pb.LEADERBOARD_PERIOD_UNSPECIFIED: Period.ALL_TIME,
    pb.LEADERBOARD_PERIOD_ALL_TIME: Period.ALL_TIME,
    pb.LEADERBOARD_PERIOD_WEEK: Period.WEEK,
    pb.LEADERBOARD_PERIOD_MONTH: Period.MONTH,
}


def _millis(ms: int) -> Duration:
    out = Duration()
    out.FromMilliseconds(ms)
    return out


def history_entry_to_proto(record: PlayedRecord) -> pb.HistoryEntry:
    return pb.HistoryEntry(
        kind=KINDS[record.kind],
        record_id=record.record_id,
        preset=record.preset,
        result=RESULTS[record.result],
        score=record.score,
        par=record.par or 0,
        place=record.place or 0,
        players=record.players or 0,
        holes=record.holes,
        moves=record.moves,
        hints=record.hints,
        undos=record.undos,
        time=_millis(record.duration_ms),
        start_time=timestamp(record.started_at),
        finish_time=timestamp(record.finished_at),
        deal_id=record.deal_id or "",
        unrated=not record.rated,
        unranked_reason=_NOT_UNRANKED if record.unranked is None else UNRANKED[record.unranked],
    )


def history_filter(req: pb.ListHistoryRequest) -> HistoryFilter:
    after, before = time_range(req, ("finished_after", "finished_before"))
    return HistoryFilter(
        family=FAMILIES.get(req.family),
        preset=req.preset or None,
        result=_RESULTS_BACK.get(req.result),
        finished_after=after,
        finished_before=before,
    )


def board_entry_to_proto(ranked: Ranked) -> pb.LeaderboardEntry:
    e = ranked.entry
    per_hole = e.points / e.holes if e.holes else 0.0
    return pb.LeaderboardEntry(
        rank=ranked.rank,
        player_id=e.player_id,
        display_name=ranked.display_name,
        score=e.score,
        time=_millis(e.duration_ms),
        assists=e.assists,
        record_id=e.record_id or "",
        finish_time=timestamp(e.reached_at),
        matches=e.matches,
        wins=e.wins,
        holes=e.holes,
        points=e.points,
        points_per_hole=per_hole,
        rating=e.mu - 3 * e.sigma if is_rating_board(e.board) else 0.0,
        mu=e.mu,
        sigma=e.sigma,
    )


def deal_stats_to_proto(report: DealReport) -> pb.DealStats:
    stats, verdict = report.stats, report.verdict
    msg = pb.DealStats(
        deal_id=stats.deal_id,
        preset=stats.preset,
        plays=stats.plays,
        wins=stats.wins,
        win_rate=stats.wins / stats.plays if stats.plays else 0.0,
        average_score=stats.score_sum / stats.plays if stats.plays else 0.0,
        average_time=_millis(stats.duration_ms_sum // stats.plays if stats.plays else 0),
    )
    if verdict is not None:
        if verdict.winnable is not None:
            msg.winnable = verdict.winnable
        if verdict.difficulty:
            msg.difficulty = DIFFICULTIES[Difficulty(verdict.difficulty)]
        msg.difficulty_score = verdict.difficulty_score or 0
    return msg


class RecordHandlers:
    """Protobuf in, protobuf out. Domain errors propagate; the transports turn them into replies."""

    def __init__(self, queries: RecordQueries) -> None:
        self.queries = queries

    async def list_history(self, req: pb.ListHistoryRequest, ctx: CallContext) -> pb.ListHistoryResponse:
        rows, token = await self.queries.history(
            ctx.player, req.player_id, history_filter(req), req.page_size, req.page_token
        )
        return pb.ListHistoryResponse(entries=[history_entry_to_proto(r) for r in rows], next_page_token=token)

    async def get_leaderboard(self, req: pb.GetLeaderboardRequest, ctx: CallContext) -> pb.GetLeaderboardResponse:
        query = BoardQuery(
            kind=_BOARDS[req.kind],
            deal_id=req.deal_id,
            day=req.day,
            preset=req.preset,
            holes=req.holes,
            period=_PERIODS[req.period],
            min_holes=req.min_holes,
            portal_only=req.scope == pb.LEADERBOARD_SCOPE_PORTAL,
            page_size=req.page_size,
            page_token=req.page_token,
        )
        page = await self.queries.leaderboard(ctx.player, query)
        out = pb.GetLeaderboardResponse(
            entries=[board_entry_to_proto(r) for r in page.entries],
            next_page_token=page.next_page_token,
            deal_id=page.deal_id,
        )
        if page.caller is not None:
            out.caller_entry.CopyFrom(board_entry_to_proto(page.caller))
        return out

    async def get_deal_stats(self, req: pb.GetDealStatsRequest, ctx: CallContext) -> pb.GetDealStatsResponse:
        report = await self.queries.deal_stats(req.deal_id)
        return pb.GetDealStatsResponse(stats=deal_stats_to_proto(report))

    async def list_deal_stats(self, req: pb.ListDealStatsRequest, ctx: CallContext) -> pb.ListDealStatsResponse:
        reports, token = await self.queries.list_deal_stats(
            req.preset, req.order != pb.DEAL_STATS_ORDER_EASIEST, req.min_plays, req.page_size, req.page_token
        )
        return pb.ListDealStatsResponse(deals=[deal_stats_to_proto(r) for r in reports], next_page_token=token)

    def rpcs(self) -> list[Rpc]:
        """The query RPCs of the service with their handlers (routes and summaries are in the contract)."""
        S = SERVICE
        return [
            Rpc(S, "ListHistory", pb.ListHistoryRequest, pb.ListHistoryResponse, self.list_history),
            Rpc(S, "GetLeaderboard", pb.GetLeaderboardRequest, pb.GetLeaderboardResponse, self.get_leaderboard),
            Rpc(S, "GetDealStats", pb.GetDealStatsRequest, pb.GetDealStatsResponse, self.get_deal_stats),
            Rpc(S, "ListDealStats", pb.ListDealStatsRequest, pb.ListDealStatsResponse, self.list_deal_stats),
        ]
