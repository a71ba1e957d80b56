// How a card Golf table's moves and seats read: a label for every legal move, from the move and the table alone,
// and the players' display names.

import * as api from "./api.js";
import { cardName } from "./cards.js";
import { enumText } from "./ui.js";

const names = new Map(); // player id -> display name (or a promise of it)

export function place(position) {
  return `place ${position + 1}`;
}

export function places(positions) {
  const list = (positions || []).map((p) => p + 1);
  if (!list.length) return "";
  if (list.length === 1) return `place ${list[0]}`;
  return `places ${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
}

export function gridOf(table, seat) {
  const hole = table.hole || {};
  return (hole.grids || []).find((g) => g.seat === seat);
}

export function cardAt(table, seat, position) {
  const grid = gridOf(table, seat);
  const shown = grid && grid.cards[position];
  if (!shown) return "an added place";
  if (shown.empty) return "the empty place";
  return shown.card ? `the ${cardName(shown.card)}` : "the face-down card";
}

export function topOfDiscard(table) {
  const pile = (table.hole && table.hole.discard) || [];
  return pile.length ? pile[pile.length - 1] : null;
}

/** The power the held card would use: its UsePower names it, or the table's powers by card code, then by rank. */
export function heldPower(table, use) {
  if (use.power && use.power !== "POWER_UNSPECIFIED") return use.power;
  const held = table.hole && table.hole.held;
  const powers = (table.rules && table.rules.powers) || {};
  if (!held || !held.code) return "";
  return powers[held.code] || powers[held.joker ? "X" : held.code.slice(0, -1)] || "";
}

/** A readable label of a legal move, from the move and the table alone. */
export function moveLabel(move, table, seatName) {
  const hole = table.hole || {};
  const mine = table.yourSeat;
  const held = hole.held && hole.held.code ? `the ${cardName(hole.held)}` : "the drawn card";
  const peek = table.rules && table.rules.startMode === "START_MODE_PEEK";
  const [kind] = Object.keys(move);
  const m = move[kind] || {};
  switch (kind) {
    case "reveal":
      if (!(m.positions || []).length) return "Ready (no start cards)";
      return `${peek ? "Look at" : "Turn up"} ${places(m.positions)}`;
    case "drawStock":
      return "Draw from the stock";
    case "drawDiscard": {
      const top = topOfDiscard(table);
      return top ? `Take the ${cardName(top)} from the discard pile` : "Take the discard";
    }
    case "swap":
      return `Swap ${held} into ${place(m.position || 0)} (${cardAt(table, mine, m.position || 0)})`;
    case "discard":
      return `Discard ${held}`;
    case "flip":
      return `Turn up ${place(m.position || 0)}`;
    case "pass":
      return hole.phase === "HOLE_PHASE_POWER" ? "Pass (no second power)" : "Pass";
    case "knock":
      return "Knock";
    case "peekStroke": {
      const cost = table.rules && table.rules.peekStroke;
      return `Peek at ${place(m.position || 0)}${cost ? ` (+${cost} points)` : ""}`;
    }
    case "flipAll":
      return "Turn up all your face-down cards and go out";
    case "keep": {
      const offered = (hole.offered || [])[m.choice || 0];
      return `Keep ${offered ? `the ${cardName(offered)}` : `card ${(m.choice || 0) + 1}`} at ${place(m.position || 0)}`;
    }
    case "usePower": {
      const power = heldPower(table, m);
      const parts = [];
      if (m.seat !== undefined) {
        parts.push(m.position !== undefined ? `${seatName(m.seat)}'s ${place(m.position)}` : seatName(m.seat));
      } else if (m.position !== undefined) {
        parts.push(`your ${place(m.position)}`);
      }
      if (m.own !== undefined) parts.push(`your ${place(m.own)}`);
      return `Use power ${power ? enumText(power, "POWER_") : ""}${parts.length ? `: ${parts.join(" with ")}` : ""}`;
    }
    default:
      return kind;
  }
}

export function playerName(id, redraw) {
  const known = names.get(id);
  if (typeof known === "string") return known;
  if (!known) {
    names.set(
      id,
      api
        .get(`/v1/players/${encodeURIComponent(id)}`)
        .then((body) => {
          names.set(id, body.player.displayName || "Player");
          redraw();
        })
        .catch(() => names.set(id, "Player")),
    );
  }
  return "Player";
}
