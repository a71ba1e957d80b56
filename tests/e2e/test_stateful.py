"""A stateful property test: random sequences of calls over both transports against one real server, and every
stored game checked after every step against a model, and against the engine replaying the game's stored log.

The machine plays two players, each with a REST and a gRPC client. Its rules create games (presets and small
custom layouts, on a new server deal or on a client-seeded deal, over either transport), play a random legal
move, draw, undo, retry a stored request under its idempotency key, send forged or illegal moves (a wrong card, a
column outside the layout, an empty or unfitting column, a stale ``expectedVersion``, a used idempotency key with
another intent, a draw naming its card, another player's game) and list the players' games.

The model keeps, per game, every accepted change (its log entry, key, request and reply) and which entries undos
took back. After each step, for every game in the model:

- GetGame over REST equals GetGame over gRPC (the REST body parsed into the proto message), but for ``elapsed``;
- ``version`` is the number of accepted changes; a step that changed nothing left the game exactly as it was;
- ListMoves is the model's log (codes, ``undoOf``, ``undoneBy``);
- the deal replayed through the stored log with the pure engine (``State.apply``) and shown through the service's
  one view function (``view``, converted with ``golf.api.convert``) is the game the server returns: columns,
  pile, stock count, status, score, legal moves, moves played, undos; a drawn card is the same card whenever its
  stock position is turned again after an undo; an ended game reveals the seed whose golf-shuffle-v1 deal is the
  stored deal, matches the commitment and turns the logged cards; the game is ranked unless an undo took back a
  stock draw (each game is its owner's first on a deal of its own);
- the model's own line replayed with the client's independent rules (``Board``) lands on the same position.

Another player finds a game in progress nowhere (NOT_FOUND) and may read a finished one's game or log only once its
deal is out of play (``golf.app.reveals``): these deals (made for one game, or from a client's seed) never close,
so the reads are refused with DEAL_IN_PLAY.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, cast

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from golf.api.convert import card_to_proto, move_to_proto
from golf.app.records import shows_stock
from golf.engine.cards import Card
from golf.engine.solitaire.moves import Draw, PlayColumn, parse_move
from golf.engine.solitaire.rules import PRESETS, SolitaireRules, UndoPolicy
from golf.engine.solitaire.state import Layout, State, Status
from golf.engine.solitaire.view import view
from golf.v1 import cards_pb2, errors_pb2, solitaire_pb2
from tests.e2e.support import (
    Board,
    Client,
    Grpc,
    R,
    Reply,
    Rest,
    Server,
    commitment,
    deal_from_seed,
    fits,
    game_key,
    new_key,
    pb,
    scrub,
)

IN_PROGRESS = solitaire_pb2.GAME_STATUS_IN_PROGRESS
_STATUS = {
    Status.IN_PROGRESS: solitaire_pb2.GAME_STATUS_IN_PROGRESS,
    Status.WON: solitaire_pb2.GAME_STATUS_WON,
    Status.LOST: solitaire_pb2.GAME_STATUS_LOST,
}
_UNDO_POLICY = {
    solitaire_pb2.UNDO_POLICY_UNLIMITED: UndoPolicy.UNLIMITED,
    solitaire_pb2.UNDO_POLICY_LIMITED: UndoPolicy.LIMITED,
    solitaire_pb2.UNDO_POLICY_NONE: UndoPolicy.NONE,
}
UNDO = "U"
MAX_GAMES = 3
TRANSPORTS = st.sampled_from(["rest", "grpc"])
PICK = st.integers(min_value=0, max_value=2**16)

# Small layouts end within a few steps (a stock of one to three cards: lost; three or four cards in the columns:
# won), so ended games, their reveals and what other players may do to them are reached too. No two-deck layout: the
# solver (a finished game's verdict) would be slow. Every game is dealt with winnable_only=False: no winnable-deal
# search runs.
LAYOUTS: list[tuple[str, dict[str, Any]]] = [
    ("standard", {}),
    ("wrap", {}),
    ("queens-on-kings", {}),
    ("standard", {"columns": 10, "column_height": 5}),
    ("standard", {"columns": 12, "column_height": 4, "draw_only_when_stuck": True}),
    ("wrap", {"columns": 8, "column_height": 6, "undo_policy": UndoPolicy.LIMITED, "undo_limit": 1}),
    ("queens-on-kings", {"columns": 10, "column_height": 5, "undo_policy": UndoPolicy.NONE}),
    ("wrap", {"columns": 3, "column_height": 1, "undo_policy": UndoPolicy.LIMITED, "undo_limit": 2}),
    ("standard", {"columns": 2, "column_height": 2}),
]
_POLICY_PROTO = {v: k for k, v in _UNDO_POLICY.items()}
SOAK = int(os.environ.get("GOLF_STATEFUL_SOAK", "0"))
"""Set to run that many random (not derandomized) examples of 50 steps instead, to hunt for bugs locally."""
SETTINGS = settings(
    max_examples=SOAK or 10,
    stateful_step_count=50 if SOAK else 25,
    deadline=None,
    # The same runs every time (in CI too) and no example database: a failure is reproduced by running again.
    derandomize=not SOAK,
    database=None,
    # Every step is several round trips to a real server.
    suppress_health_check=[HealthCheck.too_slow],
)


# -- conversions -------------------------------------------------------------------------------------------------
def engine_card(card: cards_pb2.Card) -> Card:
    return Card.parse(card.code)


def engine_rules(msg: solitaire_pb2.SolitaireRules) -> SolitaireRules:
    return SolitaireRules(
        decks=msg.decks,
        columns=msg.columns,
        column_height=msg.column_height,
        wrap=msg.wrap,
        queens_on_kings=msg.queens_on_kings,
        draw_only_when_stuck=msg.draw_only_when_stuck,
        undo_policy=_UNDO_POLICY[msg.undo_policy],
        undo_limit=msg.undo_limit,
    )


def rules_request(overrides: dict[str, Any]) -> solitaire_pb2.SolitaireRules:
    msg = solitaire_pb2.SolitaireRules()
    for name, value in overrides.items():
        setattr(msg, name, _POLICY_PROTO[value] if name == "undo_policy" else value)
    return msg


def logged_code(entry: solitaire_pb2.LoggedMove) -> str:
    """A log entry as the model writes it: the move's code with its card, or ``U``."""
    kind = entry.WhichOneof("kind")
    assert kind in ("move", "undo_of"), f"unexpected log entry {entry}"
    return UNDO if kind == "undo_of" else proto_code(entry.move)


def proto_code(move: solitaire_pb2.Move) -> str:
    if move.WhichOneof("kind") == "draw_stock":
        assert move.draw_stock.HasField("card"), f"a made draw names its card: {move}"
        return f"T:{move.draw_stock.card.code}"
    assert move.play_column.HasField("card"), f"a made play names its card: {move}"
    return f"{move.play_column.column}:{move.play_column.card.code}"


def without(game: solitaire_pb2.Game, *names: Any) -> solitaire_pb2.Game:
    out = solitaire_pb2.Game()
    out.CopyFrom(game)
    for name in names:
        out.ClearField(name)
    return out


def as_read(game: solitaire_pb2.Game) -> solitaire_pb2.Game:
    """What a reply's game must share with the game read back: all but ids, times and the solver's verdict."""
    scrubbed = scrub(game)
    assert isinstance(scrubbed, solitaire_pb2.Game)
    return scrubbed


def reason_name(reason: int) -> str:
    return R.Name(cast("errors_pb2.ErrorReason.ValueType", reason))


def effective(codes: list[str]) -> list[int]:
    """Indices (0-based) of the entries in effect: each undo takes back the latest one."""
    stack: list[int] = []
    for i, code in enumerate(codes):
        if code == UNDO:
            assert stack, f"an undo with nothing to take back at seq {i + 1}"
            stack.pop()
        else:
            stack.append(i)
    return stack


# -- the model ---------------------------------------------------------------------------------------------------
@dataclass
class Entry:
    """One accepted change, as the model saw it accepted."""

    code: str
    key: str
    request: pb.PlayMoveRequest | pb.UndoRequest
    reply: pb.PlayMoveResponse | pb.UndoResponse
    transport: str
    undone_by: int | None = None


@dataclass
class ModelGame:
    id: str
    owner: int
    deal: solitaire_pb2.Deal
    rules: SolitaireRules
    seen: solitaire_pb2.Game
    """The game as last read (or the reply to the last accepted change, until the next read)."""
    seed: str | None = None
    """The client's seed, when the game is on a client-seeded deal: its whole stock is known."""
    entries: list[Entry] = field(default_factory=list)
    refused_keys: list[str] = field(default_factory=list)
    changed: bool = True
    """An accepted change since the last check; otherwise the game must read back exactly as ``seen``."""
    reply_game: solitaire_pb2.Game | None = None

    @property
    def version(self) -> int:
        return len(self.entries)

    @property
    def line(self) -> list[Entry]:
        return [self.entries[i] for i in effective([e.code for e in self.entries])]

    @property
    def over(self) -> bool:
        return self.seen.status != IN_PROGRESS

    @property
    def undos(self) -> int:
        return sum(e.code == UNDO for e in self.entries)

    def fitting(self) -> list[int]:
        """Columns whose front card fits on the pile, by the client's own reading of the rules."""
        top = self.seen.pile_top.rank
        return [
            i for i, col in enumerate(self.seen.columns) if col.cards and fits(self.seen.rules, col.cards[-1].rank, top)
        ]

    def accept(
        self,
        code: str,
        key: str,
        request: pb.PlayMoveRequest | pb.UndoRequest,
        reply: pb.PlayMoveResponse | pb.UndoResponse,
        transport: str,
    ) -> None:
        if code == UNDO:
            self.line[-1].undone_by = self.version + 1
        self.entries.append(Entry(code, key, request, reply, transport))
        self.refused_keys = [k for k in self.refused_keys if k != key]  # stored now
        game = reply.game
        assert game.version == self.version, (game.version, self.version)
        assert not reply.replayed
        self.seen, self.reply_game, self.changed = game, game, True


def known_stock(codes: list[str], deal: solitaire_pb2.Deal) -> dict[int, Card]:
    """The stock positions the log's draws turned, from the whole log (undone entries too). Turning a position
    again after an undo must turn the same card: the deal is fixed before play."""
    turned = [0]
    known: dict[int, Card] = {}
    for seq, code in enumerate(codes, start=1):
        if code == UNDO:
            turned.pop()
            continue
        move = parse_move(code)
        if isinstance(move, Draw):
            assert move.card is not None
            at = turned[-1]
            assert at < deal.stock_count, f"seq {seq} turns stock position {at} of {deal.stock_count}"
            assert known.setdefault(at, move.card) == move.card, (
                f"seq {seq} turned {move.card.code} at stock position {at}, earlier {known[at].code}"
            )
            turned.append(at + 1)
        else:
            turned.append(turned[-1])
    return known


def replay_log(
    deal: solitaire_pb2.Deal, rules: SolitaireRules, codes: list[str], stock: list[Card] | None, seed: str | None
) -> State:
    """The deal replayed with the engine through the entries of ``codes`` in effect. ``stock`` is the whole stock
    when known; otherwise the positions the log turned are filled in and the rest hold placeholders (a stock card
    is never shown before it is turned, so they cannot change the view)."""
    known = known_stock(codes, deal)
    if stock is None:
        placeholder = Card(1, 0)
        stock = [known.get(i, placeholder) for i in range(deal.stock_count)]
    else:
        for at, card in known.items():
            assert stock[at] == card, f"the log turned {card.code} at stock position {at}; the deal has {stock[at]}"
    layout = Layout(
        tuple(tuple(engine_card(c) for c in col.cards) for col in deal.columns),
        engine_card(deal.start_card),
        tuple(stock),
    )
    state = State.initial(rules, layout)
    for i in effective(codes):
        state = state.apply(parse_move(codes[i]))  # IllegalMove here: the log holds a move the rules refuse
    return state


# -- the machine -------------------------------------------------------------------------------------------------
class GolfMachine(RuleBasedStateMachine):
    server: ClassVar[Server]

    def __init__(self) -> None:
        super().__init__()
        a = Rest(self.server.http_url)
        b = Grpc(self.server.grpc_target)
        self.players: list[dict[str, Client]] = [
            {"rest": a, "grpc": Grpc(self.server.grpc_target, as_=a)},
            {"rest": Rest(self.server.http_url, as_=b), "grpc": b},
        ]
        self.games: list[ModelGame] = []
        self.steps = 0

    def teardown(self) -> None:
        for clients in self.players:
            for client in clients.values():
                client.close()

    # -- helpers ---------------------------------------------------------------------------------------------
    def owner(self, g: ModelGame, transport: str) -> Client:
        return self.players[g.owner][transport]

    def pick(self, pick: int) -> ModelGame:
        return self.games[pick % len(self.games)]

    def pick_live(self, pick: int) -> ModelGame | None:
        """A game in progress, if any. Rules choose among games in progress themselves: preconditions depend only
        on the number of games, since the server deals at random and Hypothesis replays a run's choices (when it
        shrinks a failure) expecting the same rules to be enabled."""
        games = [g for g in self.games if not g.over]
        return games[pick % len(games)] if games else None

    def refused(self, g: ModelGame, reply: Reply, reason: int, *, shows_game: bool) -> None:
        """A refusal with ``reason`` (and its gRPC code / HTTP status); a refused move shows the current game."""
        err = reply.expect_error(reason)
        if shows_game:
            assert err.game.id == g.id and err.game.version == g.version, (err.game.id, err.game.version)
            assert as_read(err.game) == as_read(g.seen), f"{reply.transport}: the refusal shows another game"
        else:
            assert not err.HasField("game"), f"{reason_name(reason)} should not carry a game: {err}"

    def refused_move(self, g: ModelGame, reply: Reply, reason: int, key: str) -> None:
        self.refused(g, reply, reason, shows_game=reason != R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED)
        g.refused_keys.append(key)

    def move_request(self, g: ModelGame, move: solitaire_pb2.Move, key: str, version: int | None) -> pb.PlayMoveRequest:
        req = pb.PlayMoveRequest(game_id=g.id, idempotency_key=key)
        req.move.CopyFrom(move)
        if version is not None:
            req.expected_version = version
        return req

    def expected_move_refusal(self, g: ModelGame, move: solitaire_pb2.Move) -> int | None:
        """Why the rules refuse ``move`` now (None: they take it), from the client's reading of the rules."""
        if g.over:
            return R.ERROR_REASON_GAME_OVER
        if move.WhichOneof("kind") == "draw_stock":
            if g.seen.stock_count == 0:
                return R.ERROR_REASON_STOCK_EMPTY
            if g.rules.draw_only_when_stuck and g.fitting():
                return R.ERROR_REASON_DRAW_NOT_ALLOWED
            return None
        col = move.play_column.column
        if not 0 <= col < len(g.seen.columns):
            return R.ERROR_REASON_NO_SUCH_COLUMN
        cards = g.seen.columns[col].cards
        if not cards:
            return R.ERROR_REASON_COLUMN_EMPTY
        if move.play_column.HasField("card") and move.play_column.card.code != cards[-1].code:
            return R.ERROR_REASON_CARD_MISMATCH
        if col in g.fitting():
            return None
        top, card = g.seen.pile_top.rank, cards[-1].rank
        return R.ERROR_REASON_NOTHING_ON_KING if top == 13 and card == 12 else R.ERROR_REASON_NOT_ADJACENT_RANK

    def send_move(self, g: ModelGame, transport: str, move: solitaire_pb2.Move, key: str, version: int | None) -> None:
        """Send a move the model has an expectation for (taken, or refused for a reason of the rules)."""
        req = self.move_request(g, move, key, version)
        reply = self.owner(g, transport).play_move(req)
        reason = self.expected_move_refusal(g, move)
        if version is not None and version != g.version:
            reason = R.ERROR_REASON_STALE_VERSION
        if reason is not None:
            self.refused_move(g, reply, reason, key)
            return
        resp = reply.expect_ok()
        made = resp.move
        assert made.WhichOneof("kind") == move.WhichOneof("kind"), (made, move)
        if made.WhichOneof("kind") == "play_column":
            front = g.seen.columns[move.play_column.column].cards[-1]
            assert made.play_column.column == move.play_column.column and made.play_column.card == front, made
        code = proto_code(made)
        g.accept(code, key, req, resp, transport)
        assert resp.game.pile_top == (made.draw_stock.card if made.HasField("draw_stock") else made.play_column.card)

    # -- rules -------------------------------------------------------------------------------------------------
    @precondition(lambda self: len(self.games) < MAX_GAMES)
    @rule(
        layout=st.sampled_from(LAYOUTS),
        owner=st.integers(0, 1),
        transport=TRANSPORTS,
        seed=st.none() | st.integers(0, 50).map(lambda n: f"stateful-{n}"),
    )
    def create_game(self, layout: tuple[str, dict[str, Any]], owner: int, transport: str, seed: str | None) -> None:
        preset, overrides = layout
        client = self.players[owner][transport]
        other = self.players[owner]["grpc" if transport == "rest" else "rest"]
        if seed is None:
            req = pb.CreateGameRequest(preset=preset, winnable_only=False)
            if overrides:
                req.rules.CopyFrom(rules_request(overrides))
            game = client.create_game(req).expect_ok().game
        else:
            deal_req = pb.CreateDealRequest(preset=preset, seed=seed)
            if overrides:
                deal_req.rules.CopyFrom(rules_request(overrides))
            made = client.create_deal(deal_req).expect_ok().deal
            game = other.create_game(pb.CreateGameRequest(deal_id=made.id)).expect_ok().game
        deal = other.get_deal(game.deal_id).expect_ok().deal
        rules = replace(PRESETS[preset], **overrides)
        assert engine_rules(game.rules) == rules and engine_rules(deal.rules) == rules, (game.rules, rules)
        assert (game.version, game.status, game.moves_played, game.undos_used) == (0, IN_PROGRESS, 0, 0)
        assert game.player_id == client.player_id and not game.HasField("reveal")
        assert list(game.columns) == list(deal.columns) and game.pile_top == deal.start_card
        assert game.stock_count == deal.stock_count == rules.stock_size
        if seed is not None:
            columns, start, stock = deal_from_seed(deal.rules, seed)
            assert [[c.code for c in col.cards] for col in deal.columns] == columns and deal.start_card.code == start
            assert deal.commitment == commitment(deal.shuffle_algorithm, seed, deal.rules)
            assert len(stock) == deal.stock_count
        g = ModelGame(game.id, owner, deal, rules, game, seed=seed)
        g.reply_game = game
        self.games.append(g)

    @precondition(lambda self: bool(self.games))
    @rule(pick=PICK, which=PICK, transport=TRANSPORTS, send_version=st.booleans(), key=st.integers(0, 3))
    def play_legal_move(self, pick: int, which: int, transport: str, send_version: bool, key: int) -> None:
        """One of the game's legal moves, sent back as it is; sometimes with a key a refused request used in
        this game, or one another game used (keys are per game; a refused request stores nothing)."""
        g = self.pick_live(pick)
        if g is None:
            return  # every game has ended
        assert g.seen.legal_moves, f"a game in progress without legal moves: {g.seen}"
        move = g.seen.legal_moves[which % len(g.seen.legal_moves)]
        mine = {e.key for e in g.entries}
        elsewhere = [e.key for h in self.games if h is not g for e in h.entries if e.key not in mine]
        if key == 1 and g.refused_keys:
            chosen = g.refused_keys[which % len(g.refused_keys)]
        elif key == 2 and elsewhere:
            chosen = elsewhere[which % len(elsewhere)]
        else:
            chosen = new_key()
        self.send_move(g, transport, move, chosen, g.version if send_version else None)

    @precondition(lambda self: bool(self.games))
    @rule(pick=PICK, choices=st.lists(PICK, min_size=2, max_size=12), transport=TRANSPORTS)
    def play_a_run(self, pick: int, choices: list[int], transport: str) -> None:
        """Several legal moves in a row (so that games end), each with the version it was chosen at."""
        g = self.pick_live(pick)
        for which in choices:
            if g is None or g.over:
                break
            # Mostly a column card when one fits: games are won too, not only lost when the stock runs out.
            plays = [m for m in g.seen.legal_moves if m.WhichOneof("kind") == "play_column"]
            moves = plays if plays and which % 4 else g.seen.legal_moves
            self.send_move(g, transport, moves[which % len(moves)], new_key(), g.version)

    @precondition(lambda self: bool(self.games))
    @rule(pick=PICK, transport=TRANSPORTS, send_version=st.booleans())
    def draw(self, pick: int, transport: str, send_version: bool) -> None:
        """Turn a stock card: taken, or refused as STOCK_EMPTY, DRAW_NOT_ALLOWED or GAME_OVER."""
        g = self.pick(pick)
        move = solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock())
        self.send_move(g, transport, move, new_key(), g.version if send_version else None)

    @precondition(lambda self: bool(self.games))
    @rule(
        pick=PICK,
        transport=TRANSPORTS,
        versions=st.lists(st.sampled_from(["none", "current", "current", "stale"]), min_size=1, max_size=3),
    )
    def undo(self, pick: int, transport: str, versions: list[str]) -> None:
        """One to three undos in a row: taken, or refused as the rules' undo policy and the game say."""
        undoable = [g for g in self.games if g.line and not g.over]
        g = undoable[pick % len(undoable)] if undoable and pick % 4 else self.pick(pick)
        for version in versions:
            key = new_key()
            req = pb.UndoRequest(game_id=g.id, idempotency_key=key)
            if version == "current":
                req.expected_version = g.version
            elif version == "stale":
                req.expected_version = g.version + 1 if g.version == 0 or pick % 2 else g.version - 1
            reply = self.owner(g, transport).undo(req)
            reason: int | None = None
            if version == "stale":
                reason = R.ERROR_REASON_STALE_VERSION
            elif g.over:
                reason = R.ERROR_REASON_GAME_OVER
            elif not g.line:
                reason = R.ERROR_REASON_NOTHING_TO_UNDO
            elif g.rules.undo_policy is UndoPolicy.NONE:
                reason = R.ERROR_REASON_UNDO_NOT_ALLOWED
            elif g.rules.undo_policy is UndoPolicy.LIMITED and g.undos >= g.rules.undo_limit:
                reason = R.ERROR_REASON_UNDO_LIMIT_REACHED
            if reason is not None:
                self.refused_move(g, reply, reason, key)
            else:
                g.accept(UNDO, key, req, reply.expect_ok(), transport)

    @precondition(lambda self: bool(self.games))
    @rule(
        pick=PICK,
        which=PICK,
        transport=TRANSPORTS,
        variant=st.sampled_from(["as-sent", "no-version", "current-version", "other-version", "without-card"]),
    )
    def retry(self, pick: int, which: int, transport: str, variant: str) -> None:
        """A stored request sent again under its key, over either transport: the stored result, nothing changes.
        The retry may differ in what does not change its intent: the expected version, the card a play names."""
        candidates = [h for h in self.games if h.entries]
        if not candidates:
            return
        g = candidates[pick % len(candidates)]
        seq = which % len(g.entries) + 1
        entry = g.entries[seq - 1]
        request = type(entry.request)()
        request.CopyFrom(entry.request)  # type: ignore[arg-type]
        if variant == "no-version":
            request.ClearField("expected_version")
        elif variant == "current-version":
            request.expected_version = g.version
        elif variant == "other-version":
            request.expected_version = (seq + 1 + which) % (g.version + 2)
        elif variant == "without-card" and entry.code != UNDO and not entry.code.startswith("T"):
            assert isinstance(request, pb.PlayMoveRequest)
            request.move.play_column.ClearField("card")  # (a draw's request never names one)
        client = self.owner(g, transport)
        reply = client.undo(request) if isinstance(request, pb.UndoRequest) else client.play_move(request)
        resp = reply.expect_ok()
        first = entry.reply
        assert resp.replayed, f"{transport}: the retry ({variant}) of seq {seq} was not replayed"
        # The same result: the game as it stood at that seq, to the microsecond; only the solver's verdict on a
        # finished game's deal may have come in since.
        assert without(resp.game, "post_mortem") == without(first.game, "post_mortem"), (
            f"{transport}: the retry ({variant}) of seq {seq} ({entry.code}) answers otherwise:\n"
            f"{without(resp.game, 'legal_moves')}\n---\n{without(first.game, 'legal_moves')}"
        )
        if isinstance(first, pb.PlayMoveResponse):
            assert isinstance(resp, pb.PlayMoveResponse) and resp.move == first.move, (resp.move, first.move)

    @precondition(lambda self: bool(self.games))
    @rule(
        pick=PICK,
        which=PICK,
        transport=TRANSPORTS,
        send_version=st.booleans(),
        kind=st.sampled_from(
            ["wrong-card", "no-such-column", "empty-column", "unfit-column", "stale", "key-reused", "named-draw"]
        ),
    )
    def forged_move(self, pick: int, which: int, transport: str, send_version: bool, kind: str) -> None:
        """A move the server must refuse, for the reason the kind of forgery gives."""
        g = self.pick(pick)
        client = self.owner(g, transport)
        version = g.version if send_version else None
        key = new_key()
        columns = g.seen.columns
        if kind == "wrong-card":
            full = [i for i, col in enumerate(columns) if col.cards]
            if not full:
                return
            col = full[which % len(full)]
            front = columns[col].cards[-1]
            other = Card(front.rank % 13 + 1, (front.suit - 1 + which % 2) % 4)  # another rank: never the front
            move = solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=col, card=card_to_proto(other)))
        elif kind == "no-such-column":
            col = [len(columns), len(columns) + 1, 1000, -1][which % 4]
            move = solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=col))
            # A negative column is outside the layout like any other: NO_SUCH_COLUMN, with the game (the contract
            # states no range for it, so that the rules answer it).
        elif kind == "empty-column":
            empty = [i for i, c in enumerate(columns) if not c.cards]
            if not empty:
                return
            move = solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=empty[which % len(empty)]))
        elif kind == "unfit-column":
            fitting = g.fitting()
            unfit = [i for i, c in enumerate(columns) if c.cards and i not in fitting]
            if not unfit:
                return
            col = unfit[which % len(unfit)]
            move = solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=col))
            if which % 2:
                move.play_column.card.CopyFrom(columns[col].cards[-1])
        elif kind == "stale":
            move = (
                g.seen.legal_moves[which % len(g.seen.legal_moves)]
                if g.seen.legal_moves
                else solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock())
            )
            stale = g.version + 1 + which % 3 if g.version == 0 or which % 2 else which % g.version
            req = self.move_request(g, move, key, stale)
            self.refused_move(g, client.play_move(req), R.ERROR_REASON_STALE_VERSION, key)
            return
        elif kind == "key-reused":
            if not g.entries:
                return
            entry = g.entries[which % len(g.entries)]
            if entry.code == UNDO or entry.code.startswith("T"):
                move = solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=which % len(columns)))
            else:
                move = solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock())
            if entry.code != UNDO and which % 3 == 0:
                # The undo of the key of a move: another intent too.
                req_undo = pb.UndoRequest(game_id=g.id, idempotency_key=entry.key)
                self.refused(g, client.undo(req_undo), R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED, shows_game=False)
                return
            req = self.move_request(g, move, entry.key, version)
            self.refused(g, client.play_move(req), R.ERROR_REASON_IDEMPOTENCY_KEY_REUSED, shows_game=False)
            return
        else:  # named-draw: a draw may not name the card it turns (a wrong guess would tell what it is not)
            card = card_to_proto(Card(which % 13 + 1, which % 4))
            move = solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock(card=card))
            err = client.play_move(self.move_request(g, move, key, version)).expect_error(
                R.ERROR_REASON_INVALID_ARGUMENT
            )
            assert err.field == "move.drawStock.card" and not err.HasField("game"), err
            g.refused_keys.append(key)
            return
        reason = self.expected_move_refusal(g, move)
        assert reason is not None, f"{kind}: the client's rules take {move} on {g.seen}"
        if version is not None and version != g.version:
            reason = R.ERROR_REASON_STALE_VERSION
        self.refused_move(g, client.play_move(self.move_request(g, move, key, version)), reason, key)

    @precondition(lambda self: bool(self.games))
    @rule(pick=PICK, transport=TRANSPORTS, action=st.sampled_from(["read", "log", "play", "draw", "undo", "retry"]))
    def other_player(self, pick: int, transport: str, action: str) -> None:
        """Another player: a game in progress does not exist for them; a finished one they may not change, nor read
        (its deal is still in play: DEAL_IN_PLAY), and the owner's stored requests, sent again by them, get the same
        refusal, not the stored result."""
        g = self.pick(pick)
        client = self.players[1 - g.owner][transport]
        key = new_key()
        if action == "retry" and g.entries:
            request = g.entries[pick % len(g.entries)].request
            reply = client.undo(request) if isinstance(request, pb.UndoRequest) else client.play_move(request)
            reason = R.ERROR_REASON_PERMISSION_DENIED if g.over else R.ERROR_REASON_NOT_FOUND
            self.refused(g, reply, reason, shows_game=False)
            return
        if action in ("read", "log"):
            reply = client.get_game(g.id) if action == "read" else client.list_moves(g.id)
            reason = R.ERROR_REASON_DEAL_IN_PLAY if g.over else R.ERROR_REASON_NOT_FOUND
            self.refused(g, reply, reason, shows_game=False)
            return
        if action == "undo":
            reply = client.undo(pb.UndoRequest(game_id=g.id, idempotency_key=key))
        else:
            moves = [m for m in g.seen.legal_moves if m.WhichOneof("kind") == "play_column"]
            move = moves[0] if moves and action == "play" else solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock())
            reply = client.play_move(self.move_request(g, move, key, g.version if pick % 2 else None))
        reason = R.ERROR_REASON_PERMISSION_DENIED if g.over else R.ERROR_REASON_NOT_FOUND
        self.refused(g, reply, reason, shows_game=False)
        g.refused_keys.append(key)

    @precondition(lambda self: bool(self.games))
    @rule(player=st.integers(0, 1), transport=TRANSPORTS)
    def list_games(self, player: int, transport: str) -> None:
        """ListGames holds exactly the player's games of this run, as GetGame shows them."""
        client = self.players[player][transport]
        listed = client.list_games(page_size=100).expect_ok()
        assert listed.next_page_token == ""
        got = {game.id: game for game in listed.games}
        mine = {g.id: g for g in self.games if g.owner == player}
        assert set(got) == set(mine), (sorted(got), sorted(mine))
        for game_id, game in got.items():
            assert as_read(game) == as_read(mine[game_id].seen), f"{transport}: ListGames shows {game_id} otherwise"

    # -- invariants --------------------------------------------------------------------------------------------
    @invariant()
    def every_game_matches_its_model_and_its_log(self) -> None:
        self.steps += 1
        for g in self.games:
            self.check_game(g)

    def check_game(self, g: ModelGame) -> None:
        rest = self.players[g.owner]["rest"].get_game(g.id).expect_ok().game
        grpc_game = self.players[g.owner]["grpc"].get_game(g.id).expect_ok().game
        # Two reads of one stored game: equal but for the time measured at each read (frozen once it is over).
        if rest.status == IN_PROGRESS:
            assert without(rest, "elapsed") == without(grpc_game, "elapsed"), "REST and gRPC show different games"
        else:
            assert rest == grpc_game, "REST and gRPC show different games"
        assert rest.version == g.version, f"version {rest.version}, but {g.version} changes were accepted"
        if not g.changed:
            assert without(rest, "elapsed") == without(g.seen, "elapsed"), "a refused request changed the game"
        if g.reply_game is not None:
            # The reply showed what was stored, to the microsecond (but the time measured at each answer).
            assert without(rest, "elapsed", "post_mortem") == without(g.reply_game, "elapsed", "post_mortem"), (
                f"the game read back is not the one the reply showed:\n{without(rest, 'legal_moves')}\n---\n"
                f"{without(g.reply_game, 'legal_moves')}"
            )
        g.seen, g.reply_game, g.changed = rest, None, False

        # The stored log is the model's log.
        transport = "rest" if self.steps % 2 else "grpc"
        log = self.players[g.owner][transport].list_moves(g.id).expect_ok().moves
        assert [m.seq for m in log] == list(range(1, len(log) + 1))
        codes = [logged_code(m) for m in log]
        assert codes == [e.code for e in g.entries], f"stored log {codes}, accepted {[e.code for e in g.entries]}"
        undo_of = {e.undone_by: seq for seq, e in enumerate(g.entries, start=1) if e.undone_by is not None}
        for m, entry in zip(log, g.entries, strict=True):
            assert (m.undone_by if m.HasField("undone_by") else None) == entry.undone_by, (m, entry.undone_by)
            if entry.code == UNDO:
                assert m.undo_of == undo_of[m.seq], f"seq {m.seq} undid seq {m.undo_of}, not {undo_of[m.seq]}"

        # The deal replayed through the stored log by the engine, shown by the one view function.
        stock: list[Card] | None = None
        if g.seed is not None:
            stock = [Card.parse(c) for c in deal_from_seed(g.deal.rules, g.seed)[2]]
        seed = None
        if rest.status != IN_PROGRESS:
            assert rest.HasField("reveal")
            seed = rest.reveal.seed
            assert g.seed is None or seed == g.seed
            columns, start, revealed = deal_from_seed(g.deal.rules, seed)
            assert [
                [c.code for c in col.cards] for col in g.deal.columns
            ] == columns and g.deal.start_card.code == start
            assert g.deal.commitment == commitment(g.deal.shuffle_algorithm, seed, g.deal.rules)
            stock = [Card.parse(c) for c in revealed]
        else:
            assert not rest.HasField("reveal") and not rest.HasField("post_mortem")
        state = replay_log(g.deal, g.rules, codes, stock, seed)
        seen = view(state, seed)
        expected = solitaire_pb2.Game(
            status=_STATUS[seen.status],
            score=seen.score,
            version=len(codes),
            columns=[cards_pb2.Column(cards=[card_to_proto(c) for c in col]) for col in seen.columns],
            pile_top=card_to_proto(seen.pile_top),
            pile_count=seen.pile_count,
            stock_count=seen.stock_count,
            legal_moves=[move_to_proto(m, hide_draw=True) for m in seen.legal_moves],
            moves_played=seen.pile_count - 1,
            undos_used=codes.count(UNDO),
        )
        if seen.revealed_seed is not None and seen.revealed_stock is not None:
            expected.reveal.seed = seen.revealed_seed
            expected.reveal.stock.extend(card_to_proto(c) for c in seen.revealed_stock)
        # Ranked unless an undo took back a stock draw (the player saw a stock card).
        if any(e.undone_by is not None and shows_stock(e.code) for e in g.entries):
            expected.unranked_reason = solitaire_pb2.UNRANKED_REASON_STOCK_DRAW_UNDONE
        else:
            expected.ranked = True
        left = g.rules.undos_left(codes.count(UNDO))
        if left is not None:
            expected.undos_left = left
        shown = solitaire_pb2.Game()
        shown.CopyFrom(rest)
        for name in ("id", "deal_id", "elapsed", "create_time", "update_time", "rules", "player_id", "post_mortem"):
            shown.ClearField(name)
        assert shown == expected, f"the game differs from its log replayed:\n{shown}\n---\n{expected}"
        assert rest.moves_played == len(g.line)

        # The model's own line, replayed with the client's rules (written apart from the engine's).
        board = Board.of(g.deal)
        for entry in g.line:
            move = parse_move(entry.code)
            assert move.card is not None
            if isinstance(move, PlayColumn):
                board.apply(solitaire_pb2.Move(play_column=solitaire_pb2.PlayColumn(column=move.column)))
            else:
                board.apply(solitaire_pb2.Move(draw_stock=solitaire_pb2.DrawStock(card=card_to_proto(move.card))))
        assert board.key() == game_key(rest), "the model's line lands elsewhere"
        if rest.status == solitaire_pb2.GAME_STATUS_WON:
            assert board.cards_left == 0 and rest.score == board.score


# -- the test ----------------------------------------------------------------------------------------------------
def test_random_calls_over_both_transports_keep_every_game_equal_to_its_replayed_log(server: Server) -> None:
    machine = type("GolfOnServer", (GolfMachine,), {"server": server})
    run_state_machine_as_test(machine, settings=SETTINGS)
