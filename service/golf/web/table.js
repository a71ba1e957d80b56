// A card Golf table (#/tables/<id>, or #/tables/<id>/<join code> for a private table's shared link): seats, bots,
// start, every seat's grid, the piles, the score sheet, live over the table's event stream. No rules here: what may
// be played is the table's `legalMoves`, sent back as they are; a click on a card only picks the legal move it
// stands for.

import * as api from "./api.js";
import { cardElement, cardName } from "./cards.js";
import { moveLabel, place, playerName, topOfDiscard } from "./table_text.js";
import { el, enumText, notify, notifyError } from "./ui.js";

const PHASES = {
  HOLE_PHASE_SETUP: "Choose your start cards",
  HOLE_PHASE_DRAW: "Draw",
  HOLE_PHASE_PLACE: "Place the drawn card",
  HOLE_PHASE_FLIP: "Turn up a card",
  HOLE_PHASE_OVER: "Hole over",
  HOLE_PHASE_CHOOSE: "Keep one of the cards",
  HOLE_PHASE_POWER: "Use another power or pass",
};
const END_REASONS = {
  HOLE_END_REASON_ALL_FACE_UP: "all cards face up",
  HOLE_END_REASON_KNOCK: "a knock",
  HOLE_END_REASON_STOCK_OUT: "the stock ran out",
  HOLE_END_REASON_ROUND_LIMIT: "the round limit",
};

let botsInfo = null; // ListBots, fetched once

async function bots() {
  if (!botsInfo) botsInfo = await api.get("/v1/bots");
  return botsInfo;
}

export function tablePath(id, suffix = "") {
  return `/v1/tables/${encodeURIComponent(id)}${suffix}`;
}

export async function mountTable(root, tableId, joinCode) {
  /** @type {any} */
  let table = null; // the table as shown
  let watch = null;
  let busy = false;
  let selection = new Set(); // start cards chosen in the setup
  let selectionKey = "";
  let closed = false;
  const me = api.player();
  const info = await bots().catch(() => ({ levels: [], personalities: [] }));

  const streamState = el("span", { id: "stream-state", class: "stream-state" }, "connecting");
  const heading = el("h2", { id: "table-heading" }, "Card Golf table");
  const body = el("div", { class: "table-body" });
  const view = el(
    "section",
    { class: "golf-table", "aria-labelledby": "table-heading" },
    el("div", { class: "toolbar table-top" }, heading, el("span", { class: "muted" }, "Updates: ", streamState),
      el("a", { href: "#/tables" }, "Back to the lobby")),
    body,
  );
  root.append(view);

  const levelTitle = (level) => (info.levels.find((l) => l.level === level) || {}).title || enumText(level, "BOT_LEVEL_");
  const personalityTitle = (p) => (info.personalities.find((x) => x.personality === p) || {}).title || "";

  function seatName(seat) {
    const s = (table.seats || [])[seat];
    if (!s) return `Seat ${seat + 1}`;
    if (s.playerId) {
      const name = me && s.playerId === me.id ? "You" : playerName(s.playerId, () => table && draw());
      return name;
    }
    if (s.bot && s.bot !== "BOT_LEVEL_UNSPECIFIED") return `Bot ${seat + 1}`;
    return `Seat ${seat + 1}`;
  }

  function seatDetail(seat) {
    const s = (table.seats || [])[seat];
    if (!s) return "";
    const bits = [];
    const isBot = s.bot && s.bot !== "BOT_LEVEL_UNSPECIFIED";
    if (s.playerId && me && s.playerId === me.id) bits.push(me.displayName);
    if (isBot) {
      const personality = personalityTitle(s.botPersonality);
      bits.push(s.playerId ? `played by a bot (${levelTitle(s.bot)})` : `${levelTitle(s.bot)}${personality ? `, ${personality}` : ""}`);
    }
    if (!s.playerId && !isBot) bits.push("free");
    if (s.resigned) bits.push("resigned");
    if (s.away) bits.push("away");
    if (s.playerId && s.playerId === table.ownerId) bits.push("host");
    return bits.join(" · ");
  }

  function legal() {
    return table.legalMoves || [];
  }

  async function run(what, path, bodyJson) {
    if (busy) return;
    busy = true;
    try {
      const answer = await api.post(path, { ...bodyJson, idempotencyKey: api.newKey() });
      if (answer.table) show(answer.table, true);
      if (what) notify(what);
    } catch (error) {
      notifyError(error);
      reload();
    } finally {
      busy = false;
    }
  }

  function act(move) {
    return run("", tablePath(tableId, "/moves"), { move, expectedVersion: table.version });
  }

  async function reload() {
    try {
      const answer = await api.get(tablePath(tableId, api.query({ joinCode })));
      show(answer.table, true);
    } catch (error) {
      notifyError(error);
    }
  }

  /** Show `next` unless an older view than the one shown (an event that arrives after an Act's answer). */
  function show(next, orSame = false) {
    if (!next || closed) return;
    if (table) {
      const [had, got] = [Number(table.version), Number(next.version)];
      if (got < had || (got === had && !orSame)) return;
    }
    const was = table && table.status;
    table = next;
    draw();
    if (table.status === "TABLE_STATUS_OVER") {
      if (was && was !== table.status) notify("The match is over.");
      if (watch) watch.close(); // nothing more will happen at this table
      watch = null;
      streamState.textContent = "closed";
    }
  }

  function heldCard() {
    const hole = table.hole || {};
    if (!hole.heldFrom || hole.heldFrom === "CARD_SOURCE_UNSPECIFIED") return null;
    return el(
      "div",
      { class: "pile held" },
      cardElement(hole.held && hole.held.code ? hole.held : null, {
        label: hole.held && hole.held.code ? `In hand: ${cardName(hole.held)}` : "In hand: a card drawn from the stock",
      }),
      el("div", { class: "pile-label" }, hole.toMove === table.yourSeat ? "Your card" : `${seatName(hole.toMove)}'s card`),
    );
  }

  function piles() {
    const hole = table.hole;
    const moves = legal();
    const draws = moves.find((m) => m.drawStock);
    const takes = moves.find((m) => m.drawDiscard);
    const discards = moves.find((m) => m.discard);
    const top = topOfDiscard(table);
    const stock = cardElement(null, {
      onclick: draws ? () => act(draws) : undefined,
      label: draws ? `Stock, ${hole.stockCount} cards: draw a card` : `Stock, ${hole.stockCount} cards`,
      classes: draws ? ["playable"] : [],
    });
    const pileAction = takes ? () => act(takes) : discards ? () => act(discards) : undefined;
    const pileLabel = top
      ? `Discard pile: ${cardName(top)}${takes ? ": take it" : discards ? ": discard your card onto it" : ""}`
      : `Discard pile: empty${discards ? ": discard your card" : ""}`;
    const discard = top
      ? cardElement(top, { onclick: pileAction, label: pileLabel, classes: pileAction ? ["playable"] : [] })
      : cardElement(null, { empty: true, onclick: pileAction, label: pileLabel, classes: pileAction ? ["playable"] : [] });
    const offered = (hole.offered || []).length
      ? el("div", { class: "pile offered" },
        el("div", { class: "offered-cards" }, hole.offered.map((c) => cardElement(c))),
        el("div", { class: "pile-label" }, "Offered"))
      : null;
    return el(
      "div",
      { class: "piles" },
      el("div", { class: "pile stock" }, stock, el("div", { class: "pile-label" }, `Stock (${hole.stockCount})`)),
      el("div", { class: "pile discard" }, discard, el("div", { class: "pile-label" }, "Discard")),
      heldCard(),
      offered,
    );
  }

  function setupMoves() {
    return legal().filter((m) => m.reveal && (m.reveal.positions || []).length);
  }

  function chooseStart(position) {
    const reveals = setupMoves();
    if (!reveals.length) return;
    if (selection.has(position)) selection.delete(position);
    else selection.add(position);
    const need = reveals[0].reveal.positions.length;
    if (selection.size >= need) {
      const chosen = [...selection].sort((a, b) => a - b).join(",");
      const match = reveals.find((m) => [...m.reveal.positions].sort((a, b) => a - b).join(",") === chosen);
      selection = new Set();
      if (match) {
        act(match);
        return;
      }
      notify("Those cards cannot be chosen together: choose again.", { error: true });
    } else {
      notify(`${selection.size} of ${need} start cards chosen.`);
    }
    draw();
  }

  function gridSection(grid, hole, { reveal = false } = {}) {
    const mine = grid.seat === table.yourSeat;
    const moves = mine && !reveal ? legal() : [];
    const setup = mine && !reveal && setupMoves().length > 0;
    const cols = (table.rules && table.rules.cols) || 3;
    const toMove = !reveal && (hole.toMove === grid.seat || (hole.phase === "HOLE_PHASE_SETUP" && (table.awaiting || []).includes(grid.seat)));
    const who = seatName(grid.seat);
    const cells = grid.cards.map((shown, position) => {
      let onclick;
      let label;
      const classes = [];
      const what = shown.empty ? "empty place" : shown.card ? cardName(shown.card) : "face-down card";
      const known = shown.card && !shown.faceUp ? ", known to you" : "";
      const shield = shown.shielded ? ", shielded" : "";
      if (setup && !shown.faceUp) {
        onclick = () => chooseStart(position);
        classes.push("playable");
        if (selection.has(position)) classes.push("selected");
        label = `${what}, ${place(position)}: ${selection.has(position) ? "chosen, click to unchoose" : "choose as a start card"}`;
      } else if (moves.length) {
        const at = (k) => moves.find((m) => m[k] && (m[k].position || 0) === position);
        const move = at("swap") || at("flip") || at("peekStroke");
        if (move) {
          onclick = () => act(move);
          classes.push("playable");
          label = `${what}${known}${shield}, ${place(position)}: ${moveLabel(move, table, seatName)}`;
        }
      }
      if (!label) label = `${mine ? "Your" : `${who}'s`} ${place(position)}: ${what}${known}${shield}`;
      const node = shown.empty
        ? cardElement(null, { empty: true, label, onclick, classes })
        : cardElement(shown.card, { label, onclick, classes });
      node.dataset.pos = String(position);
      if (setup && !shown.faceUp) node.setAttribute("aria-pressed", selection.has(position) ? "true" : "false");
      if (!shown.card && !shown.empty) node.classList.add("back");
      return node;
    });
    const gridNode = el("div", { class: "grid", role: "group", "aria-label": `${mine ? "Your" : `${who}'s`} grid` }, cells);
    gridNode.style.setProperty("--cols", String(cols));
    const score = reveal && hole.result ? (hole.result.seats || []).find((s) => s.seat === grid.seat) : null;
    return el(
      "section",
      {
        class: ["seat", mine ? "mine" : "", toMove ? "to-move" : ""].filter(Boolean).join(" "),
        "aria-label": who,
        dataset: { seat: String(grid.seat) },
      },
      el("h4", {}, who, toMove ? el("span", { class: "turn-mark" }, hole.toMove === grid.seat ? " · to move" : " · choosing") : null,
        score ? ` · ${score.total} points` : null),
      gridNode,
      (grid.aside || []).length
        ? el("div", { class: "aside" }, "Kept aside: ", grid.aside.map((c) => cardName(c)).join(", "))
        : null,
    );
  }

  function turnText(hole) {
    if (hole.phase === "HOLE_PHASE_SETUP") {
      const waiting = (table.awaiting || []).map(seatName);
      return waiting.length ? `Waiting for ${waiting.join(", ")} to choose start cards` : "";
    }
    if (hole.toMove === undefined) return "";
    if (hole.toMove === table.yourSeat) return "Your turn";
    return `${seatName(hole.toMove)}'s turn`;
  }

  function playArea() {
    const hole = table.hole;
    const moves = legal();
    const kids = [
      el("div", { class: "stats" },
        el("span", {}, "Hole ", el("b", {}, `${table.holeNumber} of ${table.holes}`)),
        el("span", { id: "phase" }, PHASES[hole.phase] || enumText(hole.phase, "HOLE_PHASE_")),
        el("span", { id: "turn" }, el("b", {}, turnText(hole))),
        hole.ender !== undefined ? el("span", {}, `${seatName(hole.ender)} went out: final turns`) : null,
        el("span", {}, "Turns ", el("b", {}, String(hole.turns || 0)))),
      piles(),
    ];
    const grids = [...(hole.grids || [])].sort((a, b) => (a.seat === table.yourSeat ? -1 : b.seat === table.yourSeat ? 1 : a.seat - b.seat));
    kids.push(el("div", { class: "seats" }, grids.map((g) => gridSection(g, hole))));
    if (setupMoves().length) {
      kids.push(el("p", { class: "muted" }, `Choose ${setupMoves()[0].reveal.positions.length} of your cards to `
        + `${table.rules.startMode === "START_MODE_PEEK" ? "look at" : "turn up"}, or pick a move below.`));
    }
    if (moves.length) {
      kids.push(
        el("section", { class: "panel legal-moves", "aria-labelledby": "moves-heading" },
          el("h3", { id: "moves-heading" }, "Your moves"),
          el("ul", { class: "moves plain" },
            moves.map((m) => el("li", {}, el("button", { type: "button", onclick: () => act(m) }, moveLabel(m, table, seatName)))))),
      );
    }
    return el("section", { class: "play", "aria-labelledby": "play-heading" },
      el("h3", { id: "play-heading", class: "visually-hidden" }, "The hole in play"), kids);
  }

  function seating() {
    const owner = me && table.ownerId === me.id;
    const seated = table.yourSeat !== undefined;
    const seats = table.seats || [];
    const free = seats.filter((s) => !s.playerId && (!s.bot || s.bot === "BOT_LEVEL_UNSPECIFIED")).length;
    const kids = [
      el("h3", { id: "seating-heading" }, "Seats"),
      el("ul", { class: "plain seat-list" },
        seats.map((s) => el("li", { class: s.seat === table.yourSeat ? "mine" : "" },
          el("b", {}, `${s.seat + 1}. ${seatName(s.seat)}`), " ", el("span", { class: "muted" }, seatDetail(s.seat))))),
    ];
    const link = `${location.origin}${location.pathname}#/tables/${encodeURIComponent(table.id)}${table.joinCode ? `/${table.joinCode}` : ""}`;
    if (table.joinCode) {
      kids.push(el("p", {}, "Join code: ", el("span", { class: "code", id: "join-code-shown" }, table.joinCode)));
    }
    const linkInput = el("input", { id: "table-link", readonly: true, value: link, class: "link-box" });
    kids.push(
      el("div", { class: "toolbar" },
        el("label", { for: "table-link" }, "Link to this table"), linkInput,
        el("button", {
          type: "button",
          onclick: async () => {
            try {
              await navigator.clipboard.writeText(link);
              notify("Link copied.");
            } catch {
              linkInput.select();
              notify("Select the link and copy it.");
            }
          },
        }, "Copy link")),
    );
    const actions = [];
    if (!seated && free) {
      actions.push(el("button", {
        type: "button", class: "primary",
        onclick: () => run("You took a seat.", tablePath(tableId, ":join"), joinCode ? { joinCode } : {}),
      }, "Take a seat"));
    }
    if (owner && free) {
      const level = el("select", { id: "bot-level" },
        info.levels.map((l) => el("option", { value: l.level, selected: l.level === "BOT_LEVEL_GREEDY" }, l.title)));
      const personality = el("select", { id: "bot-personality" },
        el("option", { value: "BOT_PERSONALITY_UNSPECIFIED" }, "Balanced"),
        info.personalities.map((p) => el("option", { value: p.personality }, p.title)));
      actions.push(el("form", {
        class: "toolbar add-bot",
        onsubmit: (event) => {
          event.preventDefault();
          run("Bot added.", tablePath(tableId, ":addBot"), { level: level.value, personality: personality.value });
        },
      },
      el("label", { for: "bot-level" }, "Bot level"), level,
      el("label", { for: "bot-personality" }, "Personality"), personality,
      el("button", { type: "submit" }, "Add bot")));
    }
    if (owner) {
      actions.push(el("button", { type: "button", class: "primary", onclick: () => run("The match started.", tablePath(tableId, ":start"), {}) }, "Start"));
    }
    if (seated) {
      actions.push(el("button", { type: "button", onclick: () => run("You left the table.", tablePath(tableId, ":leave"), {}) }, "Leave"));
    }
    kids.push(el("div", { class: "toolbar" }, actions));
    return el("section", { class: "panel seating", "aria-labelledby": "seating-heading" }, kids);
  }

  function scoreSheet() {
    const sheet = table.scoreSheet || {};
    const holes = sheet.holes || [];
    if (!holes.length) return null;
    const seats = table.seats || [];
    const leaders = new Set(sheet.leaders || []);
    return el("section", { class: "score", "aria-labelledby": "sheet-heading" },
      el("h3", { id: "sheet-heading" }, "Score sheet"),
      el("div", { class: "scroll" },
        el("table", { class: "sheet", id: "score-sheet" },
          el("caption", {}, `After ${holes.length} of ${table.holes} hole${table.holes === 1 ? "" : "s"}`),
          el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Hole"),
            seats.map((s) => el("th", { scope: "col" }, seatName(s.seat))))),
          el("tbody", {}, holes.map((h, n) => el("tr", {}, el("th", { scope: "row" }, String(n + 1)),
            (h.points || []).map((p) => el("td", {}, String(p)))))),
          el("tfoot", {}, el("tr", {}, el("th", { scope: "row" }, "Total"),
            (sheet.totals || []).map((t, seat) => el("td", { class: leaders.has(seat) ? "leader" : "" },
              String(t), leaders.has(seat) ? el("span", { class: "visually-hidden" }, " (leading)") : null)))))));
  }

  function lastHole() {
    const last = table.lastHole;
    if (!last || !last.result) return null;
    const result = last.result;
    const winners = (result.winners || []).map(seatName).join(", ");
    const reason = END_REASONS[result.endReason];
    return el("section", { class: "panel last-hole", "aria-labelledby": "last-hole-heading" },
      el("h3", { id: "last-hole-heading" }, `Hole ${result.holeNumber} result`),
      el("p", {}, `Lowest: ${winners || "nobody"}`, reason ? ` · ended by ${reason}` : "",
        result.ender !== undefined ? ` (${seatName(result.ender)})` : ""),
      el("ul", { class: "plain hole-scores" }, (result.seats || []).map((s) => el("li", {},
        el("b", {}, `${seatName(s.seat)}: ${s.total}`), " ",
        el("span", { class: "muted" }, (s.lines || []).map((l) => l.note || `${l.rule} ${l.points}`).join("; "))))),
      el("div", { class: "seats" }, (last.grids || []).map((g) => gridSection(g, last, { reveal: true }))));
  }

  function matchOver() {
    if (table.status !== "TABLE_STATUS_OVER") return null;
    const sheet = table.scoreSheet || {};
    const winners = ((sheet.wonBy || []).length ? sheet.wonBy : sheet.leaders || []).map(seatName);
    const text = table.matchEnd === "MATCH_END_ABANDONED"
      ? "Match abandoned."
      : `Match over. ${winners.length === 1 ? (winners[0] === "You" ? "You win" : `${winners[0]} wins`) : `Winners: ${winners.join(", ")}`}.`;
    return el("section", { class: "panel over", id: "match-over", "aria-labelledby": "match-over-heading" },
      el("h3", { id: "match-over-heading" }, text),
      el("a", { href: "#/tables" }, "Back to the lobby"));
  }

  function draw() {
    if (closed || !table) return;
    const key = `${table.holeNumber}:${table.hole ? table.hole.phase : ""}`;
    if (key !== selectionKey) {
      selection = new Set();
      selectionKey = key;
    }
    const focused = document.activeElement && view.contains(document.activeElement)
      ? (document.activeElement.getAttribute("aria-label") || document.activeElement.textContent) : null;
    heading.textContent = `Card Golf: ${table.preset} · ${enumText(table.status, "TABLE_STATUS_")}`;
    view.dataset.version = String(table.version);
    view.dataset.status = table.status;
    view.dataset.phase = table.hole ? table.hole.phase : "";
    body.replaceChildren(
      ...[
        matchOver(),
        table.status === "TABLE_STATUS_SEATING" ? seating() : null,
        table.hole ? playArea() : null,
        scoreSheet(),
        lastHole(),
        table.status === "TABLE_STATUS_PLAYING" && table.yourSeat !== undefined
          ? el("div", { class: "toolbar" }, el("button", {
            type: "button",
            onclick: () => {
              if (confirm("Resign from this match? A bot plays on for your seat.")) {
                run("You resigned.", tablePath(tableId, ":resign"), {});
              }
            },
          }, "Resign"))
          : null,
      ].filter(Boolean),
    );
    if (focused) {
      const again = [...view.querySelectorAll("button")].find(
        (b) => (b.getAttribute("aria-label") || b.textContent) === focused,
      );
      if (again) again.focus();
    }
  }

  try {
    const answer = await api.get(tablePath(tableId, api.query({ joinCode })));
    show(answer.table, true);
  } catch (error) {
    notifyError(error);
    body.replaceChildren(el("p", {}, "This table cannot be shown. ", el("a", { href: "#/tables" }, "Back to the lobby")));
    streamState.textContent = "closed";
    return () => {};
  }
  if (table.status === "TABLE_STATUS_OVER") {
    streamState.textContent = "closed";
    return () => {
      closed = true;
    };
  }
  watch = api.watchTable(tableId, {
    afterSeq: table.version,
    joinCode: joinCode || undefined,
    onEvent: (event) => {
      const before = table;
      show(event.table);
      if (event.kind === "TABLE_EVENT_KIND_MOVED" && event.seat !== undefined && event.seat !== (before && before.yourSeat)
        && event.table && event.table.hole && event.table.hole.toMove === event.table.yourSeat
        && event.table.yourSeat !== undefined) {
        notify("Your turn.");
      }
    },
    onState: (state) => {
      if (watch || state !== "closed") streamState.textContent = state;
    },
    onError: (error) => notifyError(error),
  });
  return () => {
    closed = true;
    if (watch) watch.close();
  };
}

