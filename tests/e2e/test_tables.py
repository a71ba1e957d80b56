"""Live card Golf tables over both transports and both databases: create (listed or private), list, join by id and
by code, bots, start, whole matches played by echoing the legal moves the table lists, idempotent retries, stale
versions, refusals with their reasons, who may see a private table, parity of REST and gRPC, and every payload
scanned for cards its viewer may not know."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator

import grpc
import httpx
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

from golf.v1 import card_golf_pb2 as cg
from tests.e2e.identity import new_client
from tests.e2e.support import Client, R, Reply, Server, health_status, new_key, scrub
from tests.e2e.tables import SERVICE, Knowledge, Tables, check_hidden, move

SEATING, PLAYING, OVER = cg.TABLE_STATUS_SEATING, cg.TABLE_STATUS_PLAYING, cg.TABLE_STATUS_OVER


@pytest.fixture(params=["rest", "grpc"])
def transport(request: pytest.FixtureRequest) -> str:
    """Each test using this runs over both transports."""
    return str(request.param)


@pytest.fixture
def players(server: Server, transport: str) -> Iterator[list[Tables]]:
    """Three new players on the test's transport."""
    clients = [new_client(server, transport) for _ in range(3)]
    yield [Tables(c) for c in clients]
    for c in clients:
        c.close()


def _table(reply: Reply) -> cg.Table:
    table: cg.Table = reply.expect_ok().table
    return table


def _with_bots(host: Tables, bots: int = 2, holes: int = 1, preset: str = "six-card") -> cg.Table:
    """A started table of ``host`` and ``bots`` bots."""
    made = _table(host.create(preset=preset, seats=bots + 1, holes=holes))
    for n in range(bots):
        _table(host.add_bot(made.id, cg.BOT_LEVEL_GREEDY if n == 0 else cg.BOT_LEVEL_RANDOM))
    return _table(host.start(made.id))


# -- creating, listing, joining ----------------------------------------------------------------------------------
def test_create_listed_and_private_tables_and_list_the_open_ones(players: list[Tables]) -> None:
    ann, bob, _ = players
    preset = "eight-card"
    listed = _table(ann.create(preset=preset, seats=3, holes=2))
    assert listed.status == SEATING and listed.listed and listed.your_seat == 0 and listed.owner_id == ann.player_id
    assert (listed.holes, listed.seat_count, listed.version) == (2, 3, 1)
    assert listed.rules.rows == 2 and listed.rules.cols == 4 and len(listed.rules.values) == 13
    assert listed.join_code == "" and not listed.legal_moves and not listed.HasField("hole")
    assert [s.player_id for s in listed.seats] == [ann.player_id, "", ""]
    private = _table(ann.create(preset=preset, seats=2, private=True))
    assert not private.listed and re.fullmatch("[A-Z]{8}", private.join_code)
    host_only = _table(ann.create(preset=preset, take_seat=False))
    assert not host_only.HasField("your_seat") and host_only.seat_count == 4 and host_only.version == 0

    shown = bob.list(preset=preset).expect_ok().tables
    ids = [t.id for t in shown]
    assert listed.id in ids and host_only.id in ids and private.id not in ids
    assert ids.index(host_only.id) < ids.index(listed.id), "newest first"
    for table in shown:
        assert table.status == SEATING and table.listed and not table.join_code and not table.HasField("your_seat")
    assert len(bob.list(preset=preset, page_size=1).expect_ok().tables) == 1


def test_create_echoes_rule_options_the_turn_clock_and_the_bot_delay(players: list[Tables]) -> None:
    ann = players[0]
    rules = cg.CardGolfRules(jokers=2, knocking=True, special_values={"10H": -5}, powers={"J": cg.POWER_PEEK_OWN})
    clock = cg.TurnClock(missed_turns_limit=2, action=cg.MISSED_TURNS_ACTION_RESIGN)
    clock.turn_time.FromSeconds(90)
    req: dict[str, object] = {"preset": "six-card", "rules": rules, "turn_clock": clock}
    made = _table(ann.create(**req))
    assert made.rules.jokers == 2 and made.rules.knocking and dict(made.rules.special_values) == {"TH": -5}
    assert dict(made.rules.powers) == {"J": cg.POWER_PEEK_OWN}
    assert made.turn_clock.turn_time.seconds == 90 and made.turn_clock.missed_turns_limit == 2
    assert made.turn_clock.action == cg.MISSED_TURNS_ACTION_RESIGN
    assert made.bot_delay.ToMilliseconds() == 0
    paced = cg.CardGolfRules()
    slow = _table(ann.create(rules=paced, bot_delay={"seconds": 1, "nanos": 500_000_000}))
    assert slow.bot_delay.ToMilliseconds() == 1500 and not slow.HasField("turn_clock")
    # Options the rules cannot take are refused naming the field.
    bad = ann.create(rules=cg.CardGolfRules(rows=4, cols=4))
    assert bad.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field.startswith("rules")
    assert ann.create(seats=9).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "seats"
    assert ann.create(preset="no-such").expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "preset"


def test_join_by_id_and_by_code_and_a_private_table_stays_private(players: list[Tables]) -> None:
    ann, bob, cat = players
    listed = _table(ann.create(seats=3))
    joined = _table(bob.join(listed.id))
    assert joined.your_seat == 1 and joined.seats[1].player_id == bob.player_id and joined.join_code == ""
    assert bob.join(listed.id).expect_error(R.ERROR_REASON_ALREADY_SEATED).table.version == joined.version

    private = _table(ann.create(seats=3, private=True))
    code = private.join_code
    # Others are told it does not exist, whatever they ask of it without its code.
    assert cat.get(private.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert cat.join(private.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert cat.join(private.id, join_code="WRONGCODE").expect_error(R.ERROR_REASON_NOT_FOUND)
    assert cat.act(private.id, move("drawStock")).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert cat.resign(private.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert cat.start(private.id).expect_error(R.ERROR_REASON_NOT_FOUND)
    assert cat.join_by_code("NOSUCHCODE").expect_error(R.ERROR_REASON_NOT_FOUND)
    # With the code: as a spectator, by id, and by the code alone.
    watched = _table(cat.get(private.id, join_code=code.lower()))
    assert not watched.HasField("your_seat") and watched.join_code == "" and not watched.listed
    by_id = _table(bob.join(private.id, join_code=code, seat=2))
    assert by_id.your_seat == 2 and by_id.join_code == ""
    by_code = _table(cat.join_by_code(code))
    assert by_code.id == private.id and by_code.your_seat == 1
    assert _table(ann.get(private.id)).join_code == code  # the creator's own view keeps it
    assert cat.join_by_code(code).expect_error(R.ERROR_REASON_ALREADY_SEATED)


def test_bots_seats_and_the_start(players: list[Tables]) -> None:
    ann, bob, cat = players
    made = _table(ann.create(seats=3))
    assert bob.add_bot(made.id).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    empty = ann.start(made.id).expect_error(R.ERROR_REASON_SEATS_EMPTY)
    assert empty.table.id == made.id and empty.table.your_seat == 0
    bot = _table(ann.add_bot(made.id, cg.BOT_LEVEL_STRONG, seat=2))
    assert bot.seats[2].bot == cg.BOT_LEVEL_STRONG and bot.seats[2].player_id == ""
    assert ann.add_bot(made.id, seat=2).expect_error(R.ERROR_REASON_SEAT_TAKEN)
    assert bob.join(made.id, seat=2).expect_error(R.ERROR_REASON_SEAT_TAKEN)
    out = _table(ann.leave(made.id, seat=2))  # the creator takes the bot out again
    assert out.seats[2].bot == cg.BOT_LEVEL_UNSPECIFIED
    _table(bob.join(made.id))
    _table(ann.add_bot(made.id, cg.BOT_LEVEL_RANDOM))
    assert cat.join(made.id).expect_error(R.ERROR_REASON_TABLE_FULL)
    assert ann.add_bot(made.id).expect_error(R.ERROR_REASON_TABLE_FULL)
    assert bob.start(made.id).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    started = _table(ann.start(made.id))
    assert started.status == PLAYING and started.hole_number == 1 and started.HasField("hole")
    assert started.hole.phase == cg.HOLE_PHASE_SETUP and not started.hole.HasField("to_move")
    assert set(started.awaiting) == {0, 1}, "the bot chose its start cards at once"
    assert cat.join(made.id).expect_error(R.ERROR_REASON_TABLE_ALREADY_STARTED)
    assert ann.add_bot(made.id).expect_error(R.ERROR_REASON_TABLE_ALREADY_STARTED)


# -- whole matches -----------------------------------------------------------------------------------------------
def _play_to_the_end(me: Tables, table: cg.Table, rng: random.Random) -> tuple[cg.Table, int]:
    """Echo a random move of those the table lists until the match is over; the scan checks every payload."""
    knows = Knowledge(table.your_seat)
    moves = 0
    while table.status == PLAYING:
        assert table.legal_moves, "the table awaits the person: bots have moved"
        chosen = rng.choice(list(table.legal_moves))
        knows.moved(table, chosen)
        reply = me.act(table.id, chosen, expected_version=table.version)
        check_hidden(reply, knows)
        table = _table(reply)
        moves += 1
    return table, moves


def test_a_person_plays_a_whole_match_against_bots_by_echoing_legal_moves(players: list[Tables]) -> None:
    ann = players[0]
    table, moves = _play_to_the_end(ann, _with_bots(ann, bots=2, holes=1), random.Random(7))
    assert moves > 2 and table.status == OVER and table.match_end == cg.MATCH_END_COMPLETED
    assert table.hole_number == 0 and not table.HasField("hole") and not table.legal_moves and not table.awaiting
    sheet = table.score_sheet
    assert len(sheet.holes) == 1 and list(sheet.totals) == list(sheet.holes[0].points)
    assert list(sheet.leaders) == [s for s, t in enumerate(sheet.totals) if t == min(sheet.totals)]
    (result,) = table.results
    assert result.hole_number == 1 and list(result.winners) == list(sheet.leaders)
    assert [s.total for s in result.seats] == list(sheet.totals)
    for seat in result.seats:
        assert sum(line.points for line in seat.lines) == seat.total
    assert table.last_hole.result == result and all(c.HasField("card") for g in table.last_hole.grids for c in g.cards)
    # After the end: refusals with the match's reason, and the final table as it is.
    assert ann.act(table.id, move("knock")).expect_error(R.ERROR_REASON_MATCH_OVER).table == table
    assert _table(ann.get(table.id)) == table


@pytest.mark.parametrize("preset", ["six-card", "four-card", "six-card-flip"])
def test_no_payload_shows_a_card_its_viewer_may_not_know(players: list[Tables], preset: str) -> None:
    """Two people and a bot; each person plays random listed moves in turn and reads the table, a spectator reads
    it too; every payload (replies, refusals with their table, listings) is scanned."""
    ann, bob, cat = players
    rng = random.Random(preset)
    made = _table(ann.create(preset=preset, seats=3, holes=2))
    _table(bob.join(made.id))
    _table(ann.add_bot(made.id, cg.BOT_LEVEL_GREEDY))
    table = _table(ann.start(made.id))
    knows = {ann.player_id: Knowledge(0), bob.player_id: Knowledge(1)}
    spectator = Knowledge(None)
    people = {0: ann, 1: bob}
    turns = 0
    while table.status == PLAYING and turns < 400:
        seat = rng.choice(list(table.awaiting))
        me, other = people[seat], people[1 - seat]
        mine = me.get(table.id)
        check_hidden(mine, knows[me.player_id])
        current = _table(mine)
        chosen = rng.choice(list(current.legal_moves))
        # The other person may not act now (during the setup both may).
        if current.hole.phase != cg.HOLE_PHASE_SETUP:
            refused = other.act(table.id, move("drawStock"))
            check_hidden(refused, knows[other.player_id])
            assert refused.expect_error(R.ERROR_REASON_NOT_YOUR_TURN).table.version == current.version
        knows[me.player_id].moved(current, chosen)
        reply = me.act(table.id, chosen)
        check_hidden(reply, knows[me.player_id])
        check_hidden(other.get(table.id), knows[other.player_id])
        check_hidden(cat.get(table.id), spectator)
        table = _table(reply)
        turns += 1
    assert table.status == OVER and len(table.results) == 2


# -- retries, versions, refusals ---------------------------------------------------------------------------------
def test_a_retried_act_returns_the_same_table_and_is_stored_once(players: list[Tables]) -> None:
    ann, bob, _ = players
    table = _with_bots(ann, bots=1)
    key = new_key()
    first = _table(ann.act(table.id, table.legal_moves[0], key))
    again = _table(ann.act(table.id, table.legal_moves[0], key))
    assert again == first and first.version > table.version
    assert _table(ann.get(table.id)).version == first.version, "stored once"
    # The same key for another move is refused.
    other = next(m for m in table.legal_moves if m != table.legal_moves[0])
    assert ann.act(table.id, other, key).expect_error(R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED)
    # Joins, bots and starts are retried the same way.
    made = _table(ann.create(seats=3))
    join_key, bot_key, start_key = new_key(), new_key(), new_key()
    assert _table(bob.join(made.id, join_key)) == _table(bob.join(made.id, join_key))
    assert _table(ann.add_bot(made.id, key=bot_key)) == _table(ann.add_bot(made.id, key=bot_key))
    assert _table(ann.start(made.id, start_key)) == _table(ann.start(made.id, start_key))
    # A create with a key finds its table again.
    create_key = new_key()
    assert _table(ann.create(idempotency_key=create_key)) == _table(ann.create(idempotency_key=create_key))


def test_a_stale_expected_version_is_refused_with_the_current_table(players: list[Tables]) -> None:
    ann = players[0]
    table = _with_bots(ann, bots=1)
    moved = _table(ann.act(table.id, table.legal_moves[0], expected_version=table.version))
    stale = ann.act(table.id, moved.legal_moves[0], expected_version=table.version)
    error = stale.expect_error(R.ERROR_REASON_STALE_VERSION)
    assert error.status == "ABORTED" and error.table == moved
    assert _table(ann.get(table.id)).version == moved.version


def test_refusals_name_their_reason_and_leave_the_table_as_it_was(players: list[Tables]) -> None:
    ann, bob, cat = players
    made = _table(ann.create(seats=3, holes=1))
    _table(bob.join(made.id))
    _table(ann.add_bot(made.id))
    assert ann.act(made.id, move("drawStock")).expect_error(R.ERROR_REASON_TABLE_NOT_STARTED)
    assert ann.resign(made.id).expect_error(R.ERROR_REASON_TABLE_NOT_STARTED)
    table = _table(ann.start(made.id))
    # A spectator acting, a seat the caller does not hold.
    assert cat.act(made.id, table.legal_moves[0]).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    assert cat.resign(made.id).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    assert ann.leave(made.id, seat=1).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    assert ann.leave(made.id, seat=2).expect_error(R.ERROR_REASON_PERMISSION_DENIED)  # the bot, after the start
    # Moves that can never be right are invalid arguments naming the move; the others wait for their time.
    twice = ann.act(made.id, move("reveal", positions=[0, 0])).expect_error(R.ERROR_REASON_DUPLICATE_POSITION)
    assert twice.field == "move" and twice.table.version == table.version and twice.table.legal_moves
    outside = ann.act(made.id, move("reveal", positions=[0, 15]))
    assert outside.expect_error(R.ERROR_REASON_NO_SUCH_POSITION).field == "move"
    count = ann.act(made.id, move("reveal", positions=[0]))
    assert count.expect_error(R.ERROR_REASON_WRONG_REVEAL_COUNT).field == "move"
    early = ann.act(made.id, move("swap", position=0)).expect_error(R.ERROR_REASON_WRONG_PHASE)
    assert early.field == "" and early.table == _table(ann.get(made.id))
    # Both people choose their start cards, once; then only the one whose turn it is moves.
    _table(ann.act(made.id, table.legal_moves[0]))
    again = ann.act(made.id, move("reveal", positions=[2, 3]))
    assert again.expect_error(R.ERROR_REASON_ALREADY_REVEALED).table.hole.ready[0]
    _table(bob.act(made.id, _table(bob.get(made.id)).legal_moves[0]))
    table = _table(ann.get(made.id))
    (turn,) = table.awaiting
    waiting = bob if turn == 0 else ann
    assert waiting.act(made.id, move("drawStock")).expect_error(R.ERROR_REASON_NOT_YOUR_TURN)
    assert _table(ann.get(made.id)).version == table.version
    # A bad argument is refused before the table is read.
    bad = ann.act(made.id, cg.CardGolfMove())
    assert bad.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "move"


def test_leaving_before_the_start_and_resigning_after_it(players: list[Tables]) -> None:
    ann, bob, _ = players
    made = _table(ann.create(seats=2, holes=1))
    _table(bob.join(made.id))
    left = _table(bob.leave(made.id))
    assert left.seats[1].player_id == "" and not left.HasField("your_seat")
    assert bob.leave(made.id).expect_error(R.ERROR_REASON_PERMISSION_DENIED)
    _table(bob.join(made.id))
    _table(ann.start(made.id))
    resigned = _table(bob.resign(made.id))
    assert resigned.seats[1].resigned and resigned.seats[1].bot == cg.BOT_LEVEL_GREEDY
    assert resigned.seats[1].player_id == bob.player_id and resigned.your_seat == 1 and not resigned.legal_moves
    assert bob.resign(made.id).expect_error(R.ERROR_REASON_BOT_SEAT)
    over = _table(ann.leave(made.id))  # the last person leaves: the match is abandoned
    assert over.status == OVER and over.match_end == cg.MATCH_END_ABANDONED


# -- both transports ---------------------------------------------------------------------------------------------
def test_rest_and_grpc_give_the_same_tables_and_refusals(server: Server) -> None:
    rest_client = new_client(server, "rest")
    grpc_client = new_client(server, "grpc", as_=rest_client)
    try:
        by_rest, by_grpc = Tables(rest_client), Tables(grpc_client)
        table = _with_bots(by_rest, bots=2, holes=2)
        rng = random.Random(11)
        while table.status == PLAYING:
            a, b = by_rest.get(table.id), by_grpc.get(table.id)
            _same(a, b)
            # Refusals are the same too (the table they carry included).
            wrong = move("flip", position=0)
            _same(by_rest.act(table.id, wrong), by_grpc.act(table.id, wrong))
            chosen = rng.choice(list(table.legal_moves))
            key = new_key()
            first = (by_rest if rng.random() < 0.5 else by_grpc).act(table.id, chosen, key)
            _same(by_rest.act(table.id, chosen, key), by_grpc.act(table.id, chosen, key))
            table = _table(first)
        _same(by_rest.get(table.id), by_grpc.get(table.id))
        _same(by_rest.list(preset="six-card"), by_grpc.list(preset="six-card"))
    finally:
        rest_client.close()
        grpc_client.close()


def _same(rest: Reply, grpc_reply: Reply) -> None:
    """Equal messages, the REST body exactly the proto3 JSON of the gRPC message; or the same refusal."""
    assert rest.transport == "rest" and grpc_reply.transport == "grpc"
    assert rest.ok == grpc_reply.ok, (rest.raw[:300], grpc_reply.raw[:300])
    if rest.ok:
        assert rest.message == grpc_reply.message
        expected = json_format.MessageToJson(grpc_reply.message, always_print_fields_with_no_presence=True)
        assert json.loads(rest.raw) == json.loads(expected)
        return
    assert rest.error is not None and grpc_reply.error is not None
    assert scrub(rest.error) == scrub(grpc_reply.error)
    assert rest.error.status == grpc_reply.grpc_code.name


def test_the_service_is_discoverable_and_healthy(server: Server, client: Client) -> None:
    assert health_status(server.grpc_target, SERVICE.full_name) == health_pb2.HealthCheckResponse.SERVING
    with grpc.insecure_channel(server.grpc_target) as channel:
        db = ProtoReflectionDescriptorDatabase(channel)
        assert SERVICE.full_name in set(db.get_services())
    doc = httpx.get(f"{server.http_url}/openapi.json", timeout=10).json()
    for path, method in [
        ("/v1/tables", "post"),
        ("/v1/tables", "get"),
        ("/v1/tables/{tableId}", "get"),
        ("/v1/tables/{tableId}:join", "post"),
        ("/v1/tables:joinByCode", "post"),
        ("/v1/tables/{tableId}:addBot", "post"),
        ("/v1/tables/{tableId}:start", "post"),
        ("/v1/tables/{tableId}/moves", "post"),
        ("/v1/tables/{tableId}:leave", "post"),
        ("/v1/tables/{tableId}:resign", "post"),
        ("/v1/tables:quickPlay", "post"),
    ]:
        assert doc["paths"][path][method]["tags"] == ["TableService"], (path, method)
    # golf_tables_active counts the tables seating or playing (of every replica, from the database).
    _table(Tables(client).create())
    page = httpx.get(f"{server.http_url}/metrics", timeout=10).text
    (count,) = re.findall(r"^golf_tables_active (\S+)$", page, re.M)
    assert float(count) >= 1


def test_quick_play_seats_the_caller_at_a_table_playing_at_once(players: list[Tables]) -> None:
    ann = players[0]
    key = new_key()
    # A preset no other test opens tables of: no open table to join, so one is opened, and filled at once.
    table = _table(ann.quick_play(key, preset="cambio", seats=3))
    assert table.HasField("your_seat") and table.preset == "cambio" and table.seat_count == 3
    assert table.status == PLAYING and table.legal_moves, "no wait: bots filled the empty seats"
    assert _table(ann.quick_play(key, preset="cambio", seats=3)).id == table.id


def test_the_card_scan_reads_through_maps() -> None:
    """``cards_in`` (the client-side scan) finds the cards of a table whose rules have maps (powers, special
    values): it once took a map's keys for messages and failed."""
    from collections import Counter

    from golf.v1 import cards_pb2
    from tests.e2e.tables import cards_in

    table = cg.Table(
        rules=cg.CardGolfRules(special_values={"JH": 0}, powers={"7": cg.POWER_PEEK_OWN}),
        hole=cg.HoleView(discard=[cards_pb2.Card(code="7S"), cards_pb2.Card(code="7S")]),
    )
    assert cards_in(table) == Counter({"7S": 2})
