"""The API contract over real sockets, on both transports: retries, stale versions, refusals, unknown ids, paging."""

from __future__ import annotations

import pytest

from golf.v1 import solitaire_pb2
from tests.e2e.support import (
    Client,
    R,
    Rest,
    Server,
    choose_move,
    draw,
    metric_sum,
    move_request,
    new_key,
    pb,
    play,
    scrub,
    unfit_column,
)

# The tests read the legal moves from the game rather than hard-coding a layout.
SEED = "e2e-contract-seed"


def new_game(client: Client, **rules: bool) -> solitaire_pb2.Game:
    req = pb.CreateDealRequest(preset="standard", seed=SEED)
    for name, value in rules.items():
        setattr(req.rules, name, value)
    deal = client.create_deal(req).expect_ok().deal
    game: solitaire_pb2.Game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    assert game.version == 0 and game.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS
    return game


def same_position(a: solitaire_pb2.Game, b: solitaire_pb2.Game) -> None:
    """Equal games apart from times (refusals must leave the game as it was)."""
    assert scrub(a) == scrub(b)
    assert a.id == b.id and a.version == b.version


def test_idempotent_retry_is_stored_once(client: Client) -> None:
    game = new_game(client)
    move = choose_move(game)
    req = move_request(game, move, expected=game.version)
    first = client.play_move(req).expect_ok()
    assert not first.replayed
    assert first.game.version == game.version + 1

    again = client.play_move(req).expect_ok()
    assert again.replayed
    assert scrub(again.game) == scrub(first.game)
    assert again.move == first.move
    # The stale expected_version of a retry does not matter: it is the same request.
    now = client.get_game(game.id).expect_ok().game
    assert now.version == game.version + 1, "the retried move was stored twice"
    assert now.moves_played == 1

    # A retry without expected_version, and a retry naming the card actually played, are the same intent too.
    loose = move_request(game, move, key=req.idempotency_key)
    assert client.play_move(loose).expect_ok().replayed
    assert client.get_game(game.id).expect_ok().game.version == game.version + 1


def test_a_move_goes_through_group_commit_on_postgresql(server: Server, client: Client) -> None:
    """``/metrics`` counts the moves group commit stored (PostgreSQL; SQLite has no group commit)."""
    game = new_game(client)
    before = metric_sum(server, "golf_db_group_commit_entries_total")
    # Even the first move goes ahead on the game this process keeps since it made it, without reading it back.
    game = client.play_move(move_request(game, choose_move(game), expected=game.version)).expect_ok().game
    client.play_move(move_request(game, choose_move(game), expected=game.version)).expect_ok()
    after = metric_sum(server, "golf_db_group_commit_entries_total")
    if server.database_url.startswith("postgresql"):
        assert after == before + 2
        assert metric_sum(server, "golf_db_group_commit_statements_total") >= 1
    else:
        assert after == before == 0


def test_retry_after_later_moves_returns_the_first_result(client: Client) -> None:
    game = new_game(client)
    first_req = move_request(game, choose_move(game))
    first = client.play_move(first_req).expect_ok()
    second = client.play_move(move_request(first.game, choose_move(first.game))).expect_ok()
    again = client.play_move(first_req).expect_ok()
    assert again.replayed
    assert again.game.version == first.game.version
    assert scrub(again.game) == scrub(first.game)
    assert client.get_game(game.id).expect_ok().game.version == second.game.version


def test_same_key_for_another_move_is_refused(client: Client) -> None:
    game = new_game(client)
    key = new_key()
    first = client.play_move(move_request(game, draw(), key=key)).expect_ok()
    column_move = move_request(first.game, play(0), key=key)
    err = client.play_move(column_move).expect_error(R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED)
    assert err.field == "idempotencyKey"
    assert client.get_game(game.id).expect_ok().game.version == first.game.version
    # The same key in another game is a different request.
    other = new_game(client)
    assert not client.play_move(move_request(other, draw(), key=key)).expect_ok().replayed


def test_stale_expected_version_returns_the_current_game(client: Client) -> None:
    game = new_game(client)
    moved = client.play_move(move_request(game, draw(), expected=0)).expect_ok().game
    assert moved.version == 1
    stale = move_request(moved, choose_move(moved), expected=0)
    err = client.play_move(stale).expect_error(R.ERROR_REASON_STALE_VERSION)
    assert err.HasField("game")
    same_position(err.game, moved)
    future = move_request(moved, choose_move(moved), expected=7)
    client.play_move(future).expect_error(R.ERROR_REASON_STALE_VERSION)
    same_position(client.get_game(game.id).expect_ok().game, moved)
    # With the version the error gave, the move goes through.
    ok = client.play_move(move_request(err.game, choose_move(err.game), expected=err.game.version)).expect_ok()
    assert ok.game.version == 2


def _refused(client: Client, game: solitaire_pb2.Game, move: solitaire_pb2.Move, reason: int) -> None:
    err = client.play_move(move_request(game, move)).expect_error(reason)
    assert err.message
    assert err.HasField("game"), "a refused move carries the game as it stands"
    same_position(err.game, game)
    same_position(client.get_game(game.id).expect_ok().game, game)


def test_illegal_moves_have_reason_codes_and_change_nothing(client: Client) -> None:
    game = new_game(client)
    # Turn the stock until some column's front does not fit (almost always at once).
    while unfit_column(game) is None:
        game = client.play_move(move_request(game, draw())).expect_ok().game
    col = unfit_column(game)
    assert col is not None
    front = game.columns[col].cards[-1]
    on_king = game.pile_top.rank == 13 and front.rank == 12
    expected = R.ERROR_REASON_NOTHING_ON_KING if on_king else R.ERROR_REASON_NOT_ADJACENT_RANK
    _refused(client, game, play(col), expected)

    err = client.play_move(move_request(game, play(len(game.columns)))).expect_error(R.ERROR_REASON_NO_SUCH_COLUMN)
    assert err.field == "move"
    client.play_move(move_request(game, play(-1))).expect_error(R.ERROR_REASON_NO_SUCH_COLUMN)
    same_position(client.get_game(game.id).expect_ok().game, game)

    # Naming a card that is not at the front of the column.
    wrong = solitaire_pb2.Move()
    wrong.play_column.column = 0
    other = next(c for c in game.columns[1].cards if c.code != game.columns[0].cards[-1].code)
    wrong.play_column.card.code = other.code
    _refused(client, game, wrong, R.ERROR_REASON_CARD_MISMATCH)


def test_nothing_goes_on_a_king(client: Client) -> None:
    # Standard rules: play until the pile shows a king with a queen in front of some column, then try the queen.
    game = new_game(client)
    for _ in range(200):
        if game.status != solitaire_pb2.GAME_STATUS_IN_PROGRESS:
            break
        if game.pile_top.rank == 13:
            queens = [i for i, c in enumerate(game.columns) if c.cards and c.cards[-1].rank == 12]
            if queens:
                _refused(client, game, play(queens[0]), R.ERROR_REASON_NOTHING_ON_KING)
                return
        game = client.play_move(move_request(game, choose_move(game))).expect_ok().game
    pytest.fail("the fixed deal no longer shows a queen in front on a king: pick another seed")


def test_draw_only_when_stuck_and_stock_empty_and_game_over(client: Client) -> None:
    game = new_game(client, draw_only_when_stuck=True)
    refused_draw = False
    while game.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS:
        plays = [m for m in game.legal_moves if m.WhichOneof("kind") == "play_column"]
        if plays:
            assert all(m.WhichOneof("kind") == "play_column" for m in game.legal_moves), "draw offered"
            if not refused_draw:
                _refused(client, game, draw(), R.ERROR_REASON_DRAW_NOT_ALLOWED)
                refused_draw = True
        if game.stock_count == 0 and plays:
            _refused(client, game, draw(), R.ERROR_REASON_STOCK_EMPTY)
        game = client.play_move(move_request(game, choose_move(game))).expect_ok().game
    assert refused_draw
    assert not game.legal_moves
    assert game.HasField("reveal")
    err = client.play_move(move_request(game, draw())).expect_error(R.ERROR_REASON_GAME_OVER)
    same_position(err.game, game)
    client.play_move(move_request(game, play(0))).expect_error(R.ERROR_REASON_GAME_OVER)


def test_column_empty(client: Client) -> None:
    game = new_game(client, wrap=True)
    while game.status == solitaire_pb2.GAME_STATUS_IN_PROGRESS:
        empty = [i for i, c in enumerate(game.columns) if not c.cards]
        if empty:
            _refused(client, game, play(empty[0]), R.ERROR_REASON_COLUMN_EMPTY)
            return
        game = client.play_move(move_request(game, choose_move(game))).expect_ok().game
    pytest.fail("no column was emptied on the fixed deal: pick another seed")


def test_unknown_ids_are_not_found(client: Client) -> None:
    missing = "00000000-0000-0000-0000-000000000000"
    assert client.get_game(missing).expect_error(R.ERROR_REASON_NOT_FOUND).message
    client.get_deal(missing).expect_error(R.ERROR_REASON_NOT_FOUND)
    client.create_game(pb.CreateGameRequest(deal_id=missing)).expect_error(R.ERROR_REASON_NOT_FOUND)
    req = pb.PlayMoveRequest(game_id=missing, idempotency_key=new_key())
    req.move.CopyFrom(draw())
    client.play_move(req).expect_error(R.ERROR_REASON_NOT_FOUND)


def test_missing_move_or_key_is_invalid(client: Client) -> None:
    game = new_game(client)
    no_move = pb.PlayMoveRequest(game_id=game.id, idempotency_key=new_key())
    assert client.play_move(no_move).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "move"
    empty_move = pb.PlayMoveRequest(game_id=game.id, idempotency_key=new_key(), move=solitaire_pb2.Move())
    assert client.play_move(empty_move).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "move"
    no_key = pb.PlayMoveRequest(game_id=game.id, move=draw())
    assert client.play_move(no_key).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "idempotencyKey"
    long_key = pb.PlayMoveRequest(game_id=game.id, move=draw(), idempotency_key="k" * 129)
    assert client.play_move(long_key).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "idempotencyKey"
    bad_card = move_request(game, play(0))
    bad_card.move.play_column.card.code = "ZZ"
    err = client.play_move(bad_card).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == "move.playColumn.card.code"
    assert client.get_game(game.id).expect_ok().game.version == 0
    bad_preset = client.create_deal(pb.CreateDealRequest(preset="no-such-preset"))
    assert bad_preset.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "preset"
    too_many = pb.CreateDealRequest()
    too_many.rules.decks = 9
    assert client.create_deal(too_many).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "rules.decks"
    assert client.list_games(page_size=1000).expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageSize"
    bad_token = client.list_games(page_token="not-a-token")
    assert bad_token.expect_error(R.ERROR_REASON_INVALID_ARGUMENT).field == "pageToken"


def test_list_games_pages_through_every_game(client: Client) -> None:
    made = {new_game(client).id for _ in range(5)}
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = client.list_games(page_size=2, page_token=token).expect_ok()
        assert len(page.games) <= 2
        seen += [g.id for g in page.games]
        pages += 1
        token = page.next_page_token
        if not token:
            break
        assert pages < 1000
    assert len(seen) == len(set(seen)), "a game was listed twice"
    assert made <= set(seen)
    listed = {g.id: g for g in client.list_games(page_size=100).expect_ok().games}
    assert set(seen) <= set(listed) or len(listed) == 100
    # Newest first: the five games just made come before anything older, in reverse creation order.
    first = client.list_games(page_size=5).expect_ok().games
    assert {g.id for g in first} == made
    times = [(g.create_time.ToDatetime(), g.id) for g in first]
    assert times == sorted(times, reverse=True)


# -- REST bodies that are not valid requests: always 400 INVALID_ARGUMENT naming the field, never a 500 ---------
_MOVE = '"move":{"drawStock":{}}'
MALFORMED_MOVES: list[tuple[bytes, str]] = [
    (b"{", "body"),
    (b"\xff\xfe not utf-8", "body"),
    (b'{"move":{"drawStock":{}},"idempotencyKey":5}', "idempotencyKey"),
    (b'{"move":{"playColumn":{"column":"x"}},"idempotencyKey":"k"}', "move.playColumn.column"),
    (b'{"move":{"playColumn":{"column":1.5}},"idempotencyKey":"k"}', "move.playColumn.column"),
    (b'{"move":{"playColumn":{"column":2147483648}},"idempotencyKey":"k"}', "move.playColumn.column"),
    (b'{"move":{"playColumn":{"column":0,"card":{"rank":"RANK_X"}}},"idempotencyKey":"k"}',
     "move.playColumn.card.rank"),
    (b'{"move":{"bogus":{}},"idempotencyKey":"k"}', "move"),  # an unknown key is ignored: the move has no kind
    (b'{"move":{"playColumn":{"column":0},"drawStock":{}},"idempotencyKey":"k"}', "move"),
    (b'{' + _MOVE.encode() + b',"idempotencyKey":"k","expectedVersion":"abc"}', "expectedVersion"),
    (b'{' + _MOVE.encode() + b'}', "idempotencyKey"),
    (b'{"idempotencyKey":"k"}', "move"),
    (b'{"move":null,"idempotencyKey":"k"}', "move"),
    (b"", "move"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "field"), MALFORMED_MOVES, ids=[f"body{i}" for i in range(len(MALFORMED_MOVES))])
def test_malformed_move_bodies_are_400_naming_the_field(rest: Rest, body: bytes, field: str) -> None:
    game = new_game(rest)
    resp = rest.http.post(f"/v1/games/{game.id}/moves", content=body, headers={"content-type": "application/json"})
    err = rest.reply(resp, pb.PlayMoveResponse).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.message
    assert err.field == field, f"{body!r}: field {err.field!r}, expected {field!r} ({err.message})"
    assert rest.get_game(game.id).expect_ok().game.version == 0


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("GET", "/v1/games?pageSize=abc", None, "pageSize"),
        ("POST", "/v1/games", b'{"rules":{"decks":"x"}}', "rules.decks"),
        ("POST", "/v1/games", b'{"rules":5}', "rules"),
        ("POST", "/v1/deals", b'{"pysolDealNumber":"x"}', "pysolDealNumber"),
        ("POST", "/v1/deals", b'{"seed":"s","pysolDealNumber":3}', "seed"),
        ("POST", "/v1/deals", b'{"rules":{"undoPolicy":"UNDO_POLICY_NOPE"}}', "rules.undoPolicy"),
        ("POST", "/v1/deals", b"null", "body"),
        ("POST", "/v1/deals", b"[]", "body"),
    ],
)
def test_malformed_requests_are_400_naming_the_field(
    rest: Rest, method: str, path: str, body: bytes | None, field: str
) -> None:
    resp = rest.http.request(method, path, content=body, headers={"content-type": "application/json"})
    response = {"/v1/deals": pb.CreateDealResponse, "/v1/games": pb.CreateGameResponse}.get(path, pb.ListGamesResponse)
    err = rest.reply(resp, response).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == field, f"{body!r}: field {err.field!r}, expected {field!r} ({err.message})"
