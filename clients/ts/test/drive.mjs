// Drives a running Golf service with the generated client over the Connect protocol (HTTP/1.1), from Node:
// sign in as a guest, create a solitaire game and play it to its end, be refused a missing game, create
// a card Golf table, add a bot, and watch the table until its snapshot and one later event arrive.
// GOLF_HTTP_URL names the HTTP port. Prints one line per step (`key value`); any failure exits non-zero.
// Run by tests/e2e/test_ts_client.py.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { PlayerService } from "../gen/golf/v1/player_service_pb.js";
import { SolitaireService } from "../gen/golf/v1/solitaire_service_pb.js";
import { TableService } from "../gen/golf/v1/table_service_pb.js";
import { BotLevel, TableEventKind } from "../gen/golf/v1/card_golf_pb.js";
import { GameStatus, MoveSchema } from "../gen/golf/v1/solitaire_pb.js";
import { ErrorSchema } from "../gen/golf/v1/errors_pb.js";

const baseUrl = process.env.GOLF_HTTP_URL;
if (!baseUrl) throw new Error("GOLF_HTTP_URL is not set");

/** @param {unknown} ok @param {string} what */
function check(ok, what) {
  if (!ok) throw new Error(`check failed: ${what}`);
}

let token = "";
const transport = createConnectTransport({
  baseUrl,
  httpVersion: "1.1",
  interceptors: [
    (next) => async (req) => {
      if (token) req.header.set("authorization", `Bearer ${token}`);
      return next(req);
    },
  ],
});
const players = createClient(PlayerService, transport);
const solitaire = createClient(SolitaireService, transport);
const tables = createClient(TableService, transport);

// Sign in as a guest: the access token goes on every later call.
const guest = await players.createGuest({ displayName: "ts-client" });
check(guest.player?.id && guest.credentials?.accessToken, "a guest with a token");
token = guest.credentials?.accessToken ?? "";
console.log("player", guest.player?.id);

// A solitaire game, and the first column play on offer (else the first legal move, a draw).
const { game } = await solitaire.createGame({ preset: "standard", winnableOnly: false });
check(game && game.legalMoves.length > 0, "a game with legal moves");
if (!game) throw new Error("no game");
const move = game.legalMoves.find((m) => m.kind.case === "playColumn") ?? game.legalMoves[0];
const played = await solitaire.playMove({
  gameId: game.id,
  move: create(MoveSchema, move),
  idempotencyKey: randomUUID(),
  expectedVersion: game.version,
});
check(played.game?.version === game.version + 1, "the move advanced the game by one version");
console.log("game", game.id, "move", move.kind.case, "version", played.game?.version);

// Play the game out the same way (a column card when one fits, else a draw) until it is over; the seed is then
// revealed, with the whole stock.
let now = played.game;
while (now && now.status === GameStatus.IN_PROGRESS) {
  const next = now.legalMoves.find((m) => m.kind.case === "playColumn") ?? now.legalMoves[0];
  const reply = await solitaire.playMove({
    gameId: now.id,
    move: create(MoveSchema, next),
    idempotencyKey: randomUUID(),
    expectedVersion: now.version,
  });
  now = reply.game;
}
check(now && now.legalMoves.length === 0 && now.reveal?.seed, "a finished game with its seed revealed");
console.log("finished", GameStatus[now?.status ?? 0], "score", now?.score, "moves", now?.movesPlayed);

// A refusal: a ConnectError with the Connect code, and golf.v1.Error among its details.
try {
  await solitaire.getGame({ gameId: "no-such-game" });
  throw new Error("a game that does not exist was found");
} catch (err) {
  const refusal = ConnectError.from(err);
  const [detail] = refusal.findDetails(ErrorSchema);
  check(refusal.code === Code.NotFound && detail?.status === "NOT_FOUND", `not found, got ${refusal.message}`);
  console.log("refused", Code[refusal.code], detail?.status);
}

// A card Golf table of two seats, watched as a server stream; the bot is added once the snapshot is here.
const { table } = await tables.createTable({ seats: 2 });
check(table?.id, "a table");
const tableId = table?.id ?? "";
console.log("table", tableId);
const abort = new AbortController();
const timer = setTimeout(() => abort.abort(), 20_000);
/** @type {import("../gen/golf/v1/card_golf_pb.js").TableEvent[]} */
const events = [];
try {
  for await (const message of tables.watchTable({ tableId }, { signal: abort.signal })) {
    if (message.kind.case !== "event") continue; // a heartbeat
    events.push(message.kind.value);
    if (events.length === 1) {
      await tables.addBot({ tableId, level: BotLevel.RANDOM, idempotencyKey: randomUUID() });
    } else {
      break; // leaving the loop cancels the stream
    }
  }
} finally {
  clearTimeout(timer);
}
const [snapshot, later] = events;
check(snapshot?.kind === TableEventKind.SNAPSHOT && snapshot.table?.id === tableId, "the snapshot first");
check(later?.kind === TableEventKind.BOT_ADDED && later.seq > snapshot.seq, "then the bot's arrival");
console.log("snapshot", TableEventKind[snapshot.kind], "seq", String(snapshot.seq));
console.log("event", TableEventKind[later.kind], "seq", String(later.seq));
console.log("ok");
