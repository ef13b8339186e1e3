// The game screen's frames and rendering (static/js/table.js): table, private and pool
// frames applied to the state (re-read over HTTP when a version is missed), and the whole
// screen drawn from it: stats, jackpots, the hand's banner, board, result, controls, footer.
import { CATEGORIES, card } from "./cards.js";
import { el, fetchJson, fmt, formatMinor, gettext, localDecimal, ngettext, ordinal, pgettext } from "./common.js";
import { celebrate } from "./win.js";
import { renderBoard, renderDraws, renderOdds } from "./table_board.js";
import { $, boot, canPlay, currentEntry, freeStock, serverNow, shown, state, syncClock } from "./table_state.js";

const GAP_GRACE_MS = 1200; // wait this long for the private state before re-reading
const STALE_DEADLINE_MS = 4000; // a deadline this far in the past means a frame was lost
const PHASES = { waiting: pgettext("table phase", "waiting"), change: pgettext("table phase", "change"), results: pgettext("table phase", "results"), closed: pgettext("table phase", "closed") };

export function applyTable(frame, { force = false } = {}) {
  if (!force && frame.version < state.table.version) return; // stale
  if (!force && frame.version > state.table.version + 1) expectPrivate(frame.version);
  const newHand = frame.hand?.id !== state.table.hand?.id;
  state.table = frame;
  syncClock(frame.server_time);
  if (newHand) state.shownDraw = null;
  render();
}

export function applyPrivate(frame) {
  if (frame.version < state.table.version) return; // older than what we show
  if (frame.version > state.table.version) return resync(); // we missed a table_state
  if (state.gapTimer !== null && frame.version >= state.gapTimer.version) {
    clearTimeout(state.gapTimer.id);
    state.gapTimer = null;
  }
  state.private = frame;
  const entry = currentEntry();
  if (state.pendingHolds === 0) state.hold = entry?.hold ?? null;
  if (entry?.result) state.lastResult = { hand: state.table.hand, entry };
  render();
}

export function applyPool(frame) {
  if (frame.version > state.table.version) return resync();
  const hand = state.table.hand;
  if (!hand || hand.id !== frame.hand_id) return;
  hand.pool_minor = frame.pool_minor;
  if (frame.rake_minor !== undefined) hand.rake_minor = frame.rake_minor;
  hand.gross_minor = frame.gross_minor;
  hand.entries = frame.entries;
  renderStats();
}

/** Versions jumped: the private state normally follows at once; re-read it if it does not. */
function expectPrivate(version) {
  if (state.gapTimer !== null) return;
  const id = setTimeout(() => {
    state.gapTimer = null;
    resync();
  }, GAP_GRACE_MS + Math.random() * GAP_GRACE_MS);
  state.gapTimer = { id, version };
}

/** Re-read the whole state over HTTP (after a reconnect or a missed version). */
export async function resync() {
  try {
    const snapshot = await fetchJson(boot.urls.snapshot);
    state.pendingHolds = 0;
    applyTable(snapshot.table, { force: true });
    applyPrivate(snapshot.private);
  } catch {
    // the socket's own snapshot on reconnect will bring us up to date
  }
}

/** Level, progress and free items of the player's gaming session. */
function renderPowerups() {
  const box = $("powerups");
  const p = state.private?.powerups;
  box.hidden = !p;
  if (!p) return;
  const next = p.next_level_points === null ? gettext("top level") : fmt(gettext("%(points)s/%(needed)s points to level %(level)s"), { points: p.points, needed: p.next_level_points, level: p.level + 1 });
  box.querySelector("[data-role=level]").textContent = fmt(gettext("Level %(level)s"), { level: p.level });
  box.querySelector("[data-role=progress]").textContent = next;
  const bar = box.querySelector("progress");
  bar.max = p.next_level_points ?? 1;
  bar.value = p.next_level_points === null ? 1 : p.points;
  box.querySelector("[data-role=free]").textContent =
    fmt(ngettext("Free draws %(draws)s (next in %(n)s hand)", "Free draws %(draws)s (next in %(n)s hands)", p.hands_to_free_draw), { draws: p.free_draws, n: p.hands_to_free_draw }) + " · " +
    fmt(gettext("free redeals %(redeals)s (next in %(n)s)"), { redeals: p.free_redeals, n: p.hands_to_free_redeal });
  box.title = box.textContent; // the whole text where the phone shows one line (app.css)
}

function clock(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

export function render() {
  renderStats();
  renderBoard();
  renderDraws();
  renderOdds();
  renderResult();
  renderControls();
  renderSeat();
  renderFooter();
  renderPowerups();
}

function renderStats() {
  const { table } = state;
  const currency = table.config.currency;
  const phase = $("phase");
  phase.dataset.phase = table.phase;
  phase.textContent = PHASES[table.phase] ?? table.phase;
  if (table.frozen) {
    // Algorithm 3: the next hand's inputs are frozen; the deal round's value deals it.
    phase.textContent = fmt(gettext("dealing at beacon round %(round)s"), { round: table.frozen.deal_round });
    phase.title = fmt(gettext("Players and client seeds frozen (digest %(digest)s)"), { digest: table.frozen.inputs_digest });
  } else {
    phase.removeAttribute("title");
  }
  const pool = $("pool");
  pool.dataset.poolMinor = table.hand?.pool_minor ?? "";
  pool.textContent = formatMinor(table.hand?.pool_minor ?? null, currency);
  $("rake").textContent = formatMinor(table.hand?.rake_minor ?? null, currency);
  renderJackpots(table, currency);
  renderBanner(table, currency);
  const entries = table.hand?.entries;
  $("players").textContent = entries ? `${table.players} · ${fmt(gettext("%(n)s in hand"), { n: entries })}` : String(table.players);
  const balance = $("balance");
  balance.dataset.balanceMinor = state.private.balance_minor;
  balance.textContent = formatMinor(state.private.balance_minor, state.private.currency);
  tick();
}

const JACKPOT_NAMES = { royal: pgettext("jackpot", "Royal"), gold: pgettext("jackpot", "Gold"), silver: pgettext("jackpot", "Silver"), bronze: pgettext("jackpot", "Bronze") };

/** The table's jackpots and their live amounts (seed 001, Jackpots). */
function renderJackpots(table, currency) {
  const strip = $("jackpots");
  const jackpots = table.jackpots ?? [];
  strip.hidden = jackpots.length === 0;
  strip.replaceChildren(
    ...jackpots.map((j) =>
      el(
        "span",
        { class: `jackpot jackpot-${j.kind}`, title: j.one_in ? fmt(gettext("Drawn once in %(n)s hands"), { n: j.one_in }) : gettext("Won by a royal flush") },
        el("span", { class: "jackpot-icon", "aria-hidden": "true" }, j.kind === "royal" ? "♛" : "★"),
        ` ${j.name} `,
        el("strong", {}, formatMinor(j.balance_minor, currency)),
      ),
    ),
  );
}

const OVERRIDE_LABELS = {
  tips: (v) => (v ? gettext("tips on") : gettext("no tips")),
  panel: (v) => (v ? gettext("probability panel on") : gettext("no probability panel")),
  max_draws: (v) => fmt(ngettext("%(n)s draw", "%(n)s draws", v), { n: v }),
  max_redeals: (v) => (v ? fmt(ngettext("%(n)s redeal", "%(n)s redeals", v), { n: v }) : gettext("no redeals")),
  change_seconds: (v) => fmt(gettext("%(n)s s to play"), { n: v }),
  redeal_seconds: (v) => fmt(gettext("redeals for %(n)s s"), { n: v }),
  paid_fraction_bps: (v) => fmt(gettext("top %(share)s paid"), { share: `${localDecimal(v / 100)}%` }),
};

/** What is special about the running hand: a spin jackpot drawn, rules changed (seed 001, D). */
function renderBanner(table, currency) {
  const banner = $("hand-banner");
  const hand = table.hand;
  const parts = [];
  if (hand?.spin) {
    parts.push(fmt(gettext("%(name)s spin jackpot! %(amount)s added to this hand's prize pool."), { name: JACKPOT_NAMES[hand.spin.kind] ?? "", amount: formatMinor(hand.spin.award_minor, currency) }));
  }
  const overrides = Object.entries(hand?.overrides ?? {});
  if (overrides.length) {
    const what = overrides.map(([key, o]) => {
      if (OVERRIDE_LABELS[key]) return OVERRIDE_LABELS[key](o.value);
      if (key.endsWith("_minor")) return `${key.replace("_minor", "").replaceAll("_", " ")} ${formatMinor(o.value, currency)}`;
      if (key.endsWith("_bps")) return `${key.replace("_bps", "").replaceAll("_", " ")} ${localDecimal(o.value / 100)}%`;
      if (key.endsWith("_seconds")) return `${key.replace("_seconds", "").replaceAll("_", " ")} ${o.value} s`;
      return `${key.replaceAll("_", " ")} ${o.value}`;
    });
    const special = overrides.some(([, o]) => o.source === "special");
    const name = (hand.special ?? []).join(" + ");
    parts.push(`${special ? `${gettext("Special hand")}${name ? ` (${name})` : ""}` : gettext("This hand")}: ${what.join(", ")}.`);
  }
  banner.hidden = parts.length === 0 || table.phase !== "change";
  const next = $("next-special");
  next.hidden = !table.config.next_special;
  next.textContent = table.config.next_special ? `${gettext("Next special hand:")} ${table.config.next_special}` : "";
  next.title = next.textContent;
  banner.dataset.spin = hand?.spin?.kind ?? "";
  banner.textContent = parts.join(" ");
}

function renderResult() {
  const { hand, entry, last } = shown();
  const section = $("result");
  const result = entry?.result ?? null;
  section.hidden = result === null;
  $("probability").hidden = result !== null;
  celebrate(hand?.id ?? null, result, state.table.config.currency);
  if (!result) return;
  section.querySelector("h2").textContent = last ? gettext("Last hand") : gettext("Result");
  const currency = state.table.config.currency;
  const place = $("place");
  const prize = $("prize");
  if (result.cancelled) {
    place.textContent = gettext("Cancelled");
    place.dataset.place = "";
    prize.textContent = fmt(gettext("Refunded %(amount)s"), { amount: formatMinor(result.refunded_minor, currency) });
    prize.dataset.prizeMinor = "0";
    $("final-category").textContent = result.reason;
  } else {
    place.textContent = fmt(gettext("%(place)s of %(entries)s"), { place: ordinal(result.place), entries: result.entries });
    place.dataset.place = result.place;
    prize.textContent = formatMinor(result.prize_minor, currency);
    prize.dataset.prizeMinor = result.prize_minor;
    prize.classList.toggle("won", result.prize_minor > 0);
    $("final-category").textContent = `${CATEGORIES[result.category]} · ${fmt(gettext("best of %(n)s draw(s)"), { n: result.draws.filter((d) => d.bought).length })}`;
  }
  $("leaderboard").replaceChildren(...(hand.leaderboard ?? []).map((line) => el(
    "li",
    { class: `leader${line.player === boot.username ? " me" : ""}${line.prize_minor > 0 ? " paid" : ""}`, "data-testid": "leader" },
    el("span", { class: "leader-place" }, ordinal(line.place)),
    el("span", { class: "leader-who" }, el("strong", {}, line.player), el("small", {}, CATEGORIES[line.category])),
    el("span", { class: "mini-cards" }, ...line.cards.map((code) => card(code, { mini: true }))),
    el("span", { class: "leader-prize" }, line.prize_minor > 0 ? formatMinor(line.prize_minor) : "–"),
  )));
}

export function renderControls() {
  const entry = currentEntry();
  const playing = canPlay();
  const currency = state.table.config.currency;
  const tipsOff = state.table.hand?.conditions?.tips === false || state.table.hand?.conditions?.panel === false;
  for (const tip of ["tip1", "tip2"]) {
    $(tip).disabled = !(playing && entry.panel && entry.panel[tip]);
    $(tip).hidden = Boolean(state.table.hand && tipsOff);
  }
  const buyDraw = $("buy-draw");
  const redeal = $("redeal");
  if (!entry) {
    buyDraw.disabled = redeal.disabled = true;
    buyDraw.querySelector("[data-role=sub]").textContent = formatMinor(state.table.config.draw_price_minor, currency);
    redeal.querySelector("[data-role=sub]").textContent = formatMinor(state.table.config.redeal_price_minor, currency);
    return;
  }
  const drawsLeft = entry.max_draws - entry.draws_bought;
  buyDraw.disabled = !playing || drawsLeft <= 0 || state.busy.has("buy_draw");
  const freeDraw = freeStock("buy_draw") > 0;
  buyDraw.dataset.free = freeDraw ? "true" : "false";
  buyDraw.querySelector(".button-main").textContent = freeDraw ? gettext("Free draw") : gettext("Buy draw");
  buyDraw.querySelector("[data-role=sub]").textContent =
    `${freeDraw ? gettext("free") : formatMinor(entry.draw_price_minor, currency)} · ${fmt(gettext("%(n)s left"), { n: drawsLeft })}`;
  const freeRedeal = freeStock("redeal") > 0;
  redeal.dataset.free = freeRedeal ? "true" : "false";
  redeal.querySelector(".button-main").textContent = freeRedeal ? gettext("Free redeal") : gettext("Redeal");
  const redealsLeft = entry.max_redeals - entry.redeals_used;
  const redealMs = Date.parse(entry.redeal_deadline) - serverNow();
  redeal.disabled = !playing || redealsLeft <= 0 || redealMs <= 0 || state.busy.has("redeal") || Boolean(entry.redeal_pending);
  redeal.querySelector("[data-role=sub]").textContent = entry.redeal_pending
    ? fmt(gettext("on its way: beacon round %(round)s"), { round: entry.redeal_pending.round })
    : redealMs > 0 && playing
    ? `${freeRedeal ? gettext("free") : formatMinor(entry.redeal_price_minor, currency)} · ${fmt(gettext("%(n)s left"), { n: redealsLeft })} · ${clock(redealMs)}`
    : `${formatMinor(entry.redeal_price_minor, currency)} · ${gettext("closed")}`;
}

function renderSeat() {
  $("seat-buttons").dataset.seat = state.private.seat?.status ?? "none";
}

function renderFooter() {
  const { hand } = shown();
  $("hand-number").textContent = hand ? fmt(gettext("Hand #%(n)s"), { n: hand.number }) : "";
  $("commitment").textContent = hand?.commitment ?? "–";
  const seed = hand?.server_seed ?? null;
  $("seed-wrap").hidden = seed === null;
  $("seed").textContent = seed ?? "";
  const link = $("hand-link");
  const terminal = hand && (hand.status === "settled" || hand.status === "cancelled");
  link.hidden = !terminal;
  if (terminal) link.href = `${boot.urls.hand_history}${hand.id}/`;
}

/** The countdown to the server's deadline, corrected for the clock offset. */
export function tick() {
  const { deadline, phase } = state.table;
  const countdown = $("countdown");
  countdown.closest(".stat").querySelector("dt").textContent = phase === "change" ? gettext("Time left") : gettext("Next hand");
  if (!deadline || phase === "waiting") {
    countdown.textContent = "–";
    countdown.classList.remove("urgent");
  } else {
    const left = Date.parse(deadline) - serverNow();
    countdown.textContent = clock(left);
    countdown.classList.toggle("urgent", phase === "change" && left < 5000);
    // Pushes are hints (the layer may drop one): if the phase should have moved on long ago
    // and no frame said so, re-read the snapshot, at most once per STALE_DEADLINE_MS.
    if (left < -STALE_DEADLINE_MS && Date.now() - state.lastStaleResync > STALE_DEADLINE_MS) {
      state.lastStaleResync = Date.now();
      resync();
    }
  }
}
