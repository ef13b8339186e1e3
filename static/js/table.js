// The game screen: follows the table socket, renders board, cards, odds and results, and
// sends the player's choices. Frames and shapes: docs/protocol.md, tables/realtime/frames.py.
import { CATEGORIES, card, cardBack, cardName, isRed } from "./cards.js";
import { el, fetchJson, fmt, formatMinor, gettext, LANGUAGE, localDecimal, ngettext, openTableSocket, ordinal, pgettext, refusalText, showKicked as sayKicked, toast } from "./common.js";
import { holdOdds, oddsActive } from "./odds.js";
import { spinReel } from "./reels.js";
import { celebrate } from "./win.js";
import "./sound.js";

const CENTER_ROW = 4; // the payline: the row where each player's own cards line up
const PING_MS = 10000;
const TICK_MS = 250;
const GAP_GRACE_MS = 1200; // wait this long for the private state before re-reading
const STALE_DEADLINE_MS = 4000; // a deadline this far in the past means a frame was lost
const RESTART_REDIRECT_MS = 4000;
const PHASES = { waiting: pgettext("table phase", "waiting"), change: pgettext("table phase", "change"), results: pgettext("table phase", "results"), closed: pgettext("table phase", "closed") };
const SEAT_FRAMES = { join: "join", leave: "leave", "sit-out": "sit_out", "sit-in": "sit_in" };

const boot = JSON.parse(document.getElementById("table-boot").textContent);
const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

const state = {
  table: boot.table, // public table_state
  private: boot.private, // this player's entry_state
  offsetMs: 0, // server clock minus local clock
  hold: null, // the hold on screen (optimistic), null = no choice sent
  pendingHolds: 0, // hold frames sent and not answered yet
  tipHand: null, // id of the hand in which a tip was used (the odds panel is on, seed 000 §3)
  refs: new Map(), // ref -> action of frames awaiting ack or error
  nextRef: 1,
  busy: new Set(), // purchases awaiting an answer
  shownDraw: null, // draw index shown on the reels after the hand (null = the best)
  lastResult: null, // {hand, entry} of the last settled hand, kept while waiting
  gapTimer: null,
  lastStaleResync: 0, // when a passed deadline last triggered a re-read (ms, local clock)
  previousCenters: [null, null, null, null, null],
  boardSignature: null, // what the board shows, to skip redrawing it unchanged
};

// --- state ---------------------------------------------------------------------------------

function syncClock(serverTime) {
  if (serverTime) state.offsetMs = Date.parse(serverTime) - Date.now();
}

function serverNow() {
  return Date.now() + state.offsetMs;
}

function currentEntry() {
  const hand = state.table.hand;
  const priv = state.private;
  return hand && priv && priv.hand_id === hand.id ? priv.entry : null;
}

/** The hand and entry on screen: the running one, or the last result while waiting. */
function shown() {
  if (state.table.hand) return { hand: state.table.hand, entry: currentEntry(), last: false };
  if (state.lastResult) return { ...state.lastResult, last: true };
  return { hand: null, entry: null, last: false };
}

function applyTable(frame, { force = false } = {}) {
  if (!force && frame.version < state.table.version) return; // stale
  if (!force && frame.version > state.table.version + 1) expectPrivate(frame.version);
  const newHand = frame.hand?.id !== state.table.hand?.id;
  state.table = frame;
  syncClock(frame.server_time);
  if (newHand) state.shownDraw = null;
  render();
}

function applyPrivate(frame) {
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

function applyPool(frame) {
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
async function resync() {
  try {
    const snapshot = await fetchJson(boot.urls.snapshot);
    state.pendingHolds = 0;
    applyTable(snapshot.table, { force: true });
    applyPrivate(snapshot.private);
  } catch {
    // the socket's own snapshot on reconnect will bring us up to date
  }
}

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

function canPlay() {
  const entry = currentEntry();
  return state.table.phase === "change" && state.table.hand?.status === "change" && entry && !entry.result;
}

function displayedHold() {
  return state.hold ?? [false, false, false, false, false];
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

function freeStock(type) {
  const powerups = state.private?.powerups;
  if (!powerups) return 0;
  return type === "buy_draw" ? powerups.free_draws : powerups.free_redeals;
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

// --- rendering -----------------------------------------------------------------------------

function percent(p) {
  if (p <= 0) return "–";
  if (p >= 1) return "100%";
  if (p < 0.001) return `<${localDecimal("0.1")}%`;
  const text = (p * 100).toFixed(1);
  return text === "100.0" ? `>${localDecimal("99.9")}%` : `${localDecimal(text)}%`;
}

function clock(ms) {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

function render() {
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

/** Where each column's reel is centred: the player's card, or the card the shown draw gave. */
function reelCenters(entry, board) {
  if (!entry) return null;
  const result = entry.result;
  if (result && !result.cancelled) {
    const draw = result.draws[state.shownDraw ?? result.best_draw];
    return draw.cards.map((code, c) => board.columns[c].indexOf(code));
  }
  return entry.combination;
}

function renderBoard() {
  const { hand, entry } = shown();
  const reels = document.querySelectorAll(".reel");
  const board = $("board");
  board.classList.toggle("has-payline", Boolean(entry));
  const message = $("board-message");
  if (!hand) {
    reels.forEach((reel) => reel.replaceChildren(...Array.from({ length: 10 }, () => cardBack())));
    $("cards-out").replaceChildren(cardBack(), cardBack());
    message.textContent = state.table.phase === "closed"
      ? gettext("This table is closed.")
      : gettext("Waiting for players: a hand starts when two players are seated.");
    state.previousCenters = [null, null, null, null, null];
    state.boardSignature = null;
    return;
  }
  const columns = hand.board.columns;
  const centers = reelCenters(entry, hand.board);
  const playing = canPlay();
  const hold = displayedHold();
  const result = entry?.result && !entry.result.cancelled ? entry.result : null;
  // Redraw only what changed: a key or a tap on a card must not lose its element between
  // press and release (Space activates a button on release) when an echo of it arrives.
  const signature = JSON.stringify([
    hand.id, hand.status, centers, playing, hold, Boolean(entry), entry?.result ? [entry.result.cancelled, state.shownDraw] : null,
    state.private.seat?.status ?? null,
  ]);
  if (signature === state.boardSignature) return;
  state.boardSignature = signature;
  // Re-rendering replaces the cards: a keyboard player keeps focus on the same column.
  const focusedColumn = document.activeElement?.closest?.("button.mine")?.dataset.column;
  reels.forEach((reel, c) => {
    const center = centers ? centers[c] : null;
    const items = [];
    for (let row = 0; row < 10; row += 1) {
      const index = center === null ? row : (center - CENTER_ROW + row + 10) % 10;
      const code = columns[c][index];
      const onPayline = center !== null && row === CENTER_ROW;
      if (onPayline && playing) {
        items.push(card(code, {
          tag: "button",
          attributes: {
            type: "button",
            class: `card mine${hold[c] ? " held" : ""}${isRed(code) ? " red" : ""}`,
            "aria-pressed": String(hold[c]),
            "data-held-label": gettext("HELD"),
            "aria-label": `${fmt(gettext("Column %(n)s"), { n: c + 1 })}: ${cardName(code)}${hold[c] ? `, ${gettext("held")}` : ""}`,
            "data-testid": `my-card-${c}`,
            "data-column": c,
            "aria-keyshortcuts": String(c + 1),
          },
        }));
      } else {
        const initial = result && !result.hold_used[c] && index === entry.combination[c];
        const node = card(code);
        if (onPayline) {
          node.classList.add("mine");
          node.dataset.testid = `my-card-${c}`;
          if (result) node.classList.add(result.hold_used[c] ? "held" : "changed");
        }
        if (initial) node.classList.add("initial");
        items.push(node);
      }
    }
    reel.replaceChildren(...items);
    const previous = state.previousCenters[c];
    spinReel(reel, { column: c, cards: columns[c], hand: hand.id, previous, center });
    state.previousCenters[c] = center;
  });
  if (focusedColumn !== undefined) {
    const again = document.querySelector(`button.mine[data-column="${focusedColumn}"]`);
    if (again) again.focus();
  }
  $("cards-out").replaceChildren(...hand.board.out.map((code) => card(code)));
  if (!entry) {
    message.textContent = state.private.seat?.status === "active"
      ? gettext("You are seated: you play from the next hand.")
      : gettext("You are watching this hand.");
  } else if (entry.result?.cancelled) {
    message.textContent = fmt(gettext("Hand cancelled: %(reason)s. Everything you paid was refunded."), { reason: entry.result.reason });
  } else if (entry.result) {
    message.textContent = fmt(gettext("Your final hand: %(hand)s."), { hand: CATEGORIES[entry.result.category] });
  } else {
    message.textContent = gettext("Click your cards to hold them; the others are changed from their columns.");
  }
}

function renderDraws() {
  const { entry } = shown();
  const list = $("draws");
  if (!entry) {
    list.replaceChildren(el("li", { class: "draw empty" }, gettext("Your draws appear here when you play a hand.")));
    return;
  }
  const result = entry.result && !entry.result.cancelled ? entry.result : null;
  if (result) {
    const showing = state.shownDraw ?? result.best_draw;
    list.replaceChildren(...result.draws.map((draw, index) => {
      const best = index === result.best_draw;
      const tag = best ? gettext("best") : draw.bought ? gettext("bought") : gettext("not bought");
      const button = el(
        "button",
        { type: "button", class: "draw-button", "aria-pressed": String(index === showing), title: gettext("Show this draw on the board") },
        el("span", { class: "draw-head" }, el("span", {}, fmt(gettext("Draw %(n)s"), { n: draw.number })), el("span", { class: "draw-tag" }, tag)),
        el("span", { class: "mini-cards" }, ...draw.cards.map((code) => card(code, { mini: true }))),
        el("span", { class: "draw-category" }, CATEGORIES[draw.category]),
      );
      button.addEventListener("click", () => {
        state.shownDraw = index;
        renderBoard();
        renderDraws();
      });
      return el("li", {
        class: `draw${draw.bought ? " bought" : " unbought"}${best ? " best" : ""}`,
        "data-testid": `draw-${draw.number}`,
        "data-bought": String(draw.bought),
      }, button);
    }));
    return;
  }
  const currency = state.table.config.currency;
  const rows = [];
  for (let number = 1; number <= entry.max_draws; number += 1) {
    const bought = number <= entry.draws_bought;
    const status = number === 1 ? gettext("with the ante") : bought ? gettext("bought") : formatMinor(entry.draw_price_minor, currency);
    rows.push(el(
      "li",
      { class: `draw${bought ? " bought" : " unbought"}`, "data-testid": `draw-${number}`, "data-bought": String(bought) },
      el("span", { class: "draw-head" }, el("span", {}, fmt(gettext("Draw %(n)s"), { n: number })), el("span", { class: "draw-tag" }, status)),
      el("span", { class: "mini-cards" }, ...Array.from({ length: 5 }, () => cardBack({ mini: true }))),
    ));
  }
  list.replaceChildren(...rows);
}

function renderOdds() {
  const hand = state.table.hand;
  const entry = currentEntry();
  const panel = entry?.panel ?? null;
  const achievable = new Set(hand?.achievable ?? []);
  const hold = displayedHold();
  const draws = entry?.draws_bought ?? 1;
  const holdState = $("hold-state");
  holdState.dataset.hold = hold.map((held) => (held ? "H" : "D")).join("");
  const heldCount = hold.filter(Boolean).length;
  // Seed 000 §3: the odds appear once a card is held or a tip is used, not from the deal.
  const active = Boolean(panel) && oddsActive(state.hold, state.tipHand !== null && state.tipHand === hand?.id);
  if (!panel) holdState.textContent = hand ? gettext("Play a hand to see your odds.") : "";
  else if (!active) holdState.textContent = gettext("Hold a card or use a tip to see your odds.");
  else if (heldCount === 5) holdState.textContent = gettext("Holding all five cards.");
  else holdState.textContent = fmt(gettext("Holding %(held)s, changing %(changed)s."), { held: heldCount, changed: 5 - heldCount });
  $("best-of-header").textContent = fmt(gettext("Best of %(n)s"), { n: draws });
  $("initial-category").textContent = panel ? fmt(gettext("Dealt: %(hand)s"), { hand: CATEGORIES[panel.initial_category] }) : "";

  const odds = active ? holdOdds(panel, hold, draws) : null;
  const rows = CATEGORIES.map((label, category) => {
    const unachievable = hand && !achievable.has(category);
    const classes = [
      unachievable ? "unachievable" : "",
      odds && odds.best[category] > 0 ? "possible" : "",
      panel && category === panel.initial_category ? "dealt" : "",
    ].filter(Boolean).join(" ");
    return el(
      "tr",
      { class: classes, "data-testid": `odds-${category}`, title: unachievable ? gettext("Nobody can make this hand on this board") : null },
      el("th", { scope: "row" }, label),
      el("td", { class: "num" }, odds ? percent(odds.one[category]) : "–"),
      el("td", { class: "num" }, odds ? percent(odds.best[category]) : "–"),
    );
  }).reverse();
  $("odds-rows").replaceChildren(...rows);
  $("improve-one").textContent = odds ? percent(odds.improveOne) : "–";
  $("improve-best").textContent = odds ? percent(odds.improveBest) : "–";
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

function renderControls() {
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
function tick() {
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
