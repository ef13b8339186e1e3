// The game screen: follows the table socket, renders board, cards, odds and results, and
// sends the player's choices. Frames and shapes: docs/protocol.md, tables/realtime/frames.py.
import { el, fetchJson, fmt, formatMinor, gettext, openTableSocket, refusalText, showKicked as sayKicked, toast } from "./common.js";
import "./sound.js";
import { applyPool, applyPrivate, applyTable, render, renderControls, resync, tick } from "./table_render.js";
import { $, boot, canPlay, currentEntry, displayedHold, freeStock, state, syncClock } from "./table_state.js";

const PING_MS = 10000;
const TICK_MS = 250;
const RESTART_REDIRECT_MS = 4000;
const SEAT_FRAMES = { join: "join", leave: "leave", "sit-out": "sit_out", "sit-in": "sit_in" };

// --- sending -------------------------------------------------------------------------------

function send(type, fields = {}) {
  const ref = state.nextRef++;
  if (!socket.send({ type, ref, ...fields })) {
    toast(gettext("Not connected: reconnecting…"), "error");
    return null;
  }
  state.refs.set(ref, type);
  return ref;
}

function sendHold(hold) {
  if (!canPlay()) return;
  state.hold = hold;
  state.pendingHolds += 1;
  if (send("hold", { hold }) === null) {
    state.pendingHolds -= 1;
    state.hold = currentEntry()?.hold ?? null;
  }
  render();
}

/** Buy a draw or a redeal; with a free one in stock (power-ups, seed 001, E) use it: the
 * house pays and the wallet is unchanged. */
function buy(type) {
  if (!canPlay() || state.busy.has(type)) return;
  const fields = freeStock(type) > 0 ? { free: true } : {};
  if (send(type, fields) !== null) state.busy.add(type);
  renderControls();
}

function onAnswer(frame) {
  const action = state.refs.get(frame.ref) ?? frame.action;
  state.refs.delete(frame.ref);
  if (action === "hold") state.pendingHolds = Math.max(0, state.pendingHolds - 1);
  state.busy.delete(action);
  if (frame.type === "error") {
    if (action === "hold" && state.pendingHolds === 0) state.hold = currentEntry()?.hold ?? null;
    if (frame.code === "rate_limited") {
      // One notice however many clicks were refused (it counts them), never a pile.
      toast(gettext("Too many clicks: slow down a little."), "error", { key: "rate_limited" });
    } else {
      // A stake the wallet cannot pay (join, sit in): the way to the wallet with the refusal.
      const wallet = frame.extra?.wallet_url;
      toast(refusalText(frame), "error", { link: wallet ? { href: wallet, text: gettext("Open your wallet") } : null });
    }
  } else if (action === "leave") {
    window.location.assign(boot.urls.lobby);
  }
  render();
}

// --- wiring --------------------------------------------------------------------------------

function onFrame(frame) {
  switch (frame.type) {
    case "table_state": return applyTable(frame);
    case "entry_state": return applyPrivate(frame);
    case "pool_updated": return applyPool(frame);
    case "ack":
    case "error": return onAnswer(frame);
    case "pong": return syncClock(frame.server_time);
    case "kicked": return showKicked(frame.reason);
    case "tournament_standings": return applyTournament(frame);
    case "table_restarted":
      socket.stop();
      $("board-message").textContent = frame.reason;
      toast(`${frame.reason} ${gettext("Back to the lobby…")}`, "error");
      setTimeout(() => window.location.assign(boot.urls.lobby), RESTART_REDIRECT_MS);
      return undefined;
    default: return undefined;
  }
}

/** A tournament's standings between its hands (tables/realtime/frames.py,
 * TournamentStandingsFrame): a banner above the board with the leaders, the players left,
 * the paid places, the next ante and the tournament's page (where each reads his rank). */
function applyTournament(frame) {
  let banner = document.querySelector("[data-testid=tournament-banner]");
  if (!banner) {
    banner = document.createElement("section");
    banner.className = "panel tournament-banner";
    banner.dataset.testid = "tournament-banner";
    banner.setAttribute("aria-live", "polite");
    document.querySelector("main")?.prepend(banner);
  }
  const chips = gettext("chips");
  const leaders = frame.top
    .slice(0, 3)
    .map((row) => `${row.rank}. ${row.player} ${formatMinor(row.chips_minor, chips)}`)
    .join(" · ");
  const text = fmt(
    gettext("After hand %(hand)s: %(left)s players left, %(paid)s paid places, next ante %(ante)s."),
    { hand: frame.hand, left: frame.players_left, paid: frame.paid_places, ante: formatMinor(frame.next_ante_minor, chips) },
  );
  const link = document.createElement("a");
  link.href = frame.url;
  link.textContent = gettext("Your standing");
  banner.replaceChildren(`${text} ${leaders} `, link);
}

/** The server took the player away from the tables (common.js, showKicked): the reason in the board's message. */
function showKicked(reason) {
  sayKicked(reason, { state, message: $("board-message"), lobby: boot.urls.lobby, delayMs: RESTART_REDIRECT_MS });
}

const socket = openTableSocket(boot.urls.socket, { onFrame, resync, onKicked: () => showKicked(null), urls: boot.urls });

$("board").addEventListener("click", (event) => {
  const button = event.target.closest("button.mine");
  if (!button) return;
  const hold = [...displayedHold()];
  const column = Number(button.dataset.column);
  hold[column] = !hold[column];
  sendHold(hold);
});
// Keyboard play: keys 1-5 hold or change the card of columns 1-5, as a click on it does.
document.addEventListener("keydown", (event) => {
  if (event.altKey || event.ctrlKey || event.metaKey || event.repeat) return;
  if (event.target.closest?.("input, textarea, select, [contenteditable]")) return;
  const column = "12345".indexOf(event.key);
  if (column < 0 || event.key.length !== 1 || !canPlay()) return;
  event.preventDefault();
  const hold = [...displayedHold()];
  hold[column] = !hold[column];
  sendHold(hold);
});
for (const tip of ["tip1", "tip2"]) {
  $(tip).addEventListener("click", () => {
    const code = currentEntry()?.panel?.[tip];
    if (!code) return;
    state.tipHand = state.table.hand?.id ?? null; // the panel's odds turn on (seed 000 §3)
    sendHold([...code].map((letter) => letter === "H"));
  });
}
// Game recall: the table's last hands, read when the player opens the list.
$("recall").addEventListener("toggle", async (event) => {
  if (!event.target.open) return;
  const list = $("recall-list");
  try {
    const data = await fetchJson(boot.urls.recall);
    list.replaceChildren(
      ...(data.hands.length ? data.hands : [null]).map((h) =>
        h === null
          ? el("li", { class: "fine-print" }, gettext("No hand has finished here yet."))
          : el(
              "li",
              {},
              el("a", { href: h.url }, `#${h.number}`),
              h.status === "cancelled"
                ? ` ${gettext("cancelled, refunded")}`
                : ` · ${fmt(gettext("%(n)s players"), { n: h.entries })} · ${fmt(gettext("pool %(amount)s"), { amount: formatMinor(h.pool_minor, h.currency) })}${h.winner ? ` · ${fmt(gettext("best: %(name)s"), { name: h.winner })}` : ""}`,
              h.mine && h.mine.place ? el("strong", {}, ` · ${gettext("you:")} ${h.mine.place}${h.mine.prize_minor ? `, ${formatMinor(h.mine.prize_minor + h.mine.jackpot_minor, h.currency)}` : ""}`) : null,
            ),
      ),
    );
  } catch {
    list.replaceChildren(el("li", { class: "fine-print" }, gettext("Could not load the last hands; try again.")));
  }
});

$("buy-draw").addEventListener("click", () => buy("buy_draw"));
$("redeal").addEventListener("click", () => buy("redeal"));
document.querySelectorAll(".seat-buttons form").forEach((form) => {
  form.addEventListener("submit", (event) => {
    // Over the socket when connected; otherwise the form posts (no-JavaScript path).
    if (socket.isOpen() && send(SEAT_FRAMES[form.dataset.action]) !== null) event.preventDefault();
  });
});

// --- reality checks (wallet/protection.py) --------------------------------------------------

const REALITY_POLL_MS = 60000;

/** Every N minutes of play (the player's own setting) show the time played and the net
 * result of the session; the player carries on, or leaves the table. */
async function scheduleRealityCheck() {
  let session;
  try {
    session = await fetchJson(boot.urls.session);
  } catch {
    setTimeout(scheduleRealityCheck, REALITY_POLL_MS);
    return;
  }
  const next = session.playing && session.reality_check_minutes ? session.next_check_seconds * 1000 : null;
  if (next === null || next > REALITY_POLL_MS) {
    setTimeout(scheduleRealityCheck, REALITY_POLL_MS);
    return;
  }
  setTimeout(showRealityCheck, next);
}

async function showRealityCheck() {
  const box = $("reality-check");
  try {
    const session = await fetchJson(boot.urls.session);
    if (!session.playing) return scheduleRealityCheck();
    const net = Object.values(session.net);
    box.querySelector("[data-role=text]").textContent =
      `${fmt(gettext("You have played for %(n)s minutes this session."), { n: session.minutes_played })} ` +
      `${gettext("Net result:")} ${net.length ? net.join(", ") : gettext("even")}.`;
    box.hidden = false;
    box.querySelector("[data-role=continue]").focus();
  } catch {
    // try again at the next poll
  }
  setTimeout(scheduleRealityCheck, REALITY_POLL_MS + 5000);
  return undefined;
}

$("reality-check").querySelector("[data-role=continue]").addEventListener("click", () => {
  $("reality-check").hidden = true;
});
$("reality-check").querySelector("[data-role=leave]").addEventListener("click", () => {
  $("reality-check").hidden = true;
  // A tournament's table cannot be left (docs/tournaments.md): sitting out stops the deal.
  if (socket.isOpen()) send(boot.tournament ? "sit_out" : "leave");
  else window.location.assign(boot.urls.lobby);
});

syncClock(state.table.server_time);
scheduleRealityCheck();
state.hold = currentEntry()?.hold ?? null;
if (currentEntry()?.result) state.lastResult = { hand: state.table.hand, entry: currentEntry() };
render();
setInterval(() => {
  tick();
  if (canPlay()) renderControls();
}, TICK_MS);
setInterval(() => socket.isOpen() && socket.send({ type: "ping" }), PING_MS);
