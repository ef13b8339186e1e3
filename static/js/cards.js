// Text-based playing cards and the hand categories (codes as in tables/engine/cards.py: "As", "Td").
import { el } from "./common.js";

/** HandCategory labels, by value (tables/engine/evaluator.py): 0 = high card ... 9 = royal flush. */
export const CATEGORIES = [
  "High card", "One pair", "Two pair", "Three of a kind", "Straight",
  "Flush", "Full house", "Four of a kind", "Straight flush", "Royal flush",
];
const SUITS = { c: ["♣", "clubs"], d: ["♦", "diamonds"], h: ["♥", "hearts"], s: ["♠", "spades"] };
const RANKS = { T: "10", J: "Jack", Q: "Queen", K: "King", A: "Ace" };

/** "Ks" -> "King of spades" (for screen readers). */
export function cardName(code) {
  return `${RANKS[code[0]] ?? code[0]} of ${SUITS[code[1]][1]}`;
}

export function isRed(code) {
  return code[1] === "d" || code[1] === "h";
}

/** A card element: rank and suit symbol, red for diamonds and hearts. */
export function card(code, { tag = "span", mini = false, attributes = {} } = {}) {
  const rank = code[0] === "T" ? "10" : code[0];
  return el(
    tag,
    { class: `card${mini ? " mini" : ""}${isRed(code) ? " red" : ""}`, "aria-label": cardName(code), ...attributes },
    el("span", { class: "rank", "aria-hidden": "true" }, rank),
    el("span", { class: "suit", "aria-hidden": "true" }, SUITS[code[1]][0]),
  );
}

/** A face-down card. */
export function cardBack({ mini = false, attributes = {} } = {}) {
  return el("span", { class: `card back${mini ? " mini" : ""}`, "aria-label": "face down", ...attributes });
}
