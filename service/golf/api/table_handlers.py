"""One handler per unary RPC of ``golf.v1.TableService``, shared by gRPC and REST, and its rows of the RPC table.
(``WatchTable``, the server stream, is ``golf.api.table_watch``'s.)"""

from __future__ import annotations

from typing import Any

from google.protobuf.duration_pb2 import Duration

from golf.api.rpc import CallContext, Rpc
from golf.api.table_convert import (
    BOT_LEVELS,
    BOT_PERSONALITIES,
    bot_from_proto,
    missed_action_from_proto,
    move_from_proto,
    table_to_proto,
)
from golf.api.table_rules_convert import house_rule_rules, rules_overrides, rules_to_proto
from golf.app.errors import InvalidArgument
from golf.app.tables.options import DEFAULT_PRESET
from golf.app.tables.service import TableService
from golf.engine.cardgolf.bots.catalogue import LEVELS, PERSONALITIES
from golf.engine.cardgolf.house_rules import HOUSE_RULES, conflicts_of
from golf.engine.cardgolf.presets import DESCRIPTIONS, PRESETS, preset_version
from golf.v1 import table_service_pb2 as pb

SERVICE = pb.DESCRIPTOR.services_by_name["TableService"].full_name
DEFAULT_SEATS = 4
"""Seats of a table the request does not size (the contract's default)."""
DEFAULT_MISSED_TURNS_LIMIT = 3
"""Missed turns in a row before the table's action, when a turn clock does not say (the contract's default)."""


def _optional_int(req: Any, name: str) -> int | None:
    return int(getattr(req, name)) if req.HasField(name) else None


def _seconds(duration: Duration) -> float:
    return duration.seconds + duration.nanos / 1e9


class TableHandlers:
    """Protobuf in, protobuf out. Requests arrive checked against the contract's field rules (golf.api.validation);
    domain errors propagate, and the transports turn them into replies."""

    def __init__(self, tables: TableService) -> None:
        self.tables = tables

    async def create_table(self, req: pb.CreateTableRequest, ctx: CallContext) -> pb.CreateTableResponse:
        clock: dict[str, Any] = {}
        if req.HasField("turn_clock"):
            turn = req.turn_clock
            if not turn.HasField("turn_time"):
                raise InvalidArgument("turnClock.turnTime", "a turn clock needs its turnTime (5 seconds to 30 days)")
            # Whole seconds: the clock's resolution (the contract allows 5 s to 30 days).
            clock["turn_seconds"] = round(_seconds(turn.turn_time))
            limit = _optional_int(turn, "missed_turns_limit")
            clock["missed_turns_limit"] = DEFAULT_MISSED_TURNS_LIMIT if limit is None else limit
            clock["missed_action"] = missed_action_from_proto(turn.action)
        snap = await self.tables.create_table(
            ctx.player,
            req.preset or DEFAULT_PRESET,
            rules_overrides(req.rules),
            seats=req.seats if req.HasField("seats") else DEFAULT_SEATS,
            holes=_optional_int(req, "holes"),
            private=req.private,
            take_seat=req.take_seat if req.HasField("take_seat") else True,
            idempotency_key=req.idempotency_key if req.HasField("idempotency_key") else None,
            bot_delay_ms=round(_seconds(req.bot_delay) * 1000),
            house_rules=tuple(req.house_rules),
            **clock,
        )
        return pb.CreateTableResponse(table=table_to_proto(snap))

    async def get_table(self, req: pb.GetTableRequest, ctx: CallContext) -> pb.GetTableResponse:
        snap = await self.tables.get(ctx.player, req.table_id, req.join_code or None, ctx.address)
        return pb.GetTableResponse(table=table_to_proto(snap))

    async def list_tables(self, req: pb.ListTablesRequest, ctx: CallContext) -> pb.ListTablesResponse:
        snaps = await self.tables.list_open(req.preset or None, req.page_size)
        return pb.ListTablesResponse(tables=[table_to_proto(s) for s in snaps])

    async def join_table(self, req: pb.JoinTableRequest, ctx: CallContext) -> pb.JoinTableResponse:
        snap = await self.tables.join(
            ctx.player,
            req.idempotency_key,
            table_id=req.table_id,
            join_code=req.join_code or None,
            seat=_optional_int(req, "seat"),
            address=ctx.address,
        )
        return pb.JoinTableResponse(table=table_to_proto(snap))

    async def join_table_by_code(self, req: pb.JoinTableByCodeRequest, ctx: CallContext) -> pb.JoinTableByCodeResponse:
        snap = await self.tables.join(
            ctx.player,
            req.idempotency_key,
            join_code=req.join_code,
            seat=_optional_int(req, "seat"),
            address=ctx.address,
        )
        return pb.JoinTableByCodeResponse(table=table_to_proto(snap))

    async def add_bot(self, req: pb.AddBotRequest, ctx: CallContext) -> pb.AddBotResponse:
        snap = await self.tables.add_bot(
            ctx.player,
            req.table_id,
            bot_from_proto(req.level, req.personality),
            req.idempotency_key,
            seat=_optional_int(req, "seat"),
        )
        return pb.AddBotResponse(table=table_to_proto(snap))

    async def start_table(self, req: pb.StartTableRequest, ctx: CallContext) -> pb.StartTableResponse:
        snap = await self.tables.start(ctx.player, req.table_id, req.idempotency_key)
        return pb.StartTableResponse(table=table_to_proto(snap))

    async def act(self, req: pb.ActRequest, ctx: CallContext) -> pb.ActResponse:
        snap = await self.tables.act(
            ctx.player,
            req.table_id,
            move_from_proto(req.move),
            req.idempotency_key,
            _optional_int(req, "expected_version"),
        )
        return pb.ActResponse(table=table_to_proto(snap))

    async def leave_table(self, req: pb.LeaveTableRequest, ctx: CallContext) -> pb.LeaveTableResponse:
        snap = await self.tables.leave(ctx.player, req.table_id, req.idempotency_key, seat=_optional_int(req, "seat"))
        return pb.LeaveTableResponse(table=table_to_proto(snap))

    async def resign_table(self, req: pb.ResignTableRequest, ctx: CallContext) -> pb.ResignTableResponse:
        snap = await self.tables.resign(ctx.player, req.table_id, req.idempotency_key)
        return pb.ResignTableResponse(table=table_to_proto(snap))

    async def quick_play(self, req: pb.QuickPlayRequest, ctx: CallContext) -> pb.QuickPlayResponse:
        snap = await self.tables.quick_play(
            ctx.player,
            preset=req.preset or DEFAULT_PRESET,
            seats=_optional_int(req, "seats"),
            wait_seconds=_seconds(req.wait),
            idempotency_key=req.idempotency_key,
        )
        return pb.QuickPlayResponse(table=table_to_proto(snap))

    async def list_table_presets(
        self, req: pb.ListTablePresetsRequest, ctx: CallContext
    ) -> pb.ListTablePresetsResponse:
        names = [DEFAULT_PRESET, *(name for name in PRESETS if name != DEFAULT_PRESET)]
        return pb.ListTablePresetsResponse(
            presets=[
                pb.TablePreset(
                    name=name,
                    description=DESCRIPTIONS[name],
                    rules=rules_to_proto(PRESETS[name]),
                    version=preset_version(name),
                )
                for name in names
            ]
        )

    async def list_house_rules(self, req: pb.ListHouseRulesRequest, ctx: CallContext) -> pb.ListHouseRulesResponse:
        base = PRESETS[DEFAULT_PRESET]
        return pb.ListHouseRulesResponse(
            house_rules=[
                pb.HouseRule(
                    name=rule.name,
                    description=rule.description,
                    rules=house_rule_rules(rule, base),
                    conflicts=conflicts_of(rule.name),
                )
                for rule in HOUSE_RULES.values()
            ]
        )

    async def list_bots(self, req: pb.ListBotsRequest, ctx: CallContext) -> pb.ListBotsResponse:
        return pb.ListBotsResponse(
            levels=[
                pb.BotLevelInfo(level=BOT_LEVELS[lv.name], title=lv.title, description=lv.description) for lv in LEVELS
            ],
            personalities=[
                pb.BotPersonalityInfo(personality=BOT_PERSONALITIES[p.name], title=p.title, description=p.description)
                for p in PERSONALITIES
            ],
        )

    def rpcs(self) -> list[Rpc]:
        """Every unary RPC of the service with its handler (routes and summaries are in the contract)."""
        S = SERVICE
        return [
            Rpc(S, "CreateTable", pb.CreateTableRequest, pb.CreateTableResponse, self.create_table),
            Rpc(S, "GetTable", pb.GetTableRequest, pb.GetTableResponse, self.get_table),
            Rpc(S, "ListTables", pb.ListTablesRequest, pb.ListTablesResponse, self.list_tables),
            Rpc(S, "JoinTable", pb.JoinTableRequest, pb.JoinTableResponse, self.join_table),
            Rpc(S, "JoinTableByCode", pb.JoinTableByCodeRequest, pb.JoinTableByCodeResponse, self.join_table_by_code),
            Rpc(S, "AddBot", pb.AddBotRequest, pb.AddBotResponse, self.add_bot),
            Rpc(S, "StartTable", pb.StartTableRequest, pb.StartTableResponse, self.start_table),
            Rpc(S, "Act", pb.ActRequest, pb.ActResponse, self.act),
            Rpc(S, "LeaveTable", pb.LeaveTableRequest, pb.LeaveTableResponse, self.leave_table),
            Rpc(S, "ResignTable", pb.ResignTableRequest, pb.ResignTableResponse, self.resign_table),
            Rpc(S, "QuickPlay", pb.QuickPlayRequest, pb.QuickPlayResponse, self.quick_play),
            Rpc(
                S, "ListTablePresets", pb.ListTablePresetsRequest, pb.ListTablePresetsResponse, self.list_table_presets
            ),
            Rpc(S, "ListHouseRules", pb.ListHouseRulesRequest, pb.ListHouseRulesResponse, self.list_house_rules),
            Rpc(S, "ListBots", pb.ListBotsRequest, pb.ListBotsResponse, self.list_bots),
        ]
