// Small DOM helpers shared by the views: element building, the status line, durations.

/**
 * An element: `el("button", {class: "x", onclick: fn, "aria-label": "..."}, child, "text", ...)`. `style` takes an
 * object of properties (`{"--cols": 3}`), set through the CSSOM: the page's Content-Security-Policy refuses style
 * attributes.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (name === "style") for (const [prop, v] of Object.entries(value)) node.style.setProperty(prop, String(v));
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** Say `message` in the status line (read out by screen readers); `error` styles it as a refusal. */
export function notify(message, { error = false } = {}) {
  const status = document.getElementById("status");
  status.textContent = message;
  status.classList.toggle("error", error);
}

/** A refusal as the player should read it: the service's own message. */
export function notifyError(error) {
  notify(error && error.message ? error.message : String(error), { error: true });
}

/** Seconds from a proto3 JSON Duration ("12.500s"). */
export function seconds(duration) {
  return duration ? parseFloat(duration) : 0;
}

/** "m:ss" (or "h:mm:ss") of a number of seconds. */
export function clock(total) {
  const s = Math.max(0, Math.floor(total));
  const [h, m, r] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const mm = h ? String(m).padStart(2, "0") : String(m);
  return `${h ? `${h}:` : ""}${mm}:${String(r).padStart(2, "0")}`;
}

/** The name of an enum value without its prefix, readable: ("GAME_STATUS_IN_PROGRESS", "GAME_STATUS_") -> "in progress". */
export function enumText(value, prefix) {
  return String(value || "").replace(prefix, "").toLowerCase().replaceAll("_", " ");
}

/** Today's UTC day as YYYY-MM-DD (the daily deal's day). */
export function today() {
  return new Date().toISOString().slice(0, 10);
}
