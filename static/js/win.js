// The win moment (issue #11): when the player's result has a paid place, a banner with the
// prize counting up, the winning cards and hand name lit, an announcement for screen
// readers and (if on) the win sound. A result without a prize gets none of it. Display
// only: place, prize and category are the server's (tables/selectors.py, entry_state).
import { CATEGORIES } from "./cards.js";
import { fmt, formatMinor, gettext, ordinal } from "./common.js";
import { reducedMotion } from "./reels.js";

const COUNT_MS = 1100;
const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

let celebrated = null; // the hand id whose win is on screen
let counter = null; // the running count-up's animation frame

/**
 * Show (or clear) the win moment for the result on screen.
 *
 * handId    the id of the hand whose result is shown, or null
 * result    the entry's ``result`` ({place, entries, prize_minor, category, ...}) or null
 * currency  the table's currency code
 *
 * Celebrates each hand once: a re-render of the same result leaves the banner as it is.
 */
export function celebrate(handId, result, currency) {
  const banner = $("win-banner");
  const board = $("board");
  if (!banner || !board) return;
  const won = Boolean(result && !result.cancelled && result.prize_minor > 0);
  board.classList.toggle("winning", won);
  $("final-category")?.classList.toggle("won", won);
  $("result")?.classList.toggle("won", won);
  const announce = $("win-announce");
  if (!won) {
    if (celebrated !== null) announce.textContent = "";
    celebrated = null;
    banner.hidden = true;
    stopCounting();
    return;
  }
  if (celebrated === handId) return;
  celebrated = handId;
  const total = formatMinor(result.prize_minor, currency);
  banner.querySelector("[data-role=hand]").textContent =
    `${CATEGORIES[result.category]} · ${fmt(gettext("%(place)s of %(entries)s"), { place: ordinal(result.place), entries: result.entries })}`;
  const amount = banner.querySelector("[data-role=amount]");
  amount.dataset.prizeMinor = String(result.prize_minor);
  // Screen readers hear the whole sentence once (the counting digits are hidden from them).
  announce.textContent =
    fmt(gettext("You won %(prize)s: %(hand)s, %(place)s of %(entries)s."), {
      prize: total,
      hand: CATEGORIES[result.category],
      place: ordinal(result.place),
      entries: result.entries,
    });
  banner.hidden = false;
  banner.classList.remove("pop");
  void banner.offsetWidth; // restart the entrance
  banner.classList.add("pop");
  countUp(amount, result.prize_minor, currency);
  document.dispatchEvent(new CustomEvent("handwon", { detail: { handId, prizeMinor: result.prize_minor } }));
}

function stopCounting() {
  if (counter !== null) cancelAnimationFrame(counter);
  counter = null;
}

/** The prize counting up from zero (at once with reduced motion); ends on the exact amount. */
function countUp(node, prizeMinor, currency) {
  stopCounting();
  if (reducedMotion()) {
    node.textContent = formatMinor(prizeMinor, currency);
    return;
  }
  const started = performance.now();
  const frame = (now) => {
    const t = Math.min(1, (now - started) / COUNT_MS);
    const eased = 1 - (1 - t) ** 3;
    node.textContent = formatMinor(t >= 1 ? prizeMinor : Math.floor(prizeMinor * eased), currency);
    counter = t >= 1 ? null : requestAnimationFrame(frame);
  };
  node.textContent = formatMinor(0, currency);
  counter = requestAnimationFrame(frame);
}

