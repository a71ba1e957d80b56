// Card Golf: the lobby (#/tables: create a table from a preset and house rules, join by code, the listed tables),
// or a table when the address names one (table.js).

import * as api from "./api.js";
import { mountTable, tablePath } from "./table.js";
import { el, enumText, notify, notifyError } from "./ui.js";

function go(table) {
  location.hash = `#/tables/${encodeURIComponent(table.id)}`;
}

/** The view: the lobby, or a table when the address names one. */
export async function mount(root, params = []) {
  const [tableId, joinCode] = params;
  return tableId ? mountTable(root, tableId, joinCode || "") : mountLobby(root);
}

// -- the lobby -----------------------------------------------------------------------------------------------------
function field(id, text, control, hint) {
  return el("div", { class: "field" }, el("label", { for: id }, text), control, hint);
}

async function mountLobby(root) {
  let alive = true;
  const [presetsBody, houseBody] = await Promise.all([api.get("/v1/tablePresets"), api.get("/v1/houseRules")]);
  const presets = presetsBody.presets || [];
  const houseRules = houseBody.houseRules || [];

  const preset = el(
    "select",
    { id: "table-preset", name: "preset", "aria-describedby": "table-preset-description" },
    presets.map((p) => el("option", { value: p.name }, p.name)),
  );
  const description = el("p", { id: "table-preset-description", class: "muted" });
  const describe = () => {
    const chosen = presets.find((p) => p.name === preset.value);
    description.textContent = chosen ? chosen.description : "";
  };
  preset.addEventListener("change", describe);
  describe();
  const seats = el("input", { id: "table-seats", name: "seats", type: "number", min: 2, max: 8, value: 2, required: true });
  const holes = el("input", { id: "table-holes", name: "holes", type: "number", min: 1, max: 18, value: 9, required: true });
  const botDelay = el("input", {
    id: "table-bot-delay", name: "botDelay", type: "number", min: 0, max: 30, step: 0.1, value: 1, required: true,
  });
  const isPrivate = el("input", { id: "table-private", name: "private", type: "checkbox" });
  const ruleBoxes = houseRules.map((rule, n) =>
    el(
      "li",
      {},
      el("input", { id: `house-rule-${n}`, type: "checkbox", name: "houseRules", value: rule.name }),
      el("label", { for: `house-rule-${n}` }, el("b", {}, rule.name.replaceAll("_", " ")), ": ", rule.description),
    ),
  );
  const chosenCount = el("span", { class: "muted" }, "");
  const countChosen = () => {
    const n = ruleBoxes.filter((li) => li.querySelector("input").checked).length;
    chosenCount.textContent = n ? ` (${n} chosen)` : "";
  };
  ruleBoxes.forEach((li) => li.querySelector("input").addEventListener("change", countChosen));

  const create = el(
    "form",
    {
      class: "panel create-table",
      "aria-labelledby": "create-table-heading",
      onsubmit: async (event) => {
        event.preventDefault();
        const button = create.querySelector("button[type=submit]");
        button.disabled = true;
        try {
          const body = await api.post("/v1/tables", {
            preset: preset.value,
            seats: Number(seats.value),
            holes: Number(holes.value),
            private: isPrivate.checked,
            houseRules: ruleBoxes.map((li) => li.querySelector("input")).filter((b) => b.checked).map((b) => b.value),
            botDelay: `${Number(botDelay.value) || 0}s`,
            idempotencyKey: api.newKey(),
          });
          notify("Table created.");
          go(body.table);
        } catch (error) {
          notifyError(error);
        } finally {
          button.disabled = false;
        }
      },
    },
    el("h3", { id: "create-table-heading" }, "New table"),
    field("table-preset", "Preset", preset),
    description,
    el(
      "div",
      { class: "toolbar" },
      field("table-seats", "Seats", seats),
      field("table-holes", "Holes", holes),
      field("table-bot-delay", "Bot delay (seconds)", botDelay),
      el("div", { class: "field check" }, isPrivate, el("label", { for: "table-private" }, "Private (join with a code)")),
    ),
    el(
      "details",
      { class: "house-rules" },
      el("summary", {}, "House rules", chosenCount),
      el("ul", { class: "plain" }, ruleBoxes),
    ),
    el("button", { type: "submit", class: "primary" }, "Create table"),
  );

  const code = el("input", {
    id: "join-code", name: "joinCode", autocomplete: "off", autocapitalize: "characters", maxlength: 16, required: true,
  });
  const byCode = el(
    "form",
    {
      class: "panel",
      "aria-labelledby": "join-code-heading",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const body = await api.post("/v1/tables:joinByCode", {
            joinCode: code.value.trim().toUpperCase(),
            idempotencyKey: api.newKey(),
          });
          notify("Joined the table.");
          go(body.table);
        } catch (error) {
          notifyError(error);
        }
      },
    },
    el("h3", { id: "join-code-heading" }, "Join a private table"),
    el("div", { class: "toolbar" }, field("join-code", "Join code", code),
      el("button", { type: "submit" }, "Join with code")),
  );

  const listing = el("div", { class: "listed-tables" });
  async function refresh() {
    try {
      const body = await api.get(`/v1/tables${api.query({ pageSize: 50 })}`);
      if (!alive) return;
      const tables = body.tables || [];
      if (!tables.length) {
        listing.replaceChildren(el("p", { class: "muted" }, "No open tables right now: create one."));
        return;
      }
      const me = api.player();
      listing.replaceChildren(
        el(
          "ul",
          { class: "plain table-list" },
          tables.map((t) => {
            const taken = (t.seats || []).filter((s) => s.playerId || (s.bot && s.bot !== "BOT_LEVEL_UNSPECIFIED")).length;
            const seated = me && (t.seats || []).some((s) => s.playerId === me.id);
            const free = taken < t.seatCount;
            return el(
              "li",
              { class: "panel" },
              el("b", {}, t.preset), ` · ${taken} of ${t.seatCount} seats · ${t.holes} hole${t.holes === 1 ? "" : "s"} · `,
              enumText(t.status, "TABLE_STATUS_"), " ",
              free && !seated
                ? el("button", {
                  type: "button",
                  "aria-label": `Join the ${t.preset} table`,
                  onclick: async () => {
                    try {
                      const joined = await api.post(tablePath(t.id, ":join"), { idempotencyKey: api.newKey() });
                      go(joined.table);
                    } catch (error) {
                      notifyError(error);
                    }
                  },
                }, "Join")
                : null,
              " ",
              el("a", { href: `#/tables/${encodeURIComponent(t.id)}`, "aria-label": `Watch the ${t.preset} table` },
                seated ? "Open" : "Watch"),
            );
          }),
        ),
      );
    } catch (error) {
      notifyError(error);
    }
  }

  root.append(
    el(
      "section",
      { class: "tables-lobby", "aria-labelledby": "tables-heading" },
      el("h2", { id: "tables-heading" }, "Card Golf"),
      el("div", { class: "lobby-columns" },
        create,
        el("div", {},
          byCode,
          el("section", { class: "panel", "aria-labelledby": "listed-heading" },
            el("div", { class: "toolbar" }, el("h3", { id: "listed-heading" }, "Open tables"),
              el("button", { type: "button", onclick: refresh }, "Refresh")),
            listing))),
    ),
  );
  await refresh();
  const timer = setInterval(refresh, 15_000);
  return () => {
    alive = false;
    clearInterval(timer);
  };
}
