// The board's columns as slot-machine reels (seed 000, "Initial combination" and figures
// 2-3: "as if the columns were reels of a slot machine"). Display only: the cards and the
// row each reel stops on come from the server's frames; this module only moves what
// table.js has already drawn.
//
// A reel holds ten rows, the column's cards in their board order, rotated so that the
// player's card sits on the payline. To spin, the reel gets rows 10.. below it (the same
// column, continuing its cycle) and slides down from K rows up to its place, so that the
// first frame shows exactly what was there before (K = old centre - new centre, mod 10,
// plus one whole turn) and the last shows the server's cards. Nothing moves when the
// player asked for reduced motion.
import { card } from "./cards.js";

const ROWS = 10;
const CENTER_ROW = 4;
const DEAL_MS = 620; // column 1 on the deal; each next column stops STAGGER_MS later
const CHANGE_MS = 520;
const STAGGER_MS = 110; // column 5 stops after DEAL_MS + 4 * STAGGER_MS = 1060 ms (< 1.2 s)
const SAFETY_MS = 400; // clean up even when animationend never comes (a hidden tab)

const motion = window.matchMedia("(prefers-reduced-motion: reduce)");

/** Whether the player asked the system for less motion (then nothing spins). */
export function reducedMotion() {
  return motion.matches;
}

/**
 * Spin one reel after table.js drew it (call it for every reel on every board render).
 *
 * reel      the .reel element, already filled with its ten rows centred on ``center``
 * column    0..4 (later columns stop later)
 * cards     the column's ten card codes in board order (from the server's frame)
 * hand      the id of the hand on screen (a new id is a deal: every reel spins)
 * previous  the row index the reel showed before, or null
 * center    the row index of the player's card now, or null (a spectator: no spin)
 *
 * Returns "deal" or "change" when a spin started, else null. A deal or a change dispatches a
 * ``reelspin`` event on the document, {kind, column, stopsInMs}, even with reduced motion
 * (then stopsInMs is 0): sound.js listens.
 */
export function spinReel(reel, { column, cards, hand, previous, center }) {
  if (center === null || center === undefined) {
    delete reel.dataset.hand;
    return null;
  }
  const deal = reel.dataset.hand !== String(hand);
  const change = !deal && previous !== null && previous !== undefined && previous !== center;
  reel.dataset.hand = String(hand);
  if (!deal && !change) {
    // Redrawn mid-spin (a hold, an answer): the rows below the reel went with the old
    // children; put them back so the spin ends as it began.
    if (reel.classList.contains("spinning")) addTail(reel, cards, center, Number(reel.dataset.tail));
    return null;
  }
  const kind = deal ? "deal" : "change";
  const stopsInMs = (deal ? DEAL_MS : CHANGE_MS) + column * STAGGER_MS;
  const moving = !reducedMotion();
  document.dispatchEvent(new CustomEvent("reelspin", { detail: { kind, column, stopsInMs: moving ? stopsInMs : 0 } }));
  if (!moving) return null;
  const turn = deal ? ROWS + 2 * column : ROWS; // a longer run on the deal
  const tail = deal ? turn : ((((previous - center) % ROWS) + ROWS) % ROWS) + turn;
  const step = rowStep(reel);
  if (step <= 0) return null; // not laid out (hidden): nothing to see
  reel.classList.remove("spinning");
  reel.getAnimations?.().forEach((animation) => animation.cancel());
  reel.dataset.tail = String(tail);
  addTail(reel, cards, center, tail);
  reel.style.setProperty("--reel-shift", `${-tail * step}px`);
  reel.style.animationDuration = `${stopsInMs}ms`;
  void reel.offsetWidth; // restart the animation
  reel.classList.add("spinning");
  reel.dataset.spin = kind;
  const token = `${hand}:${center}:${Date.now()}`;
  reel.dataset.spinToken = token;
  const stop = () => {
    if (reel.dataset.spinToken !== token) return; // a newer spin took over
    reel.classList.remove("spinning");
    delete reel.dataset.spinToken;
    delete reel.dataset.tail;
    reel.querySelectorAll(":scope > .reel-tail").forEach((node) => node.remove());
  };
  reel.addEventListener("animationend", stop, { once: true });
  setTimeout(stop, stopsInMs + SAFETY_MS);
  return kind;
}

/** The distance between two rows of the reel, in CSS pixels (0 when not laid out). */
function rowStep(reel) {
  const rows = reel.children;
  if (rows.length < 2) return 0;
  return rows[1].getBoundingClientRect().top - rows[0].getBoundingClientRect().top;
}

/** Rows 10..10+count-1 under the reel: the column's cycle continued (decorative). */
function addTail(reel, cards, center, count) {
  reel.querySelectorAll(":scope > .reel-tail").forEach((node) => node.remove());
  if (!count) return;
  const nodes = [];
  for (let j = 0; j < count; j += 1) {
    const row = ROWS + j;
    const code = cards[(((center - CENTER_ROW + row) % ROWS) + ROWS) % ROWS];
    const node = card(code, { attributes: { "aria-hidden": "true" } });
    node.removeAttribute("role");
    node.removeAttribute("aria-label");
    node.classList.add("reel-tail");
    node.style.setProperty("--row", String(row));
    nodes.push(node);
  }
  reel.append(...nodes);
}
