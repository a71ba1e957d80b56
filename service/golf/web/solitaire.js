// Golf solitaire: a game (new, by difficulty, or the daily deal), or a round of nine deals scored against par.
// The client sends intents (play a column's front card, draw, hint, undo, play all) and draws the game the server
// returns: which cards may move (`legalMoves`), the score and the time are the server's. Keys: H hint, Ctrl+Z undo,
// N new game, space draws.

import * as api from "./api.js";
import { cardElement, cardName } from "./cards.js";
import { clock, el, enumText, notify, notifyError, seconds, today } from "./ui.js";

const SAVED = "golf.play.solitaire";
const DIFFICULTIES = [
  ["", "Any difficulty"],
  ["DIFFICULTY_EASY", "Easy"],
  ["DIFFICULTY_MEDIUM", "Medium"],
  ["DIFFICULTY_HARD", "Hard"],
];
const REPLAY_STEP_MS = 450;

const over = (game) => game && game.status !== "GAME_STATUS_IN_PROGRESS";

/** The move's readable name, for hints and the replay. */
function moveText(move, game) {
  if (move.drawStock) return "Draw from the stock";
  const column = move.playColumn.column || 0;
  const card = move.playColumn.card || frontCard(game, column);
  return `Play the ${card ? cardName(card) : "front card"} of column ${column + 1}`;
}

function frontCard(game, column) {
  const cards = (game.columns[column] || {}).cards || [];
  return cards[cards.length - 1];
}

export function mount(root) {
  const view = {
    game: null,
    round: null,
    fetchedAt: 0,
    hint: null,
    busy: false,
    replay: null,
    difficulty: localStorage.getItem(`${SAVED}.difficulty`) || "",
  };

  const board = el("section", { class: "board", "aria-label": "Game" });
  const stats = el("div", { class: "stats", "aria-label": "Score" });
  const after = el("div", { class: "after" });
  const sheet = el("div", { class: "round-sheet" });
  const difficulty = el(
    "select",
    {
      id: "difficulty",
      onchange: () => {
        view.difficulty = difficulty.value;
        localStorage.setItem(`${SAVED}.difficulty`, view.difficulty);
      },
    },
    DIFFICULTIES.map(([value, text]) => el("option", { value, selected: value === view.difficulty }, text)),
  );
  const buttons = {
    hint: el("button", { type: "button", onclick: () => hint(), "aria-keyshortcuts": "H" }, "Hint"),
    undo: el("button", { type: "button", onclick: () => undo(), "aria-keyshortcuts": "Control+Z" }, "Undo"),
    all: el("button", { type: "button", onclick: () => playAll() }, "Play all"),
  };
  root.append(
    el("h2", { class: "visually-hidden" }, "Golf solitaire"),
    el(
      "div",
      { class: "toolbar" },
      el("button", { type: "button", class: "primary", onclick: () => newGame(), "aria-keyshortcuts": "N" }, "New game"),
      el("label", { for: "difficulty" }, "Deal"),
      difficulty,
      el("button", { type: "button", onclick: () => dailyDeal() }, "Daily deal"),
      el("button", { type: "button", onclick: () => newRound() }, "Round of nine"),
    ),
    el("div", { class: "toolbar" }, buttons.hint, buttons.undo, buttons.all),
    stats,
    board,
    after,
    sheet,
    el(
      "p",
      { class: "muted keys" },
      "Keys: ",
      el("kbd", {}, "H"),
      " hint · ",
      el("kbd", {}, "Ctrl"),
      "+",
      el("kbd", {}, "Z"),
      " undo · ",
      el("kbd", {}, "N"),
      " new game · ",
      el("kbd", {}, "Space"),
      " draw",
    ),
  );

  // -- talking to the service -------------------------------------------------------------------------------------

  /** Run one intent; the view is busy meanwhile, so a double click sends it once. */
  async function act(work) {
    if (view.busy) return;
    view.busy = true;
    stopReplay();
    try {
      await work();
    } catch (error) {
      notifyError(error);
    } finally {
      view.busy = false;
      draw();
    }
  }

  /** POST an intent with an idempotency key, retried once with the same key when the network failed. */
  async function send(path, body = {}) {
    const message = { idempotencyKey: api.newKey(), ...body };
    try {
      return await api.post(path, message);
    } catch (error) {
      if (error instanceof api.ApiError) throw error;
      return api.post(path, message);
    }
  }

  function show(game, round) {
    const was = view.game;
    view.game = game;
    view.fetchedAt = performance.now();
    if (round !== undefined) view.round = round;
    if (!was || was.id !== game.id || game.version !== was.version) view.hint = null;
    localStorage.setItem(SAVED, game.id);
    if (over(game) && !(was && was.id === game.id && over(was))) finished(game);
  }

  async function finished(game) {
    notify(game.status === "GAME_STATUS_WON" ? `Won! Score ${game.score}.` : `Game over: ${game.score} cards left.`);
    try {
      // GetGame waits for the solver's verdict, which the last move's reply may not have had yet.
      const [full, round] = await Promise.all([
        api.get(`/v1/games/${game.id}`),
        game.roundId ? api.get(`/v1/rounds/${game.roundId}`) : Promise.resolve(null),
      ]);
      if (view.game && view.game.id === game.id) {
        view.game = full.game;
        if (round) view.round = round.round;
        draw();
      }
    } catch (error) {
      notifyError(error);
    }
  }

  const newGame = () =>
    act(async () => {
      const body = view.difficulty ? { difficulty: view.difficulty } : {};
      const { game } = await api.post("/v1/games", body);
      show(game, null);
      notify("New game dealt.");
    });

  const dailyDeal = () =>
    act(async () => {
      const { deal } = await api.get(`/v1/dailyDeals/${today()}`);
      const { game } = await api.post("/v1/games", { dealId: deal.id });
      show(game, null);
      notify(game.practice ? "Today's deal again: practice, not scored." : "Today's deal: good luck.");
    });

  const newRound = () =>
    act(async () => {
      const { round, game } = await api.post("/v1/rounds", { holes: 9 });
      show(game, round);
      notify(`Round of ${round.holes}: hole 1, par ${round.par} for the round.`);
    });

  const nextHole = () =>
    act(async () => {
      const { round, game } = await api.post(`/v1/rounds/${view.round.id}:nextHole`);
      show(game, round);
      notify(`Hole ${game.hole} of ${round.holes}.`);
    });

  const play = (move) =>
    act(async () => {
      const game = view.game;
      const reply = await send(`/v1/games/${game.id}/moves`, { move, expectedVersion: game.version });
      show(reply.game);
      if (!over(reply.game)) notify(reply.move.drawStock ? `Drew the ${cardName(reply.move.drawStock.card)}.` : "");
    });

  const hint = () =>
    act(async () => {
      if (!view.game || over(view.game)) return;
      const reply = await send(`/v1/games/${view.game.id}:hint`);
      show(reply.game);
      view.hint = reply.move;
      notify(`Hint: ${moveText(reply.move, reply.game)}.`);
    });

  const undo = () =>
    act(async () => {
      if (!view.game) return;
      const reply = await send(`/v1/games/${view.game.id}:undo`);
      show(reply.game);
      notify("Move taken back.");
    });

  const playAll = () =>
    act(async () => {
      if (!view.game || over(view.game)) return;
      const reply = await send(`/v1/games/${view.game.id}:autoPlay`);
      show(reply.game);
      if (!over(reply.game)) notify(reply.moves.length ? `Played ${reply.moves.length} cards.` : "No card fits.");
    });

  // -- "you could have won like this" -----------------------------------------------------------------------------

  /** Show the solver's winning line from the deal's start, one move at a time, on the board. */
  async function replayWin() {
    const game = view.game;
    const line = game.postMortem.winningLine;
    const { deal } = await api.get(`/v1/deals/${game.dealId}`);
    const stock = [...game.reveal.stock];
    const position = {
      columns: deal.columns.map((c) => ({ cards: [...(c.cards || [])] })),
      pileTop: deal.startCard,
      pileCount: 1,
      stockCount: stock.length,
    };
    const replay = { step: 0, position, timer: null, total: line.length };
    view.replay = replay;
    const step = () => {
      const move = line[replay.step];
      // The solver's moves as they lie: a column's front card, or the stock's next card, goes onto the pile.
      position.pileTop = move.drawStock ? stock.shift() : position.columns[move.playColumn.column || 0].cards.pop();
      position.pileCount += 1;
      position.stockCount = stock.length;
      replay.step += 1;
    };
    const tick = () => {
      if (view.replay !== replay) return;
      if (replay.step < line.length) step();
      replay.done = replay.step >= line.length;
      draw();
      if (!replay.done) replay.timer = setTimeout(tick, REPLAY_STEP_MS);
    };
    replay.skip = () => {
      clearTimeout(replay.timer);
      while (replay.step < line.length) step();
      tick();
    };
    draw();
    replay.timer = setTimeout(tick, REPLAY_STEP_MS);
  }

  function stopReplay() {
    if (view.replay) clearTimeout(view.replay.timer);
    view.replay = null;
  }

  // -- drawing ----------------------------------------------------------------------------------------------------

  function isHinted(column) {
    const h = view.hint;
    if (!h) return false;
    return column === "stock" ? Boolean(h.drawStock) : Boolean(h.playColumn) && (h.playColumn.column || 0) === column;
  }

  function drawBoard(position, live) {
    const game = view.game;
    const legal = new Set(
      live ? game.legalMoves.filter((m) => m.playColumn).map((m) => m.playColumn.column || 0) : [],
    );
    const canDraw = live && game.legalMoves.some((m) => m.drawStock);
    const layout = el("div", { class: "layout", style: { "--columns": position.columns.length } });
    position.columns.forEach((column, index) => {
      const cards = column.cards || [];
      const col = el("div", { class: "column", role: "group", "aria-label": `Column ${index + 1}` });
      cards.forEach((card, depth) => {
        const front = depth === cards.length - 1;
        const classes = [];
        if (front && legal.has(index)) classes.push("playable");
        if (front && isHinted(index)) classes.push("hinted");
        col.append(
          front && live
            ? cardElement(card, {
                classes,
                label: `${cardName(card)}, column ${index + 1}${legal.has(index) ? ", fits" : ""}`,
                onclick: () => play({ playColumn: { column: index, card } }),
              })
            : cardElement(card, { classes }),
        );
      });
      if (!cards.length) col.append(el("div", { class: "card empty", role: "img", "aria-label": "empty column" }));
      layout.append(col);
    });
    const stockCount = position.stockCount || 0;
    const stock = el(
      "div",
      { class: `stock${isHinted("stock") ? " hinted" : ""}` },
      stockCount
        ? cardElement(null, {
            label: `Stock, ${stockCount} cards: draw`,
            onclick: live ? () => play({ drawStock: {} }) : undefined,
            disabled: live && !canDraw,
            classes: canDraw ? ["playable"] : [],
          })
        : cardElement(null, { empty: true, label: "Stock: empty" }),
      el("div", { class: "pile-label" }, el("span", { class: "count" }, stockCount), " in stock"),
    );
    const pile = el(
      "div",
      { class: "pile" },
      cardElement(position.pileTop, { label: `Pile: ${cardName(position.pileTop)}` }),
      el("div", { class: "pile-label" }, el("span", { class: "count" }, position.pileCount || 0), " on pile"),
    );
    board.replaceChildren(layout, el("div", { class: "piles" }, stock, pile));
  }

  function drawStats() {
    const game = view.game;
    const time = seconds(game.elapsed) + (over(game) ? 0 : (performance.now() - view.fetchedAt) / 1000);
    const items = [
      ["Score", game.score],
      ["Moves", game.movesPlayed || 0],
      ["Time", clock(time)],
      ["Hints", game.hintsUsed || 0],
      ["Undos", game.undosLeft === undefined ? game.undosUsed || 0 : `${game.undosUsed || 0} (${game.undosLeft} left)`],
    ];
    if (game.roundId) items.unshift(["Hole", `${game.hole} of ${view.round ? view.round.holes : "?"}`]);
    if (game.practice) items.push(["Practice", "not scored"]);
    stats.replaceChildren(...items.map(([name, value]) => el("span", { "data-stat": name.toLowerCase() }, `${name} `, el("b", {}, value))));
  }

  function drawAfter() {
    const game = view.game;
    after.replaceChildren();
    if (view.replay) {
      const r = view.replay;
      after.append(
        el(
          "div",
          { class: "panel" },
          el("p", { id: "replay-progress" }, r.done ? `The winning line: ${r.total} moves.` : `Replaying move ${r.step} of ${r.total}…`),
          r.done ? null : el("button", { type: "button", onclick: () => r.skip() }, "Skip to the end"),
          el("button", { type: "button", onclick: () => { stopReplay(); draw(); } }, "Back to my game"),
        ),
      );
      return;
    }
    if (!over(game)) return;
    const won = game.status === "GAME_STATUS_WON";
    const panel = el(
      "div",
      { class: "panel over", id: "game-over" },
      el("h3", {}, won ? "You won!" : "No more moves"),
      el("p", {}, won ? `Score ${game.score} (the stock cards you did not need).` : `${game.score} cards left in the columns.`),
    );
    const pm = game.postMortem;
    if (!won && pm && pm.winnable) {
      panel.append(
        el("p", {}, "This deal could have been won."),
        el("button", { type: "button", onclick: () => replayWin().catch(notifyError) }, "You could have won like this"),
      );
    } else if (!won && pm && pm.winnable === false) {
      panel.append(el("p", {}, `No line wins this deal; the best leaves ${pm.fewestCardsLeft} cards.`));
    } else if (!won && !pm) {
      panel.append(el("p", { class: "muted" }, "The solver is looking at this deal…"));
    }
    const round = view.round;
    if (round && round.status === "ROUND_STATUS_IN_PROGRESS") {
      panel.append(el("button", { type: "button", class: "primary", onclick: () => nextHole() }, `Next hole (${game.hole + 1})`));
    } else {
      panel.append(el("button", { type: "button", class: "primary", onclick: () => newGame() }, "New game"));
    }
    after.append(panel);
  }

  function drawSheet() {
    const round = view.round;
    sheet.replaceChildren();
    if (!round) return;
    const holes = round.played || [];
    const finished = round.status === "ROUND_STATUS_FINISHED";
    const diff = round.total - round.par;
    const table = el(
      "table",
      { class: "sheet", id: "round-sheet" },
      el("caption", {}, `Round of ${round.holes}: total ${round.total}, par ${round.par}`),
      el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Hole"), el("th", { scope: "col" }, "Score"), el("th", { scope: "col" }, "Result"))),
      el(
        "tbody",
        {},
        holes.map((h) => el("tr", {}, el("th", { scope: "row" }, h.hole), el("td", {}, h.score), el("td", {}, enumText(h.status, "GAME_STATUS_")))),
      ),
      el("tfoot", {}, el("tr", {}, el("th", { scope: "row" }, "Total"), el("td", {}, round.total), el("td", {}, `par ${round.par}`))),
    );
    sheet.append(el("div", { class: "scroll" }, table));
    if (finished) {
      sheet.append(
        el(
          "p",
          { id: "round-result", class: "panel over" },
          `Round over: ${round.total}, ${diff === 0 ? "level par" : diff < 0 ? `${-diff} under par` : `${diff} over par`}.`,
        ),
      );
    }
  }

  function draw() {
    const game = view.game;
    if (!game) return;
    const live = !view.replay && !over(game);
    drawBoard(view.replay ? view.replay.position : game, live && !view.busy);
    drawStats();
    drawAfter();
    drawSheet();
    buttons.hint.disabled = !live;
    buttons.all.disabled = !live;
    buttons.undo.disabled = Boolean(view.replay) || !(game.movesPlayed > 0) || game.undosLeft === 0;
  }

  // -- keys, the clock, and the first game --------------------------------------------------------------------------

  function onKey(event) {
    const target = event.target;
    if (target instanceof HTMLInputElement || target instanceof HTMLSelectElement || event.altKey || event.metaKey) return;
    const key = event.key.toLowerCase();
    if ((event.ctrlKey && key === "z") || (!event.ctrlKey && key === "u")) {
      event.preventDefault();
      undo();
    } else if (event.ctrlKey) {
      return;
    } else if (key === "h") {
      hint();
    } else if (key === "n") {
      newGame();
    } else if (key === " " && !(target instanceof HTMLButtonElement)) {
      event.preventDefault();
      if (view.game && view.game.legalMoves.some((m) => m.drawStock)) play({ drawStock: {} });
    }
  }
  document.addEventListener("keydown", onKey);
  const ticker = setInterval(() => view.game && !over(view.game) && drawStats(), 1000);

  (async () => {
    const saved = localStorage.getItem(SAVED);
    if (saved) {
      try {
        const { game } = await api.get(`/v1/games/${saved}`);
        if (!over(game) || game.roundId) {
          const round = game.roundId ? (await api.get(`/v1/rounds/${game.roundId}`)).round : null;
          show(game, round);
          draw();
          return;
        }
      } catch (error) {
        if (!(error instanceof api.ApiError)) throw error; // gone, or another player's: deal a new one
      }
    }
    newGame();
  })().catch(notifyError);

  return () => {
    stopReplay();
    clearInterval(ticker);
    document.removeEventListener("keydown", onKey);
  };
}
