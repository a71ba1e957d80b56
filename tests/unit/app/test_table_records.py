"""The stored text of tables (``golf.app.tables.records``): format 1 pinned, exact round trips of options and of
every entry of random matches, and clear errors for garbage; a stored log replays only whole (``replay_log``)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from golf.app.errors import InvalidArgument
from golf.app.tables import (
    BotAdded,
    Entry,
    SeatJoined,
    SeatLeft,
    SeatMoved,
    SeatResigned,
    TableOptions,
    TableStarted,
    TableStatus,
    add_bot,
    join,
    replay,
    start,
)
from golf.app.tables.records import (
    FORMAT_VERSION,
    LoggedEntry,
    TableRecord,
    TableRecordError,
    decode_entry,
    decode_options,
    encode_entry,
    encode_options,
    entry_seat,
)
from golf.app.tables.writer import replay_log
from golf.engine.cardgolf import PRESETS, DrawDiscard, DrawStock, Knock, Move, Reveal, Swap, UsePower, preset
from golf.engine.cardgolf.moves import Discard, Flip, Pass, PeekStroke
from tests.unit.app.table_checks import Driver, Plan, plans, play_humans

GOLDEN = [
    (SeatJoined(0, "ann"), '{"player_id":"ann","seat":0,"type":"join","v":1}'),
    (BotAdded(1, "greedy"), '{"bot":"greedy","seat":1,"type":"bot","v":1}'),
    (TableStarted(), '{"type":"start","v":1}'),
    (SeatMoved(2, Swap(5)), '{"move":"swap 5","seat":2,"type":"move","v":1}'),
    (SeatMoved(0, Reveal((0, 3))), '{"move":"reveal 0,3","seat":0,"type":"move","v":1}'),
    (SeatMoved(3, UsePower(1, 2, None)), '{"move":"power seat=1 pos=2","seat":3,"type":"move","v":1}'),
    (SeatLeft(1), '{"seat":1,"type":"leave","v":1}'),
    (SeatResigned(0), '{"seat":0,"type":"resign","v":1}'),
]


@pytest.mark.parametrize(("entry", "text"), GOLDEN)
def test_format_1_is_pinned(entry: Entry, text: str) -> None:
    """Stored logs stay readable: format 1 is exactly this text, both ways."""
    assert FORMAT_VERSION == 1
    assert encode_entry(entry) == text
    assert decode_entry(text) == entry


def test_every_kind_of_move_round_trips() -> None:
    moves: list[Move] = [DrawStock(), DrawDiscard(), Swap(0), Discard(), Flip(3), Pass(), Knock(), PeekStroke(2),
                         Reveal(()), Reveal((1,)), UsePower(), UsePower(None, 4), UsePower(2, 1, 0),
                         UsePower(None, None, 3)]  # fmt: skip
    for move in moves:
        entry = SeatMoved(1, move)
        assert decode_entry(encode_entry(entry)) == entry
    assert entry_seat(TableStarted()) is None and entry_seat(SeatMoved(4, Knock())) == 4


def test_options_text() -> None:
    options = TableOptions.build("four-card", rules={"knocker_penalty": "plus_10"}, seats=5, holes=3, join_code="ab12")
    text = encode_options(options)
    data = json.loads(text)
    assert data["v"] == 1 and data["preset"] == "four-card" and data["seats"] == 5 and data["join_code"] == "AB12"
    assert data["rules"] == json.loads(options.rules.canonical())  # every rule option, not only those changed
    assert decode_options(text) == options
    # A rule option added after a table was stored takes its default when the record is read.
    del data["rules"]["max_rounds"]
    assert decode_options(json.dumps(data)).rules.max_rounds == options.rules.max_rounds


def test_tables_stored_before_a_preset_changed_keep_their_rules() -> None:
    """six-card-jokers 3 seats four or more and scores a two 2; Powers 3's 2 no longer lends the ace's power. A table
    stored with version 2 keeps its seats and rules: its stored rules lack the options added since, which take the
    defaults of version 2."""
    jokers_2 = json.loads(preset("six-card-jokers", 2).canonical())
    assert "min_players" not in jokers_2 and "two_powers_from_three" not in jokers_2
    stored = json.dumps({"v": 1, "preset": "six-card-jokers", "rules": jokers_2, "seats": 2, "join_code": None})
    options = decode_options(stored)
    assert options.seats == 2 and options.rules == preset("six-card-jokers", 2) and options.rules.values[1] == -2
    powers_2 = json.loads(preset("powers", 2).canonical())
    stored = json.dumps({"v": 1, "preset": "powers", "rules": powers_2, "seats": 2, "join_code": None})
    assert not decode_options(stored).rules.two_powers_from_three
    # New tables follow the texts, and say so in their stored rules.
    with pytest.raises(InvalidArgument, match="4 or more players") as refused:
        TableOptions.build("six-card-jokers", seats=3)
    assert refused.value.field == "seats"
    made = json.loads(encode_options(TableOptions.build("six-card-jokers", seats=4)))["rules"]
    assert made["min_players"] == 4 and made["values"][1] == 2
    assert json.loads(encode_options(TableOptions.build("powers", seats=2)))["rules"]["two_powers_from_three"]


@given(
    preset=st.sampled_from(sorted(PRESETS)),
    seats=st.integers(2, 8),
    holes=st.integers(1, 18),
    code=st.one_of(st.none(), st.from_regex(r"[A-Za-z0-9]{4,16}", fullmatch=True)),
)
@settings(max_examples=60, deadline=None, database=None)
def test_options_round_trip(preset: str, seats: int, holes: int, code: str | None) -> None:
    try:
        options = TableOptions.build(preset, seats=seats, holes=holes, join_code=code)
    except Exception:
        return  # too many seats for the preset's decks
    text = encode_options(options)
    assert decode_options(text) == options and encode_options(decode_options(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[]",
        '"x"',
        "{}",
        '{"type":"start"}',
        '{"type":"start","v":2}',
        '{"type":"start","v":true}',
        '{"type":"start","v":"1"}',
        '{"type":"explode","v":1}',
        '{"type":"start","v":1,"seat":0}',
        '{"seat":0,"type":"leave","v":1,"extra":1}',
        '{"type":"leave","v":1}',
        '{"seat":-1,"type":"leave","v":1}',
        '{"seat":true,"type":"leave","v":1}',
        '{"seat":1.0,"type":"leave","v":1}',
        '{"seat":"1","type":"leave","v":1}',
        '{"player_id":"","seat":0,"type":"join","v":1}',
        '{"player_id":7,"seat":0,"type":"join","v":1}',
        '{"bot":null,"seat":0,"type":"bot","v":1}',
        '{"move":"fly","seat":0,"type":"move","v":1}',
        '{"move":"swap x","seat":0,"type":"move","v":1}',
        '{"move":"power seat","seat":0,"type":"move","v":1}',
        '{"move":"SWAP 5","seat":0,"type":"move","v":1}',
        '{"move":" swap 5","seat":0,"type":"move","v":1}',
        '{"move":"power pos=1 seat=2","seat":0,"type":"move","v":1}',
    ],
)
def test_garbage_entries_are_refused_clearly(text: str) -> None:
    with pytest.raises(TableRecordError, match="table entry"):
        decode_entry(text)


def test_garbage_options_are_refused_clearly() -> None:
    good = json.loads(encode_options(TableOptions.build("six-card", seats=3)))
    bad: list[object] = [
        "nope",
        {**good, "v": 9},
        {**good, "preset": "no-such"},
        {**good, "seats": 1},
        {**good, "seats": "3"},
        {**good, "join_code": "a b"},
        {**good, "join_code": 12},
        {**good, "rules": []},
        {**good, "rules": {**good["rules"], "rows": 7}},
        {**good, "rules": {**good["rules"], "no_such_option": 1}},
        {**good, "rules": {**good["rules"], "start_mode": "sideways"}},
        {**good, "rules": {**good["rules"], "powers": 5}},
        {key: value for key, value in good.items() if key != "seats"},
        {**good, "extra": 1},
    ]
    for item in bad:
        text = item if isinstance(item, str) else json.dumps(item)
        with pytest.raises(TableRecordError, match="table options"):
            decode_options(text)


@settings(max_examples=12, deadline=None, derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(plan=plans(), preset=st.sampled_from(sorted(PRESETS)))
def test_random_matches_round_trip_through_their_stored_text(plan: Plan, preset: str) -> None:
    """A random table (people playing random legal moves, bots, now and then a resignation), played to the end:
    every entry decodes to itself and the decoded options and log replay to an equal table."""
    rng = random.Random(plan.rng_seed)
    try:
        opts = TableOptions.build(preset, seats=plan.seats, holes=plan.holes)
    except Exception:
        return  # too many seats for the preset's decks
    d = Driver(opts, seed=f"records-{plan.rng_seed:x}", scan_views=False)
    for seat, kind in enumerate(plan.kinds):
        if kind == "human":
            d.do(join, f"player-{seat}", seat)
        else:
            d.do(add_bot, kind, seat)
    d.do(start)
    play_humans(d, rng, resign_chance=0.02)
    assert d.table.status is TableStatus.OVER
    texts = [encode_entry(e) for e in d.log]
    decoded = [decode_entry(t) for t in texts]
    assert decoded == d.log and [encode_entry(e) for e in decoded] == texts
    assert replay(decode_options(encode_options(opts)), d.seed, decoded) == d.table


def test_a_stored_log_replays_only_whole_and_as_the_table_accepts_it() -> None:
    """``replay_log`` (what the table writer does with a store's ``load_table``): the whole log, 1 to the record's
    version, replays to the table; a gap, a short log or an entry the table refuses is ``TableRecordError``."""
    options = TableOptions.build("six-card", seats=2)
    at = datetime(2026, 1, 1, tzinfo=UTC)
    entries = [SeatJoined(0, "ann"), BotAdded(1, "greedy"), TableStarted()]
    log = [LoggedEntry(n, entry, at) for n, entry in enumerate(entries, start=1)]
    record = TableRecord("t", options, "seed", "ann", at, version=3, status=TableStatus.PLAYING)
    assert replay_log(record, log) == replay(options, "seed", entries)
    with pytest.raises(TableRecordError, match="entries 1 to 3"):
        replay_log(record, [log[0], log[2]])
    with pytest.raises(TableRecordError, match="entries 1 to 3"):
        replay_log(record, log[:2])
    refused = [*log[:2], LoggedEntry(3, SeatJoined(1, "bob"), at)]  # seat 1 is the bot's
    with pytest.raises(TableRecordError, match="does not replay"):
        replay_log(record, refused)
