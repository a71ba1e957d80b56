"""Fair shares of the handlers: a player's burst waits its turn, another player's call does not wait behind it."""

from __future__ import annotations

import asyncio
from typing import Any

from golf.adapters.fair_calls import FairCalls
from golf.api.rpc import CallContext, Rpc
from golf.app.identity import Caller
from golf.v1 import solitaire_service_pb2, table_service_pb2


def _ctx(player: str | None, address: str = "10.0.0.1") -> CallContext:
    caller = Caller(player_id=player, issuer="test", scopes=frozenset()) if player else None
    return CallContext(caller, address)


async def test_a_burst_runs_at_most_its_share_and_others_go_past_it() -> None:
    fair = FairCalls(per_player=2)
    release = asyncio.Event()
    inside: dict[str, int] = {}
    most: dict[str, int] = {}
    order: list[str] = []

    async def handler(name: str, key: str) -> str:
        inside[key] = inside.get(key, 0) + 1
        most[key] = max(most.get(key, 0), inside[key])
        order.append(name)
        if key == "player:flooder":
            await release.wait()
        inside[key] -= 1
        return name

    burst = [
        asyncio.create_task(fair.run("player:flooder", lambda i=i: handler(f"f{i}", "player:flooder")))
        for i in range(6)
    ]
    await asyncio.sleep(0)
    honest = await asyncio.wait_for(fair.run("player:honest", lambda: handler("h", "player:honest")), 5)
    assert honest == "h" and order == ["f0", "f1", "h"]  # two of the burst ran; the honest call did not wait
    assert fair.running("player:flooder") == 6 and fair.running("player:honest") == 0
    release.set()
    assert await asyncio.gather(*burst) == [f"f{i}" for i in range(6)]  # in arrival order, none lost
    assert most["player:flooder"] == 2
    assert fair.running("player:flooder") == 0 and fair._slots == {}  # nothing kept between bursts


async def test_a_call_cancelled_while_waiting_frees_nothing_it_did_not_take() -> None:
    fair = FairCalls(per_player=1)
    hold = asyncio.Event()
    started: list[int] = []

    async def handler(i: int) -> int:
        started.append(i)
        await hold.wait()
        return i

    first = asyncio.create_task(fair.run("k", lambda: handler(1)))
    waiting = asyncio.create_task(fair.run("k", lambda: handler(2)))
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    third = asyncio.create_task(fair.run("k", lambda: handler(3)))
    await asyncio.sleep(0)
    assert started == [1]  # still one at a time
    hold.set()
    assert await first == 1 and await third == 3
    assert started == [1, 3] and fair.running("k") == 0


async def test_gated_rpcs_key_by_player_or_address_and_leave_streams_alone() -> None:
    fair = FairCalls(per_player=1)
    seen: list[int] = []

    async def unary(_request: Any, ctx: CallContext) -> Any:
        key = f"player:{ctx.caller.player_id}" if ctx.caller else f"address:{ctx.address}"
        seen.append(fair.running(key))
        return solitaire_service_pb2.GetGameResponse()

    async def stream(_request: Any, _ctx: CallContext) -> Any:
        raise AssertionError("not called")

    pb = solitaire_service_pb2
    rpc = Rpc("golf.v1.SolitaireService", "GetGame", pb.GetGameRequest, pb.GetGameResponse, unary)
    tables = table_service_pb2
    watch = Rpc(
        "golf.v1.TableService", "WatchTable", tables.WatchTableRequest, tables.WatchTableResponse, unary, stream=stream
    )
    gated = fair.gate([rpc])[0]
    await gated.handler(None, _ctx("ann"))
    await gated.handler(None, _ctx(None, "192.0.2.7"))
    assert seen == [1, 1]  # each counted in its own share while it ran
    assert fair.gate([watch])[0] is watch  # a stream lives as long as its watcher: not gated
    assert FairCalls(per_player=0).gate([rpc])[0] is rpc  # 0: no gate
