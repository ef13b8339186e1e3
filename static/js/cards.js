// Text-based playing cards and the hand categories (codes as in tables/engine/cards.py: "As", "Td").
import { el, fmt, pgettext } from "./common.js";

/** HandCategory labels, by value (tables/engine/evaluator.py): 0 = high card ... 9 = royal flush. */
/** In the page's language (tables/widerpoker/labels.py has the same names for the server's pages). */
export const CATEGORIES = [
  pgettext("poker hand", "High card"), pgettext("poker hand", "One pair"),
  pgettext("poker hand", "Two pair"), pgettext("poker hand", "Three of a kind"),
  pgettext("poker hand", "Straight"), pgettext("poker hand", "Flush"),
  pgettext("poker hand", "Full house"), pgettext("poker hand", "Four of a kind"),
  pgettext("poker hand", "Straight flush"), pgettext("poker hand", "Royal flush"),
];
const SUITS = {
  c: ["♣", pgettext("card suit", "clubs")],
  d: ["♦", pgettext("card suit", "diamonds")],
  h: ["♥", pgettext("card suit", "hearts")],
  s: ["♠", pgettext("card suit", "spades")],
};
const RANKS = {
  T: "10", J: pgettext("card rank", "Jack"), Q: pgettext("card rank", "Queen"),
  K: pgettext("card rank", "King"), A: pgettext("card rank", "Ace"),
};

/** "Ks" -> "King of spades" ("Re di picche" in Italian), for screen readers. */
export function cardName(code) {
  return fmt(pgettext("card name", "%(rank)s of %(suit)s"), { rank: RANKS[code[0]] ?? code[0], suit: SUITS[code[1]][1] });
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
  return el("span", { class: `card back${mini ? " mini" : ""}`, role: "img", "aria-label": pgettext("card", "face down"), ...attributes });
}
