"""Hidden information: whole games over both transports, every payload scanned for stock cards not yet turned
and for the seed; at the end the reveal is checked against the commitment and the deal, from the client side."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from golf.v1 import errors_pb2, solitaire_pb2
from tests.e2e.hidden_information import IN_PROGRESS, Seen, check_payload
from tests.e2e.support import (
    Client,
    Reply,
    choose_move,
    commitment,
    deal_from_seed,
    draw,
    move_request,
    pb,
    play,
    unfit_column,
)

CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "standard": ("standard", {}),
    "queens-on-kings": ("queens-on-kings", {}),
    "wrap": ("wrap", {}),
    "two-decks": ("two-decks", {}),
    "draw-only-when-stuck": ("standard", {"draw_only_when_stuck": True}),
    "two-decks-stuck": ("two-decks", {"draw_only_when_stuck": True}),
}


@dataclass
class Recorder:
    """Plays one game and keeps every payload for the checks made once the stock is revealed."""

    client: Client
    payloads: list[Seen] = field(default_factory=list)
    turned: int = 0
    over: bool = False
    drawn: list[str] = field(default_factory=list)

    def __call__(self, reply: Reply) -> Reply:
        self.payloads.append(Seen(reply, self.turned, self.over))
        return reply

    def record_move(self, reply: Reply) -> Reply:
        """A successful (first) draw turns a stock card: the player may know it from this payload on."""
        if reply.ok and not reply.message.replayed and reply.message.move.WhichOneof("kind") == "draw_stock":
            self.turned += 1
            self.drawn.append(reply.message.move.draw_stock.card.code)
        if reply.ok and reply.message.game.status != IN_PROGRESS:
            self.over = True
        self.payloads.append(Seen(reply, self.turned, self.over))
        return reply


def play_recorded(client: Client, preset: str, rules: dict[str, Any], seed: str | None) -> None:
    rec = Recorder(client)
    req_rules = solitaire_pb2.SolitaireRules(**rules)
    if seed is None:
        # The server draws the seed; the client learns the deal from the game and its deal.
        # Two-deck deals come as they fall (solving them is slow); the others are winnable deals.
        request = pb.CreateGameRequest(preset=preset, rules=req_rules, winnable_only=preset != "two-decks")
        game = rec(client.create_game(request)).expect_ok().game
        deal = rec(client.get_deal(game.deal_id)).expect_ok().deal
    else:
        deal = rec(client.create_deal(pb.CreateDealRequest(preset=preset, rules=req_rules, seed=seed))).expect_ok()
        deal = deal.deal
        game = rec(client.create_game(pb.CreateGameRequest(deal_id=deal.id))).expect_ok().game
    assert deal.shuffle_algorithm == "golf-shuffle-v1"
    columns = [[c.code for c in col.cards] for col in deal.columns]
    last: pb.PlayMoveRequest | None = None
    step = 0
    while game.status == IN_PROGRESS:
        step += 1
        assert step < 1000
        req = move_request(game, choose_move(game), expected=game.version)
        reply = rec.record_move(client.play_move(req))
        game = reply.expect_ok().game
        probe = step % 6
        if probe == 0 and last is not None:
            rec.record_move(client.play_move(last)).expect_ok()  # replayed
        elif probe == 1:
            rec(client.play_move(move_request(game, draw(), expected=game.version - 1)))  # stale
        elif probe == 2:
            col = unfit_column(game)
            rec(client.play_move(move_request(game, play(col if col is not None else 99))))
            rec(client.play_move(move_request(game, draw(), key=req.idempotency_key)))  # key reuse
        elif probe == 3:
            rec(client.get_game(game.id)).expect_ok()
        elif probe == 4:
            rec(client.list_games(page_size=3)).expect_ok()
        else:
            rec(client.get_deal(deal.id)).expect_ok()
            extra = client.play_move(move_request(game, draw()))  # legal or not (draw only when stuck)
            if extra.ok:
                game = rec.record_move(extra).message.game
            else:
                rec(extra)
        last = req
    final = rec(client.get_game(game.id)).expect_ok().game
    rec(client.play_move(move_request(final, draw()))).expect_error(errors_pb2.ERROR_REASON_GAME_OVER)

    # The reveal: the seed and the whole stock, checked against the commitment published at the start.
    seed_shown = final.reveal.seed
    stock = [c.code for c in final.reveal.stock]
    if seed is not None:
        assert seed_shown == seed
    assert len(stock) == deal.stock_count
    assert stock[: rec.turned] == rec.drawn, "the revealed stock is not the one the draws turned"
    assert deal.commitment == commitment(deal.shuffle_algorithm, seed_shown, final.rules)
    # The whole deal follows from the seed by the published algorithm.
    assert deal_from_seed(final.rules, seed_shown) == (columns, deal.start_card.code, stock)
    for seen in rec.payloads:
        check_payload(seen, game.id, columns, deal.start_card.code, stock, seed_shown)


@pytest.mark.parametrize("config", list(CONFIGS))
def test_no_payload_shows_unturned_stock_or_seed(client: Client, config: str) -> None:
    preset, rules = CONFIGS[config]
    for seed in (f"hidden-{config}-1", None):
        play_recorded(client, preset, rules, seed)


def test_a_draw_naming_a_card_does_not_tell_the_next_stock_card(client: Client) -> None:
    """Sending a draw that names a card must not act as an oracle for the next (hidden) stock card."""
    seed = "oracle-seed"
    deal = client.create_deal(pb.CreateDealRequest(seed=seed)).expect_ok().deal
    _, _, stock = deal_from_seed(deal.rules, seed)  # the test knows the stock; a player must not learn it
    replies = {}
    for name, code in (("right", stock[0]), ("wrong", next(c for c in stock[1:] if c != stock[0]))):
        game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
        move = solitaire_pb2.Move()
        move.draw_stock.card.code = code
        replies[name] = client.play_move(move_request(game, move))
    right, wrong = replies["right"], replies["wrong"]
    outcome = {name: (r.ok, r.error.reason if r.error else None) for name, r in replies.items()}
    assert (right.ok, right.error and right.error.reason) == (wrong.ok, wrong.error and wrong.error.reason), (
        f"a draw naming the next stock card is answered differently from one naming another card: {outcome}"
    )


def test_pysol_deal_commitment_names_its_algorithm(client: Client) -> None:
    """A PySolFC deal publishes ``shuffleAlgorithm: pysolfc``; its commitment must check out with that name."""
    deal = client.create_deal(pb.CreateDealRequest(pysol_deal_number=11)).expect_ok().deal
    assert deal.shuffle_algorithm == "pysolfc" and deal.pysol_deal_number == 11
    game = client.create_game(pb.CreateGameRequest(deal_id=deal.id)).expect_ok().game
    while game.status == IN_PROGRESS:
        game = client.play_move(move_request(game, choose_move(game))).expect_ok().game
    seed = game.reveal.seed
    assert seed
    assert deal.commitment == commitment(deal.shuffle_algorithm, seed, game.rules), (
        f"commitment of {seed!r} does not match with algorithm {deal.shuffle_algorithm!r} "
        f"(it does with golf-shuffle-v1: {deal.commitment == commitment('golf-shuffle-v1', seed, game.rules)})"
    )
