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

/**
 * A card element: rank and suit symbol, red for diamonds and hearts. Screen readers hear its
 * name ("King of spades"): an image named by aria-label, or, for a button, hidden text inside
 * it (a button's name must contain its visible text: ``attributes["aria-label"]`` becomes
 * that text).
 */
export function card(code, { tag = "span", mini = false, attributes = {} } = {}) {
  const rank = code[0] === "T" ? "10" : code[0];
  const { "aria-label": label = cardName(code), ...rest } = attributes;
  const named = tag === "button"
    ? {}
    : { role: "img", "aria-label": label };
  return el(
    tag,
    { class: `card${mini ? " mini" : ""}${isRed(code) ? " red" : ""}`, ...named, ...rest },
    el("span", { class: "rank", "aria-hidden": "true" }, rank),
    el("span", { class: "suit", "aria-hidden": "true" }, SUITS[code[1]][0]),
    tag === "button" ? el("span", { class: "visually-hidden" }, label) : null,
  );
}

/** A face-down card. */
export function cardBack({ mini = false, attributes = {} } = {}) {
  return el("span", { class: `card back${mini ? " mini" : ""}`, role: "img", "aria-label": "face down", ...attributes });
}
