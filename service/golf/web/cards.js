// How a card looks: rank and suit in the corner and the middle, red or black, readable at phone size, and named
// for screen readers. Cards are buttons when they can be clicked.

import { el } from "./ui.js";

const RANKS = { A: "A", T: "10", J: "J", Q: "Q", K: "K" };
const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
const SUITS = { C: ["♣", "clubs"], D: ["♦", "diamonds"], H: ["♥", "hearts"], S: ["♠", "spades"] };

/** The card's readable name: "queen of hearts", "red joker". */
export function cardName(card) {
  if (!card || !card.code) return "face-down card";
  if (card.joker) return card.code === "XR" ? "red joker" : "black joker";
  const [rank, suit] = [card.code.slice(0, -1), card.code.slice(-1)];
  return `${RANK_NAMES[rank] || rank} of ${SUITS[suit][1]}`;
}

function face(card) {
  if (card.joker) return ["★", "Joker", card.code === "XR"];
  const [rank, suit] = [card.code.slice(0, -1), card.code.slice(-1)];
  return [SUITS[suit][0], RANKS[rank] || rank, suit === "D" || suit === "H"];
}

/**
 * A card element. `card` is a proto Card (or null/undefined for a face-down card). Options: `onclick` makes it a
 * button; `label` overrides its accessible name; `classes` adds classes; `empty` draws an empty place.
 */
/**
 * @param {any} card
 * @param {{onclick?: (event: Event) => void, label?: string, classes?: string[], empty?: boolean, disabled?: boolean}} [options]
 */
export function cardElement(card, { onclick, label, classes = [], empty = false, disabled = false } = {}) {
  const tag = onclick ? "button" : "div";
  const attrs = { class: ["card", ...classes].join(" ") };
  if (onclick) {
    attrs.type = "button";
    attrs.onclick = onclick;
    attrs.disabled = disabled;
  } else {
    attrs.role = "img";
  }
  if (empty) {
    attrs.class += " empty";
    attrs["aria-label"] = label || "empty place";
    return el(tag, attrs);
  }
  if (!card || !card.code) {
    attrs.class += " back";
    attrs["aria-label"] = label || "face-down card";
    return el(tag, attrs);
  }
  const [suit, rank, red] = face(card);
  attrs.class += red ? " red" : " black";
  attrs["aria-label"] = label || cardName(card);
  attrs.dataset = { code: card.code };
  return el(
    tag,
    attrs,
    el("span", { class: "corner", "aria-hidden": "true" }, rank, el("span", { class: "suit" }, suit)),
    el("span", { class: "pip", "aria-hidden": "true" }, suit),
  );
}
