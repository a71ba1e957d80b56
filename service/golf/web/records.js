// The player's history (ListHistory) and the daily deal's leaderboard (GetLeaderboard), a page at a time.

import * as api from "./api.js";
import { clock, el, enumText, notifyError, seconds, today } from "./ui.js";

const KINDS = {
  RECORD_KIND_SOLITAIRE_GAME: "Solitaire game",
  RECORD_KIND_SOLITAIRE_ROUND: "Solitaire round",
  RECORD_KIND_CARD_GOLF_MATCH: "Card Golf match",
};

function when(timestamp) {
  return timestamp ? new Date(timestamp).toLocaleString() : "";
}

function detail(entry) {
  if (entry.kind === "RECORD_KIND_SOLITAIRE_ROUND") return `${entry.holes} holes, par ${entry.par}`;
  if (entry.kind === "RECORD_KIND_CARD_GOLF_MATCH") return `place ${entry.place} of ${entry.players}, ${entry.holes} holes`;
  return `${entry.moves || 0} moves, ${entry.hints || 0} hints, ${entry.undos || 0} undos`;
}

/** A table with a caption, its column headings and rows, and a "More" button while pages remain. */
function pagedTable(root, caption, headings, load, row) {
  const body = el("tbody");
  const more = el("button", { type: "button" }, "More");
  const empty = el("p", { class: "muted" });
  let token = "";
  async function next() {
    more.disabled = true;
    try {
      const page = await load(token);
      for (const item of page.items) body.append(row(item));
      token = page.nextPageToken || "";
      empty.textContent = body.children.length ? "" : "Nothing here yet.";
    } catch (error) {
      notifyError(error);
    } finally {
      more.disabled = false;
      more.hidden = !token;
    }
  }
  more.addEventListener("click", next);
  root.append(
    el(
      "div",
      { class: "scroll" },
      el(
        "table",
        { class: "sheet" },
        el("caption", {}, caption),
        el("thead", {}, el("tr", {}, headings.map((h) => el("th", { scope: "col" }, h)))),
        body,
      ),
    ),
    empty,
    more,
  );
  return next();
}

export async function mountHistory(root) {
  root.append(el("h2", {}, "Your history"));
  await pagedTable(
    root,
    "Finished games, rounds and matches, newest first",
    ["Finished", "What", "Preset", "Result", "Score", "Details", "Time"],
    async (token) => {
      const page = await api.get(`/v1/players/me/history${api.query({ pageSize: 20, pageToken: token })}`);
      return { items: page.entries || [], nextPageToken: page.nextPageToken };
    },
    (entry) =>
      el(
        "tr",
        {},
        el("td", {}, when(entry.finishTime)),
        el("td", {}, KINDS[entry.kind] || enumText(entry.kind, "RECORD_KIND_")),
        el("td", {}, entry.preset),
        el("td", {}, enumText(entry.result, "RECORD_RESULT_") + (entry.unrated ? " (practice)" : "")),
        el("td", {}, entry.score || 0),
        el("td", {}, detail(entry)),
        el("td", {}, clock(seconds(entry.time))),
      ),
  );
}

export async function mountLeaderboard(root) {
  const day = el("input", { id: "board-day", type: "date", value: today(), max: today() });
  const holder = el("div");
  const mine = el("p", { id: "board-mine" });
  async function load() {
    holder.replaceChildren();
    mine.textContent = "";
    const params = { kind: "LEADERBOARD_KIND_DAILY_DEAL", day: day.value, preset: "standard", pageSize: 20 };
    await pagedTable(
      holder,
      `Daily deal of ${day.value}: lowest score first, then fastest`,
      ["Rank", "Player", "Score", "Time", "Assists"],
      async (token) => {
        const page = await api.get(`/v1/leaderboards${api.query({ ...params, pageToken: token })}`);
        if (page.callerEntry) mine.textContent = `You are ranked ${page.callerEntry.rank} with ${page.callerEntry.score}.`;
        return { items: page.entries || [], nextPageToken: page.nextPageToken };
      },
      (entry) =>
        el(
          "tr",
          {},
          el("td", {}, entry.rank),
          el("td", {}, entry.displayName),
          el("td", {}, entry.score || 0),
          el("td", {}, clock(seconds(entry.time))),
          el("td", {}, entry.assists || 0),
        ),
    );
  }
  day.addEventListener("change", () => load().catch(notifyError));
  root.append(
    el("h2", {}, "Daily deal leaderboard"),
    el("div", { class: "toolbar" }, el("label", { for: "board-day" }, "Day (UTC)"), day),
    mine,
    holder,
  );
  await load();
}
