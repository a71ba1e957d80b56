"""Help for the player over both transports and both databases: hints, undo (and its policies), AutoPlay, the
move log and the verdict after the game ("you could have won like this")."""

from __future__ import annotations

import re
from typing import Any

from golf.v1 import solitaire_pb2
from tests.e2e.support import (
    Board,
    Client,
    R,
    Reply,
    choose_move,
    draw,
    game_key,
    move_request,
    new_key,
    pb,
)

IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS
WON = solitaire_pb2.GAME_STATUS_WON
LOST = solitaire_pb2.GAME_STATUS_LOST
# A card code standing alone in text (not inside an id, an enum name or a hex digest).
CODE = re.compile(r"(?<![A-Za-z0-9_])([A2-9TJQK][CDHS])(?![A-Za-z0-9_])")
WINNABLE_PYSOL = 2  # PySolFC's Golf deal 2 can be won under the standard rules ...
UNWINNABLE_PYSOL = 1  # ... and deal 1 cannot.


def pysol_game(client: Client, number: int, **rules: object) -> tuple[solitaire_pb2.Deal, solitaire_pb2.Game]:
    req = pb.CreateDealRequest(preset="standard", pysol_deal_number=number)
    for name, value in rules.items():
        setattr(req.rules, name, value)
    deal = client.create_deal(req).expect_ok().deal
    game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    return deal, game


def seeded_game(client: Client, seed: str, **rules: object) -> solitaire_pb2.Game:
    req = pb.CreateDealRequest(preset="standard", seed=seed)
    for name, value in rules.items():
        setattr(req.rules, name, value)
    deal = client.create_deal(req).expect_ok().deal
    game: solitaire_pb2.Game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    return game


def hint(client: Client, game: solitaire_pb2.Game, key: str | None = None) -> Reply:
    return client.hint(pb.HintRequest(game_id=game.id, idempotency_key=key or new_key()))


def undo(client: Client, game: solitaire_pb2.Game, key: str | None = None, expected: int | None = None) -> Reply:
    req = pb.UndoRequest(game_id=game.id, idempotency_key=key or new_key())
    if expected is not None:
        req.expected_version = expected
    return client.undo(req)


def auto_play(client: Client, game: solitaire_pb2.Game, key: str | None = None) -> Reply:
    return client.auto_play(pb.AutoPlayRequest(game_id=game.id, idempotency_key=key or new_key()))


def is_legal(move: solitaire_pb2.Move, game: solitaire_pb2.Game) -> bool:
    """Whether the game offers ``move`` (a column by its number, a draw as such)."""
    kind = move.WhichOneof("kind")
    if kind == "draw_stock":
        return any(m.WhichOneof("kind") == kind for m in game.legal_moves)
    return any(
        m.WhichOneof("kind") == kind and m.play_column.column == move.play_column.column for m in game.legal_moves
    )


def follow_hints(client: Client, game: solitaire_pb2.Game) -> tuple[solitaire_pb2.Game, list[tuple[str, int]], int]:
    """Play the hinted move until the game ends; the end, every hint payload with the stock cards turned before
    it, and the hints asked for. Checks the count, a retry and the payload of each hint on the way."""
    payloads: list[tuple[str, int]] = []
    turned = 0
    hints = 0
    used = game.hints_used
    while game.status == IN_PROGRESS:
        assert not game.HasField("post_mortem"), "the verdict is shown only once the game is over"
        key = new_key()
        reply = hint(client, game, key)
        got = reply.expect_ok()
        hints += 1
        used += 1
        payloads.append((reply.raw, turned))
        assert not got.replayed
        assert got.game.hints_used == used and got.game.version == game.version, "a hint changes no position"
        assert is_legal(got.move, game), (got.move, game.legal_moves)
        if got.move.WhichOneof("kind") == "draw_stock":
            assert not got.move.draw_stock.HasField("card"), "a hinted draw names the card it would turn"
        if hints in (1, 7):
            again = hint(client, game, key)
            retried = again.expect_ok()
            payloads.append((again.raw, turned))
            assert retried.replayed and retried.move == got.move
            assert retried.game.hints_used == used, "a retried hint was counted twice"
        made = client.play_move(move_request(game, got.move, expected=game.version)).expect_ok()
        if made.move.WhichOneof("kind") == "draw_stock":
            turned += 1
        game = made.game
    return game, payloads, hints


def check_no_hidden_stock(payloads: list[tuple[str, int]], stock: list[str]) -> None:
    """No payload names a stock card that was still face down when it was sent."""
    for raw, turned in payloads:
        leaked = set(CODE.findall(raw)) & set(stock[turned:])
        assert not leaked, f"hint payload names stock cards still face down: {sorted(leaked)}: {raw[:400]}"


# -- hints and the verdict -------------------------------------------------------------------------------------
def test_following_hints_wins_a_winnable_deal(client: Client) -> None:
    deal, game = pysol_game(client, WINNABLE_PYSOL)
    assert not deal.HasField("winnable"), "a plain deal is not solved when it is made"
    first_key = new_key()
    first_reply = hint(client, game, first_key)
    first = first_reply.expect_ok()
    assert first.game.hints_used == 1
    end, payloads, hints = follow_hints(client, first.game)
    payloads.append((first_reply.raw, 0))
    hints += 1
    assert end.status == WON, f"following the hints did not win deal {WINNABLE_PYSOL}: {end}"
    assert end.hints_used == hints
    assert any(turned for _, turned in payloads), "no hinted draw was checked"
    # A retry of the first hint, even after the game moved on, is that hint, counted once.
    retried = hint(client, game, first_key).expect_ok()
    assert retried.replayed and retried.move == first.move and retried.game.hints_used == hints
    stock = [c.code for c in end.reveal.stock]
    assert len(stock) == deal.stock_count
    check_no_hidden_stock(payloads, stock)

    now = client.get_game(game.id).expect_ok().game
    assert now.hints_used == hints and now.status == WON
    post = now.post_mortem
    assert post.HasField("winnable") and post.winnable
    assert post.fewest_cards_left == 0
    # The winning line replays to a win on the client, from the deal's public layout; its draws turn the
    # revealed stock in order.
    board = Board.of(deal)
    for move in post.winning_line:
        board.apply(move)
    assert board.cards_left == 0
    assert board.turned == stock[: len(board.turned)]
    # The deal now carries the verdict, with a difficulty by the documented measure.
    decided = client.get_deal(deal.id).expect_ok().deal
    assert decided.HasField("winnable") and decided.winnable
    assert decided.difficulty != solitaire_pb2.DIFFICULTY_UNSPECIFIED
    assert decided.HasField("difficulty_score")
    # A finished game takes no hint.
    err = hint(client, now).expect_error(R.ERROR_REASON_GAME_OVER)
    assert err.game.hints_used == hints


def test_hints_toward_the_fewest_cards_when_the_deal_cannot_be_won(client: Client) -> None:
    deal, game = pysol_game(client, UNWINNABLE_PYSOL)
    end, payloads, hints = follow_hints(client, game)
    assert end.status == LOST
    # The move that ends a game need not wait for the solver's verdict; reading the game does.
    end = client.get_game(game.id).expect_ok().game
    post = end.post_mortem
    assert post.HasField("winnable") and not post.winnable
    assert not post.winning_line
    assert post.HasField("fewest_cards_left") and post.fewest_cards_left > 0
    # Hints lead to the fewest cards any line leaves.
    assert end.score == post.fewest_cards_left
    assert end.hints_used == hints
    check_no_hidden_stock(payloads, [c.code for c in end.reveal.stock])
    decided = client.get_deal(deal.id).expect_ok().deal
    assert decided.HasField("winnable") and not decided.winnable
    assert decided.difficulty == solitaire_pb2.DIFFICULTY_UNSPECIFIED


def test_post_mortem_only_once_the_game_is_over(client: Client) -> None:
    _, game = pysol_game(client, UNWINNABLE_PYSOL)
    assert not game.HasField("post_mortem")
    while game.status == IN_PROGRESS:
        game = client.play_move(move_request(game, choose_move(game), expected=game.version)).expect_ok().game
        if game.status == IN_PROGRESS:
            assert not game.HasField("post_mortem")
            assert not client.get_game(game.id).expect_ok().game.HasField("post_mortem")
    assert game.status == LOST
    again = client.get_game(game.id).expect_ok().game
    if game.HasField("post_mortem"):  # the ending move may answer before the verdict is in; GetGame waits
        assert again.post_mortem == game.post_mortem
    assert again.HasField("post_mortem")
    post = again.post_mortem
    assert post.HasField("winnable") and not post.winnable and not post.winning_line
    # Nobody can leave fewer cards than the fewest any line leaves.
    assert 0 < post.fewest_cards_left <= again.score
    # A finished game takes no undo and no AutoPlay.
    undo(client, again).expect_error(R.ERROR_REASON_GAME_OVER)
    auto_play(client, again).expect_error(R.ERROR_REASON_GAME_OVER)


def test_missing_keys_and_unknown_games(client: Client) -> None:
    game = seeded_game(client, "assist-refusals")
    actions: list[tuple[Any, Any]] = [
        (client.hint, pb.HintRequest),
        (client.undo, pb.UndoRequest),
        (client.auto_play, pb.AutoPlayRequest),
    ]
    for call, req in actions:
        err = call(req(game_id=game.id)).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
        assert err.field == "idempotencyKey"
        call(req(game_id="no-such-game", idempotency_key=new_key())).expect_error(R.ERROR_REASON_NOT_FOUND)
    client.list_moves("no-such-game").expect_error(R.ERROR_REASON_NOT_FOUND)
    assert client.list_moves(game.id).expect_ok().moves == []
    now = client.get_game(game.id).expect_ok().game
    assert (now.version, now.hints_used, now.undos_used) == (0, 0, 0)


# -- undo ------------------------------------------------------------------------------------------------------
def test_undo_back_to_the_start_with_the_log_marked(client: Client) -> None:
    start = seeded_game(client, "assist-undo")
    assert not start.HasField("undos_left"), "unlimited undo leaves undosLeft unset"
    game = start
    keys: list[str] = []
    played: list[solitaire_pb2.Move] = []
    for i in range(6):
        move = draw() if i % 3 == 1 else choose_move(game)
        made = client.play_move(move_request(game, move, expected=game.version)).expect_ok()
        played.append(made.move)
        game = made.game
    positions = [game_key(start)]
    board = Board.of_game(start)
    for move in played:
        board.apply(move)
        positions.append(board.key())
    assert positions[-1] == game_key(game)

    for n in range(1, 7):
        keys.append(new_key())
        reply = undo(client, game, keys[-1], expected=game.version).expect_ok()
        assert not reply.replayed
        game = reply.game
        assert game.version == 6 + n and game.undos_used == n and game.moves_played == 6 - n
        assert game_key(game) == positions[6 - n], f"undo {n} did not go back one move"
        if n == 1:
            # A retry returns the stored result and is stored once.
            again = undo(client, game, keys[-1], expected=5).expect_ok()
            assert again.replayed and again.game.version == game.version and again.game.undos_used == 1
            assert game_key(again.game) == game_key(game)
    assert game.legal_moves == start.legal_moves
    err = undo(client, game).expect_error(R.ERROR_REASON_NOTHING_TO_UNDO)
    assert err.game.version == 12

    log = client.list_moves(game.id).expect_ok().moves
    assert [e.seq for e in log] == list(range(1, 13))
    for entry, move in zip(log[:6], played, strict=True):
        assert entry.WhichOneof("kind") == "move"
        assert entry.move == move, "the log names each move as it was made"
        assert entry.undone_by == 13 - entry.seq
    for entry in log[6:]:
        assert entry.WhichOneof("kind") == "undo_of"
        assert entry.undo_of == 13 - entry.seq
        assert not entry.HasField("undone_by")
    # The same key for a move is another intent.
    err = client.play_move(move_request(game, choose_move(game), key=keys[0])).expect_error(
        R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED
    )
    assert client.get_game(game.id).expect_ok().game.version == 12


def test_undo_then_play_on(client: Client) -> None:
    game = seeded_game(client, "assist-undo-replay")
    first = client.play_move(move_request(game, draw())).expect_ok()
    back = undo(client, first.game).expect_ok().game
    assert game_key(back) == game_key(game)
    # The stock's order is fixed by the deal: the same card is turned again.
    again = client.play_move(move_request(back, draw(), expected=back.version)).expect_ok()
    assert again.move == first.move and again.game.version == 3 and again.game.moves_played == 1
    stale = undo(client, again.game, expected=1).expect_error(R.ERROR_REASON_STALE_VERSION)
    assert stale.game.version == 3
    log = client.list_moves(game.id).expect_ok().moves
    assert [e.WhichOneof("kind") for e in log] == ["move", "undo_of", "move"]
    assert log[0].undone_by == 2 and log[1].undo_of == 1 and not log[2].HasField("undone_by")


def test_undo_policy_none(client: Client) -> None:
    game = seeded_game(client, "assist-undo-none", undo_policy=solitaire_pb2.UNDO_POLICY_NONE)
    assert game.rules.undo_policy == solitaire_pb2.UNDO_POLICY_NONE
    assert game.HasField("undos_left") and game.undos_left == 0
    moved = client.play_move(move_request(game, draw())).expect_ok().game
    err = undo(client, moved).expect_error(R.ERROR_REASON_UNDO_NOT_ALLOWED)
    assert err.game.version == moved.version and game_key(err.game) == game_key(moved)
    now = client.get_game(game.id).expect_ok().game
    assert now.version == 1 and now.undos_used == 0


def test_undo_policy_limited(client: Client) -> None:
    game = seeded_game(client, "assist-undo-limited", undo_policy=solitaire_pb2.UNDO_POLICY_LIMITED, undo_limit=2)
    assert game.rules.undo_policy == solitaire_pb2.UNDO_POLICY_LIMITED and game.rules.undo_limit == 2
    assert game.undos_left == 2
    for _ in range(3):
        game = client.play_move(move_request(game, draw())).expect_ok().game
    game = undo(client, game).expect_ok().game
    assert (game.undos_used, game.undos_left) == (1, 1)
    game = undo(client, game).expect_ok().game
    assert (game.undos_used, game.undos_left) == (2, 0)
    err = undo(client, game).expect_error(R.ERROR_REASON_UNDO_LIMIT_REACHED)
    assert err.game.version == game.version == 5 and err.game.moves_played == 1
    # The limit is per game, and a move does not give an undo back.
    game = client.play_move(move_request(game, draw())).expect_ok().game
    undo(client, game).expect_error(R.ERROR_REASON_UNDO_LIMIT_REACHED)


def test_undo_policy_options_are_checked(client: Client) -> None:
    req = pb.CreateDealRequest(preset="standard", seed="assist-undo-bad")
    req.rules.undo_limit = -1
    err = client.create_deal(req).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == "rules.undoLimit"


# -- AutoPlay --------------------------------------------------------------------------------------------------
def wrap_game(client: Client) -> solitaire_pb2.Game:
    """A game on a new winnable deal under wrap (quick to solve)."""
    game: solitaire_pb2.Game = client.create_game(pb.CreateGameRequest(preset="wrap")).expect_ok().game
    return game


def test_autoplay_plays_a_run_and_undo_takes_it_back(client: Client) -> None:
    game = wrap_game(client)
    # Turn the stock until a column card fits.
    while not Board.of_game(game).fitting_columns():
        game = client.play_move(move_request(game, draw())).expect_ok().game
    before = game
    key = new_key()
    reply = auto_play(client, game, key).expect_ok()
    run = list(reply.moves)
    assert run and not reply.replayed
    assert all(m.WhichOneof("kind") == "play_column" for m in run), run
    board = Board.of_game(before)
    for move in run:
        board.apply(move)  # each card of the run fits where it is played
    after = reply.game
    assert board.key() == game_key(after)
    assert after.version == before.version + 1, "one AutoPlay is one entry of the log"
    assert after.moves_played == before.moves_played + len(run)

    again = auto_play(client, before, key).expect_ok()
    assert again.replayed and list(again.moves) == run and again.game.version == after.version
    assert client.get_game(game.id).expect_ok().game.version == after.version

    log = client.list_moves(game.id).expect_ok().moves
    assert log[-1].WhichOneof("kind") == "auto_play" and list(log[-1].auto_play.moves) == run

    # One undo takes the whole run back.
    back = undo(client, after).expect_ok().game
    assert game_key(back) == game_key(before)
    assert back.moves_played == before.moves_played and back.undos_used == 1
    log = client.list_moves(game.id).expect_ok().moves
    assert log[-2].WhichOneof("kind") == "auto_play" and log[-2].undone_by == log[-1].seq
    assert log[-1].undo_of == log[-2].seq
    # From the same position AutoPlay plays the same run.
    again = auto_play(client, back).expect_ok()
    assert list(again.moves) == run and game_key(again.game) == game_key(after)

    # Where it stopped: no column card fits, or the run stopped short to keep the win in reach (the deal was
    # winnable and only column cards were played, so following hints from here still wins).
    if Board.of_game(again.game).fitting_columns():
        end, _, _ = follow_hints(client, again.game)
        assert end.status == WON, "AutoPlay stopped while a card fitted, but the game could no longer be won"
    else:
        nothing = auto_play(client, again.game).expect_error(R.ERROR_REASON_NOTHING_TO_PLAY)
        assert nothing.game.version == again.game.version


def test_autoplay_with_nothing_to_play(client: Client) -> None:
    game = seeded_game(client, "assist-nothing-to-play")
    while Board.of_game(game).fitting_columns():
        game = client.play_move(move_request(game, draw())).expect_ok().game
    assert all(m.WhichOneof("kind") == "draw_stock" for m in game.legal_moves)
    err = auto_play(client, game).expect_error(R.ERROR_REASON_NOTHING_TO_PLAY)
    assert err.game.version == game.version and game_key(err.game) == game_key(game)
    assert client.get_game(game.id).expect_ok().game.version == game.version
    err = client.auto_play(pb.AutoPlayRequest(game_id=game.id)).expect_error(R.ERROR_REASON_INVALID_ARGUMENT)
    assert err.field == "idempotencyKey"
