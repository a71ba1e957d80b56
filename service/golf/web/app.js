// The web client's shell: sign-in as a guest, the header, and the views by the address's hash
// (#/solitaire, #/tables, #/tables/<id>, #/history, #/leaderboard). Each view module exports
// `mount(root, params)`, which draws into `root` and returns a function that tears the view down.

import * as api from "./api.js";
import { el, notify, notifyError } from "./ui.js";

const VIEWS = {
  solitaire: () => import("./solitaire.js"),
  tables: () => import("./tables.js"),
  history: () => import("./records.js").then((m) => ({ mount: m.mountHistory })),
  leaderboard: () => import("./records.js").then((m) => ({ mount: m.mountLeaderboard })),
};

let unmount = null;
let routing = 0;

function drawWho(player) {
  const who = document.getElementById("who");
  who.replaceChildren();
  if (!player) return;
  who.append(
    el("span", { class: "name" }, player.displayName),
    el("button", { type: "button", class: "link", onclick: () => api.signOut().then(route) }, "Sign out"),
  );
}

function signIn(root) {
  const name = el("input", { id: "guest-name", name: "displayName", maxlength: 64, autocomplete: "nickname" });
  const form = el(
    "form",
    {
      class: "panel sign-in",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await api.signInAsGuest(name.value.trim());
          notify("Signed in.");
          route();
        } catch (error) {
          notifyError(error);
        }
      },
    },
    el("h2", {}, "Play Golf"),
    el("p", {}, "Golf solitaire and card Golf against the computer or friends. Sign in as a guest to start: "
      + "your games are kept for this device."),
    el("label", { for: "guest-name" }, "Your name (optional)"),
    name,
    el("button", { type: "submit", class: "primary" }, "Play as guest"),
  );
  root.append(form);
  name.focus();
  return () => {};
}

async function route() {
  const token = ++routing;
  if (unmount) unmount();
  unmount = null;
  // Each view draws into an element of its own, so a view still loading when the address changes cannot draw
  // into the next one.
  const root = el("div", { class: "view" });
  document.getElementById("view").replaceChildren(root);
  const [name, ...params] = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const view = VIEWS[name] ? name : "solitaire";
  const links = /** @type {NodeListOf<HTMLAnchorElement>} */ (document.querySelectorAll("a[data-nav]"));
  for (const link of links) {
    if (link.dataset.nav === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (!api.player()) {
    unmount = signIn(root);
    return;
  }
  try {
    const module = await VIEWS[view]();
    if (token !== routing) return; // the address changed meanwhile
    const teardown = (await module.mount(root, params)) || null;
    if (token !== routing) {
      if (teardown) teardown(); // it finished mounting after the address changed: its streams and timers stop
      return;
    }
    unmount = teardown;
  } catch (error) {
    notifyError(error);
  }
}

api.onPlayer(drawWho);
drawWho(api.player());
window.addEventListener("hashchange", route);
route();
