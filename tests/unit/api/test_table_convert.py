"""Live tables to protobuf and back (``golf.api.table_convert``): every move kind round trips (in binary and in
proto3 JSON), rule options override a preset one by one, jokers travel as jokers, a card the viewer may not know is
never set, and every legal move a table lists is accepted when sent back as it is, over whole matches."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import fields

import pytest
from google.protobuf import json_format

from golf.api.table_convert import (
    BOT_LEVELS,
    bot_level_from_proto,
    card_to_proto,
    move_from_proto,
    move_to_proto,
    table_to_proto,
)
from golf.api.table_rules_convert import rules_overrides, rules_to_proto
from golf.app.errors import InvalidArgument
from golf.app.identity import Caller
from golf.app.tables import TableOptions, TableStatus
from golf.app.tables.read_model import TableSnapshot, TableView
from golf.app.tables.service import TableService
from golf.engine.cardgolf import (
    PRESETS,
    Discard,
    DrawDiscard,
    DrawStock,
    Flip,
    GolfRules,
    Joker,
    Knock,
    KnockerPenalty,
    Move,
    Pass,
    PeekStroke,
    Power,
    Reveal,
    StartMode,
    Swap,
    UsePower,
)
from golf.engine.cardgolf.bots import BOT_NAMES
from golf.engine.cardgolf.moves import FlipAll, Keep
from golf.engine.cards import Card
from golf.v1 import card_golf_pb2 as cg
from golf.v1 import cards_pb2
from tests.unit.app.fake_ports import FakeLimiter
from tests.unit.app.fakes import FakeClock, FakeStore

ANN, BOB = Caller("player-ann"), Caller("player-bob")

EVERY_KIND: list[Move] = [
    Reveal((0, 3)),
    Reveal(()),
    DrawStock(),
    DrawDiscard(),
    Swap(0),
    Swap(8),
    Discard(),
    Flip(5),
    Pass(),
    Knock(),
    PeekStroke(2),
    UsePower(),
    UsePower(seat=1),
    UsePower(position=0),
    UsePower(seat=0, position=0, own=0),
    UsePower(seat=3, position=2, own=1),
    UsePower(power=Power.DRAW_TWO.value),
    UsePower(seat=1, position=4, power=Power.PEEK_OPPONENT.value),
    FlipAll(),
    Keep(0, 0),
    Keep(2, 5),
]


# -- moves -------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("move", EVERY_KIND, ids=lambda m: m.code)
def test_every_move_kind_round_trips_in_binary_and_json(move: Move) -> None:
    msg = move_to_proto(move)
    assert msg.WhichOneof("kind") is not None
    assert move_from_proto(msg) == move
    assert move_from_proto(cg.CardGolfMove.FromString(msg.SerializeToString())) == move
    parsed = json_format.Parse(json_format.MessageToJson(msg), cg.CardGolfMove())
    assert move_from_proto(parsed) == move


def test_every_kind_of_the_contract_has_a_move() -> None:
    kinds = {move_to_proto(m).WhichOneof("kind") for m in EVERY_KIND}
    assert kinds == {f.name for f in cg.CardGolfMove.DESCRIPTOR.oneofs_by_name["kind"].fields}


def test_a_power_zero_is_not_an_unset_target() -> None:
    """Seat 0 and position 0 are targets: optional fields keep them apart from no target."""
    msg = move_to_proto(UsePower(seat=0, position=0))
    assert msg.use_power.HasField("seat") and msg.use_power.HasField("position")
    assert not msg.use_power.HasField("own")
    assert json_format.MessageToDict(msg) == {"usePower": {"seat": 0, "position": 0}}


def test_a_move_of_no_kind_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidArgument) as refused:
        move_from_proto(cg.CardGolfMove())
    assert refused.value.field == "move"


# -- cards -------------------------------------------------------------------------------------------------------
def test_jokers_are_jokers_and_plain_cards_are_as_in_solitaire() -> None:
    black, red = card_to_proto(Joker(0, 0)), card_to_proto(Joker(0, 1))
    assert (black.code, black.joker, black.rank, black.suit) == ("XB", True, 0, 0)
    assert (red.code, red.joker, red.rank, red.suit) == ("XR", True, 0, 0)
    queen = card_to_proto(Card(12, 2))
    assert queen == cards_pb2.Card(rank=cards_pb2.RANK_QUEEN, suit=cards_pb2.SUIT_HEARTS, code="QH")
    assert not queen.joker


# -- rules -------------------------------------------------------------------------------------------------------
def _same_rules(a: GolfRules, b: GolfRules) -> None:
    """Equal option by option; maps compare as maps (their order carries no meaning)."""
    for f in fields(GolfRules):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name in ("special_values", "powers"):
            x, y = dict(x), dict(y)
        assert x == y, f.name


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_presets_rules_sent_back_as_overrides_make_the_same_rules(name: str) -> None:
    rules = PRESETS[name]
    msg = rules_to_proto(rules)
    # Every field is set in a response (the optional points only when the rules have them).
    unset = {f.name for f in cg.CardGolfRules.DESCRIPTOR.fields if f.has_presence and not msg.HasField(f.name)}
    assert unset <= {"joker_pair_value", "block_of_four_value", "straight_value"}
    assert ("joker_pair_value" in unset) == (rules.joker_pair_value is None)
    assert ("block_of_four_value" in unset) == (rules.block_of_four_value is None)
    assert ("straight_value" in unset) == (rules.straight_value is None)
    assert list(msg.values) == list(rules.values)
    # Over six-card, which has no special values and no powers (an empty map keeps the preset's: a request cannot
    # take a preset's powers away, only start from a preset without them).
    seats = rules.min_players  # 4 for six-card-jokers, 2 elsewhere
    _same_rules(TableOptions.build("six-card", rules_overrides(msg), seats, rules.holes).rules, rules)
    again = json_format.Parse(json_format.MessageToJson(msg), cg.CardGolfRules())
    _same_rules(TableOptions.build(name, rules_overrides(again), seats, rules.holes).rules, rules)


def test_unset_options_keep_the_presets_and_set_ones_change_one_by_one() -> None:
    assert rules_overrides(cg.CardGolfRules()) == {}
    msg = cg.CardGolfRules(
        jokers=2,
        knocking=True,
        end_on_all_face_up=False,
        start_mode=cg.START_MODE_PEEK,
        knocker_penalty=cg.KNOCKER_PENALTY_DOUBLE_PLUS_5,
        joker_value=-5,
        match_columns=False,
        values=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0],
        special_values={"10H": 7, "QS": 40, "XR": -10},
        powers={"10": cg.POWER_PEEK_OWN, "KS": cg.POWER_BLIND_SWAP, "X": cg.POWER_SHUFFLE_OPPONENT},
    )
    changes = rules_overrides(msg)
    rules = TableOptions.build("six-card", changes, 4).rules
    assert rules.jokers == 2 and rules.knocking and not rules.end_on_all_face_up and not rules.match_columns
    assert rules.start_mode is StartMode.PEEK and rules.knocker_penalty is KnockerPenalty.DOUBLE_PLUS_5
    assert rules.joker_value == -5 and rules.values[10:] == (11, 12, 0)
    # Ten is T in the engine's codes, as the cards it scores are named.
    assert dict(rules.special_values) == {"TH": 7, "QS": 40, "XR": -10}
    assert rules.card_value(Card(10, 2)) == 7 and rules.card_value(Joker(0, 1)) == -10
    assert dict(rules.powers) == {"T": Power.PEEK_OWN, "KS": Power.BLIND_SWAP, "X": Power.SHUFFLE_OPPONENT}
    assert rules.power_of(Card(10, 0)) is Power.PEEK_OWN
    # What was not set is the preset's.
    six = PRESETS["six-card"]
    assert (rules.rows, rules.cols, rules.final_turns, rules.max_rounds) == (
        six.rows,
        six.cols,
        six.final_turns,
        six.max_rounds,
    )
    # The same request always makes the same rules (a retried create compares them).
    assert rules_overrides(cg.CardGolfRules.FromString(msg.SerializeToString())) == changes


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        (cg.CardGolfRules(values=[1, 2, 3]), "rules.values"),
        (cg.CardGolfRules(special_values={"TH": 1, "10H": 2}), "rules.specialValues"),
        (cg.CardGolfRules(powers={"T": cg.POWER_PEEK_OWN, "10": cg.POWER_PEEK_OWN}), "rules.powers"),
        (cg.CardGolfRules(powers={"Q": 99}), "rules.powers['Q']"),  # type: ignore[dict-item]
        (cg.CardGolfRules(start_mode=99), "rules.startMode"),  # type: ignore[arg-type]
        (cg.CardGolfRules(special_values={"1H": 1}), "rules.specialValues['1H']"),
    ],
)
def test_options_the_engine_cannot_read_are_refused_naming_the_field(msg: cg.CardGolfRules, field: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        rules_overrides(msg)
    assert refused.value.field == field


def test_bot_levels_are_the_engines_bots() -> None:
    assert set(BOT_LEVELS) == set(BOT_NAMES)
    for name, level in BOT_LEVELS.items():
        assert bot_level_from_proto(level) == name
    with pytest.raises(InvalidArgument):
        bot_level_from_proto(cg.BOT_LEVEL_UNSPECIFIED)


# -- tables ------------------------------------------------------------------------------------------------------
def _check_table(msg: cg.Table, snap: TableSnapshot) -> None:
    """The message says what the view says, no more: a card the view does not show is unset."""
    view: TableView = snap.view
    assert msg.id == snap.table_id and msg.version == view.version and msg.owner_id == snap.owner_id
    assert msg.join_code == (snap.join_code or "")
    assert msg.HasField("your_seat") == (snap.seat is not None)
    if snap.seat is not None:
        assert msg.your_seat == snap.seat
    assert msg.seat_count == len(view.seats) == len(msg.seats)
    assert list(msg.awaiting) == list(view.awaiting)
    assert [move_from_proto(m) for m in msg.legal_moves] == list(view.legal_moves)
    for proto_hole, seat_view in ((msg.hole, view.hole), (msg.last_hole, view.last_hole)):
        if seat_view is None:
            continue
        for grid, cards in zip(proto_hole.grids, seat_view.grids, strict=True):
            for shown, card in zip(grid.cards, cards, strict=True):
                assert shown.HasField("card") == (card is not None)
                if card is not None:
                    assert shown.card.code == card.code
        assert proto_hole.HasField("held") == (seat_view.held is not None)
        assert [c.code for c in proto_hole.discard] == [c.code for c in seat_view.discard]
    assert [list(h.points) for h in msg.score_sheet.holes] == [list(r) for r in view.sheet.holes]
    assert list(msg.score_sheet.totals) == list(view.sheet.totals)
    assert [r.hole_number for r in msg.results] == list(range(1, len(view.results) + 1))


@pytest.fixture
def tables() -> TableService:
    return TableService(FakeStore(), FakeClock(), FakeLimiter())


async def _seen(tables: TableService, snap: TableSnapshot) -> cg.Table:
    msg = table_to_proto(snap)
    _check_table(msg, snap)
    # And as the spectator of a listed table sees it: no legal moves, no seat.
    if snap.view.listed:
        spectator = await tables.get(Caller("player-spectator"), snap.table_id)
        watched = table_to_proto(spectator)
        _check_table(watched, spectator)
        assert not watched.legal_moves and not watched.HasField("your_seat") and not watched.join_code
    return msg


@pytest.mark.parametrize("preset", sorted(PRESETS))
async def test_every_listed_legal_move_sent_back_as_it_is_is_accepted_over_whole_matches(
    tables: TableService, preset: str
) -> None:
    """A person and a bot at each preset (three at six-card-jokers, for four or more), two holes: the person always
    plays a random listed move, taken from the message and converted back, through its JSON form."""
    rng = random.Random(preset)
    seats = PRESETS[preset].min_players  # 4 for six-card-jokers, 2 elsewhere
    made = await tables.create_table(ANN, preset, seats=seats, holes=2)
    for bot in range(1, seats):
        await tables.add_bot(ANN, made.table_id, "random", f"bot-{bot}")
    snap = await tables.start(ANN, made.table_id, "start")
    kinds: Counter[str] = Counter()
    n = 0
    while snap.view.status is TableStatus.PLAYING:
        msg = await _seen(tables, snap)
        assert msg.legal_moves, "a person's move is awaited"
        chosen = rng.choice(list(msg.legal_moves))
        echoed = json_format.Parse(json_format.MessageToJson(chosen), cg.CardGolfMove())
        kinds[echoed.WhichOneof("kind") or ""] += 1
        n += 1
        snap = await tables.act(ANN, snap.table_id, move_from_proto(echoed), f"k{n}", snap.version)
    final = await _seen(tables, snap)
    assert final.status == cg.TABLE_STATUS_OVER and final.match_end == cg.MATCH_END_COMPLETED
    assert len(final.results) == 2 and len(final.score_sheet.holes) == 2
    assert final.HasField("last_hole") and final.last_hole.HasField("result")
    assert final.last_hole.result.hole_number == 2
    assert "reveal" in kinds or PRESETS[preset].start_cards == 0 or PRESETS[preset].start_fixed


async def test_the_join_code_is_the_creators_only_and_a_private_table_lists_as_private(tables: TableService) -> None:
    made = await tables.create_table(ANN, "six-card", seats=2, private=True)
    mine = table_to_proto(made)
    assert mine.join_code and not mine.listed and mine.your_seat == 0
    assert mine.status == cg.TABLE_STATUS_SEATING and mine.hole_number == 0 and not mine.HasField("hole")
    joined = await tables.join(BOB, "bob", made.table_id, join_code=mine.join_code)
    theirs = table_to_proto(joined)
    assert theirs.join_code == "" and theirs.your_seat == 1
    assert [s.player_id for s in theirs.seats] == [ANN.player_id, BOB.player_id]
    assert all(s.bot == cg.BOT_LEVEL_UNSPECIFIED for s in theirs.seats)


async def test_a_held_stock_card_and_face_down_cards_are_never_set_for_those_who_may_not_know_them(
    tables: TableService,
) -> None:
    """Two people: after the setup the mover draws from the stock. The mover's message holds the card; the other
    player's and a spectator's do not (but say where it came from); nobody's own face-down cards are set."""
    made = await tables.create_table(ANN, "six-card", seats=2, holes=1)
    await tables.join(BOB, "bob", made.table_id)
    await tables.start(ANN, made.table_id, "start")
    for caller in (ANN, BOB):
        snap = await tables.get(caller, made.table_id)
        await tables.act(caller, made.table_id, snap.view.legal_moves[0], f"reveal-{caller.player_id}")
    ann = await tables.get(ANN, made.table_id)
    mover = ANN if ann.view.awaiting == (0,) else BOB
    other = BOB if mover is ANN else ANN
    drew = await tables.act(mover, made.table_id, DrawStock(), "draw")
    mine = table_to_proto(drew)
    assert mine.hole.HasField("held") and mine.hole.held_from == cg.CARD_SOURCE_STOCK
    assert mine.hole.phase == cg.HOLE_PHASE_PLACE and mine.hole.to_move == drew.seat
    for watcher in (await tables.get(other, made.table_id), await tables.get(Caller("x"), made.table_id)):
        msg = table_to_proto(watcher)
        _check_table(msg, watcher)
        assert not msg.hole.HasField("held") and msg.hole.held_from == cg.CARD_SOURCE_STOCK
        assert not msg.legal_moves
    for msg in (mine, table_to_proto(await tables.get(other, made.table_id))):
        for grid in msg.hole.grids:
            for shown in grid.cards:
                assert shown.HasField("card") == shown.face_up  # six-card turns up: nothing is peeked


def test_timestamps_are_the_ones_protobuf_makes() -> None:
    """``timestamp`` (integer arithmetic) gives what ``Timestamp.FromDatetime`` gives: aware in any zone, naive as
    UTC, to the microsecond, before the epoch too."""
    from datetime import UTC, datetime, timedelta, timezone

    from google.protobuf.timestamp_pb2 import Timestamp

    from golf.api.convert import timestamp

    moments = [
        datetime(2026, 12, 1, 2, 3, 4, 567891, tzinfo=UTC),
        datetime(2026, 12, 1, 2, 3, 4, tzinfo=timezone(timedelta(hours=-7, minutes=-30))),
        datetime(1969, 12, 31, 23, 59, 59, 500000, tzinfo=UTC),
        datetime(2026, 6, 30, 23, 59, 59, 999999),
        datetime(1970, 1, 1, tzinfo=UTC),
    ]
    for when in moments:
        expected = Timestamp()
        expected.FromDatetime(when)
        assert timestamp(when) == expected, when
