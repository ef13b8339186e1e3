// The Hold'em game screen: follows the table socket and renders the two Hold'em frames
// (tables/holdem_frames.py: "holdem_state" to everyone at the table, "holdem_private" to
// this player only), and sends the player's actions. Driven purely by the frames: a
// practice game is a Hold'em table with bots and uses this screen unchanged.
import { cardName } from "./cards.js";
import { el, fetchJson, fmt, formatMinor, formatWhen, gettext, openTableSocket, pgettext, refusalText, showKicked as sayKicked, toast } from "./common.js";
import { clampTo, presetSizes } from "./holdem_sizes.js";

const PING_MS = 10000;
const TICK_MS = 200;
const MINOR_PER_MAJOR = 100;

const boot = JSON.parse(document.getElementById("holdem-boot").textContent);
const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

const state = {
  table: boot.table, // HoldemTableFrame
  private: boot.private, // HoldemPrivateFrame
  offsetMs: 0, // server clock minus local clock
  refs: new Map(), // ref -> {action, onError}
  nextRef: 1,
  announcedTurn: null, // "hand:seat" last announced
  announcedResult: null, // hand id whose result was announced
  dialog: null, // {mode: "seat" | "add", seat}
  amountTouched: false, // the player moved the slider or typed an amount this turn
  turnKey: null,
  kicked: false, // removed from play (KickedFrame): the page is leaving for the lobby
};

// --- money and clock -------------------------------------------------------------------------

const currency = () => state.table.config.currency;
// A practice game names its FUN chips as its player chose (seed 004, *moneta*): a label only.
const PRACTICE_LABEL = document.querySelector("[data-testid=practice-banner]")?.dataset.currencyLabel;
const money = (minor) => formatMinor(minor, PRACTICE_LABEL || currency());
const toMajorInput = (minor) => (minor / MINOR_PER_MAJOR).toFixed(2);
const fromMajorInput = (text) => Math.round(Number.parseFloat(text) * MINOR_PER_MAJOR);

function syncClock(serverTime) {
  if (serverTime) state.offsetMs = Date.parse(serverTime) - Date.now();
}

const serverNow = () => Date.now() + state.offsetMs;

// --- frames ----------------------------------------------------------------------------------

function applyTable(frame, { force = false } = {}) {
  if (frame.table_id !== state.table.table_id) return;
  if (!force && frame.version < state.table.version) return; // stale push
  const gap = frame.version > state.table.version + 1;
  state.table = frame;
  syncClock(frame.server_time);
  render();
  if (gap && !force) resync();
}

function applyPrivate(frame, { force = false } = {}) {
  if (frame.table_id !== state.table.table_id) return;
  if (!force && frame.version < state.private.version) return;
  state.private = frame;
  render();
}

async function resync() {
  try {
    const snapshot = await fetchJson(boot.urls.snapshot);
    applyTable(snapshot.table, { force: true });
    applyPrivate(snapshot.private, { force: true });
  } catch (error) {
    toast(fmt(gettext("Could not refresh the table: %(error)s"), { error: error.message }), "error", { key: "resync" });
  }
}

// --- rendering -------------------------------------------------------------------------------

function cardImage(code, { small = false } = {}) {
  return el("img", {
    class: `pcard${small ? " pcard-small" : ""}`,
    src: `${boot.urls.cards}${code}.svg`,
    alt: cardName(code),
    width: small ? 36 : 56,
    height: small ? 50 : 78,
    dataset: { card: code },
  });
}

function cardBackImage({ small = false } = {}) {
  return el("img", {
    class: `pcard back${small ? " pcard-small" : ""}`,
    src: `${boot.urls.cards}back.svg`,
    alt: gettext("face down"),
    width: small ? 36 : 56,
    height: small ? 50 : 78,
  });
}

const mySeat = () => state.private.seat;
const hand = () => state.table.hand;
const handRunning = () => Boolean(hand() && !hand().result && hand().street !== "complete");

function seatView(number) {
  return state.table.seats.find((seat) => seat.seat === number) ?? null;
}

/** Where seat ``number`` sits on the oval (percent of the oval's box): the player's own
 * seat at the bottom, the others clockwise. */
function seatPlace(number, count) {
  const anchor = mySeat() ?? 0;
  const angle = Math.PI / 2 + ((number - anchor) * 2 * Math.PI) / count;
  return {
    x: 50 + 44 * Math.cos(angle),
    y: 50 + 41 * Math.sin(angle),
    bx: 50 + 27 * Math.cos(angle),
    by: 50 + 24 * Math.sin(angle),
  };
}

/** A seat's name whose distinguishing end (a number: "practicebot-3") stays readable when
 * a narrow seat box cuts the rest ("practi…-3"); the whole name is the box's title. */
function seatName(name, number) {
  const attrs = { class: "seat-name", title: name, dataset: { testid: `seat-name-${number}` } };
  const match = /^(.+?)([-_ .#]?\d+)$/.exec(name);
  if (!match) return el("span", attrs, name);
  return el("span", attrs, el("span", { class: "seat-name-head" }, match[1]), el("span", { class: "seat-name-tail" }, match[2]));
}

function seatBadges(seat, current) {
  const badges = [];
  if (seat.bot) badges.push(["bot", gettext("Bot")]);
  if (seat.status === "sitting_out") badges.push(["out", gettext("Sitting out")]);
  if (!seat.connected) badges.push(["gone", gettext("Disconnected")]);
  if (seat.leaving) badges.push(["leaving", gettext("Leaving")]);
  if (current && seat.all_in && seat.in_hand) badges.push(["allin", gettext("All-in")]);
  if (current && seat.folded) badges.push(["folded", gettext("Folded")]);
  if (seat.waiting && !seat.in_hand && !seat.folded) badges.push(["waiting", gettext("Waits for the big blind")]);
  return badges.map(([kind, text]) => el("span", { class: `seat-badge seat-badge-${kind}`, dataset: { badge: kind } }, text));
}

function renderSeats() {
  const list = $("seats");
  const count = state.table.config.seats;
  const current = hand();
  const running = handRunning();
  const won = current?.result?.won ?? {};
  const seated = mySeat() !== null;
  const items = [];
  const bets = [];
  for (let number = 0; number < count; number += 1) {
    const seat = seatView(number);
    const place = seatPlace(number, count);
    const style = `--x:${place.x.toFixed(2)}%;--y:${place.y.toFixed(2)}%;--bx:${place.bx.toFixed(2)}%;--by:${place.by.toFixed(2)}%`;
    if (seat === null) {
      const take = el(
        "button",
        {
          type: "button",
          class: "seat-empty",
          dataset: { testid: `take-seat-${number}`, seat: String(number) },
          disabled: seated || state.table.phase === "closed" ? true : null,
          // The name contains the visible text (axe label-content-name-mismatch): "Take seat 5".
          "aria-label": seated || state.table.phase === "closed" ? fmt(gettext("Seat %(seat)s: empty"), { seat: number + 1 }) : fmt(gettext("Take seat %(seat)s"), { seat: number + 1 }),
        },
        seated || state.table.phase === "closed" ? pgettext("seat", "Empty") : gettext("Take seat"),
      );
      take.addEventListener("click", () => openSeatDialog(number));
      items.push(el("li", { class: "seat seat-open", style, dataset: { testid: `seat-${number}`, seat: String(number) } }, take));
      continue;
    }
    const mine = number === mySeat();
    const toAct = running && current.to_act === number;
    const markers = [];
    if (current && current.button === number) markers.push(el("span", { class: "marker marker-button", title: gettext("Dealer button"), dataset: { testid: "dealer-button" } }, "D"));
    if (current && current.small_blind_seat === number) markers.push(el("span", { class: "marker marker-sb", title: gettext("Small blind"), dataset: { testid: "small-blind" } }, pgettext("small blind, short", "SB")));
    if (current && current.big_blind_seat === number) markers.push(el("span", { class: "marker marker-bb", title: gettext("Big blind"), dataset: { testid: "big-blind" } }, pgettext("big blind, short", "BB")));
    let cards = null;
    if (seat.shown) cards = seat.shown.map((code) => cardImage(code, { small: true }));
    else if (mine && state.private.hole) cards = state.private.hole.map((code) => cardImage(code, { small: true }));
    else if (running && (seat.in_hand || seat.all_in) && !seat.folded) cards = [cardBackImage({ small: true }), cardBackImage({ small: true })];
    const wonHere = won[String(number)];
    const label = [
      fmt(mine ? gettext("Seat %(seat)s: %(name)s (you)") : gettext("Seat %(seat)s: %(name)s"), { seat: number + 1, name: seat.name }) + (seat.bot ? gettext(", bot") : ""),
      fmt(gettext("stack %(amount)s"), { amount: money(seat.stack_minor) }),
      seat.bet_minor ? fmt(gettext("bet %(amount)s"), { amount: money(seat.bet_minor) }) : null,
      toAct ? gettext("to act") : null,
    ].filter(Boolean).join(", ");
    const box = el(
      "div",
      { class: "seat-box", role: "group", "aria-label": label },
      seatName(seat.name, number),
      el("span", { class: "seat-stack", dataset: { testid: `seat-stack-${number}`, stackMinor: String(seat.stack_minor) } }, money(seat.stack_minor)),
      el("span", { class: "seat-badges" }, ...seatBadges(seat, current)),
      markers.length ? el("span", { class: "seat-markers" }, ...markers) : null,
      seat.bet_minor ? el("span", { class: "seat-bet-inline", "aria-hidden": "true" }, fmt(gettext("bet %(amount)s"), { amount: money(seat.bet_minor) })) : null,
      wonHere ? el("span", { class: "seat-won", dataset: { testid: `seat-won-${number}`, wonMinor: String(wonHere) } }, fmt(gettext("wins %(amount)s"), { amount: money(wonHere) })) : null,
    );
    const classes = ["seat", "seat-taken"];
    if (mine) classes.push("seat-mine");
    if (toAct) classes.push("seat-to-act");
    if (seat.folded) classes.push("seat-folded");
    if (seat.status === "sitting_out" || !seat.connected) classes.push("seat-away");
    items.push(
      el(
        "li",
        {
          class: classes.join(" "),
          style,
          "aria-current": toAct ? "true" : null,
          dataset: { testid: `seat-${number}`, seat: String(number), toAct: toAct ? "true" : "false", bot: seat.bot ? "true" : "false" },
        },
        cards ? el("span", { class: "seat-cards", dataset: { testid: `seat-cards-${number}` } }, ...cards) : null,
        box,
      ),
    );
    if (seat.bet_minor) {
      bets.push(el("span", { class: "seat-bet", style, dataset: { testid: `seat-bet-${number}`, betMinor: String(seat.bet_minor) } }, money(seat.bet_minor)));
    }
  }
  list.replaceChildren(...items);
  $("bets").replaceChildren(...bets);
}

function renderBoard() {
  const current = hand();
  const board = current?.board ?? [];
  const slots = [];
  for (let k = 0; k < 5; k += 1) {
    slots.push(board[k] ? cardImage(board[k]) : el("span", { class: "pcard pcard-slot", "aria-hidden": "true" }));
  }
  $("board").replaceChildren(...slots);
  $("board").setAttribute("aria-label", board.length ? fmt(gettext("Board: %(cards)s"), { cards: board.map(cardName).join(", ") }) : gettext("Board: no cards yet"));
  const pots = current?.pots ?? [];
  const names = (seats) => seats.map((number) => seatView(number)?.name ?? fmt(gettext("seat %(seat)s"), { seat: number + 1 })).join(", ");
  const sorted = (seats) => [...seats].sort((a, b) => a - b);
  $("pots").replaceChildren(
    ...pots.map((pot, k) =>
      el(
        "li",
        { class: "pot", dataset: { testid: `pot-${k}`, amountMinor: String(pot.amount_minor), seats: sorted(pot.seats).join(",") } },
        el("span", { class: "pot-name" }, k === 0 ? gettext("Main pot") : fmt(gettext("Side pot %(number)s"), { number: k })),
        el("strong", { class: "pot-amount" }, money(pot.amount_minor)),
        pot.seats.length ? el("span", { class: "pot-seats" }, names(sorted(pot.seats))) : null,
      ),
    ),
  );
  const street = current ? current.street : "";
  const streetText = {
    preflop: pgettext("street", "Pre-flop"), flop: pgettext("street", "Flop"), turn: pgettext("street", "Turn"),
    river: pgettext("street", "River"), showdown: pgettext("street", "Showdown"), complete: gettext("Hand over"),
  }[street] ?? gettext("Waiting for players");
  $("street").textContent = streetText;
  $("street").dataset.street = street;
  $("total-pot").textContent = current ? money(current.total_pot_minor) : "–";
  $("total-pot").dataset.potMinor = current ? String(current.total_pot_minor) : "";
  $("hand-number").textContent = current ? `#${current.number}` : "–";
}

function renderMe() {
  const priv = state.private;
  const seated = priv.seat !== null;
  const cards = priv.hole ? priv.hole.map((code, k) => {
    const image = cardImage(code);
    image.dataset.testid = `my-card-${k}`;
    return image;
  }) : [];
  $("my-cards").replaceChildren(...cards);
  $("my-stack").textContent = seated ? money(priv.stack_minor) : gettext("not seated");
  $("my-stack").dataset.stackMinor = String(priv.stack_minor);
  $("wallet").textContent = money(priv.wallet_minor);
  $("wallet").dataset.walletMinor = String(priv.wallet_minor);
  const equity = $("equity");
  equity.hidden = !state.table.config.show_probabilities || priv.equity === null || priv.equity === undefined;
  if (!equity.hidden) $("equity-value").textContent = `${(priv.equity * 100).toFixed(1)}%`;
  // Seat controls.
  const inHand = seated && handRunning() && Boolean(seatView(priv.seat)?.in_hand);
  // A busted player (no chips) cannot sit in: his way on is to add chips, or to leave.
  const busted = seated && priv.stack_minor === 0 && !inHand;
  $("sit-out").hidden = !seated || priv.status !== "active";
  $("sit-in").hidden = !seated || priv.status === "active" || busted;
  $("leave").hidden = !seated;
  const addChips = $("add-chips-open");
  addChips.hidden = !seated;
  addChips.classList.toggle("button-primary", busted);
  addChips.classList.toggle("button-quiet", !busted);
  addChips.disabled = inHand || priv.stack_minor >= state.table.config.max_buy_in_minor;
  addChips.title = inHand ? gettext("Chips can be added between hands") : "";
  let message = "";
  if (state.table.phase === "closed") message = gettext("This table is closed: chips at the table went back to the wallets.");
  else if (!seated) message = gettext("Click an empty seat to sit down.");
  else if (busted) message = gettext("You have no chips left: add chips to play on, or leave the table.");
  else if (priv.status === "sitting_out") message = gettext("You are sitting out: sit in to be dealt the next hand.");
  else if (seatView(priv.seat)?.waiting && !inHand) message = gettext("You wait for the big blind to reach your seat.");
  else if (!handRunning()) message = gettext("The next hand starts when two players are ready.");
  $("me-message").textContent = message;
}

// --- betting ---------------------------------------------------------------------------------

function legal() {
  return handRunning() && hand().to_act === mySeat() ? state.private.legal : null;
}

function chosenAmount() {
  return clampTo(legal(), fromMajorInput($("bet-amount").value));
}

function setAmount(minor, { from = null } = {}) {
  const clamped = clampTo(legal(), minor);
  if (clamped === null) return;
  if (from !== "slider") $("bet-slider").value = String(clamped);
  if (from !== "input") $("bet-amount").value = toMajorInput(clamped);
  updateRaiseLabel();
}

function updateRaiseLabel() {
  const options = legal();
  if (!options) return;
  const raise = $("bet-raise");
  const amount = chosenAmount();
  const bet = options.kinds.includes("bet");
  raise.dataset.action = bet ? "bet" : "raise";
  raise.dataset.amountMinor = amount === null ? "" : String(amount);
  raise.querySelector("[data-role=label]").textContent = fmt(bet ? gettext("Bet %(amount)s") : gettext("Raise to %(amount)s"), { amount: amount === null ? "" : money(amount) });
}

function renderActions() {
  const options = legal();
  const bar = $("action-bar");
  bar.hidden = options === null || options === undefined;
  if (bar.hidden) {
    state.turnKey = null;
    return;
  }
  const key = `${hand().id}:${hand().street}:${state.table.version}`;
  const fresh = state.turnKey === null || !state.turnKey.startsWith(`${hand().id}:${hand().street}:`);
  state.turnKey = key;
  const kinds = new Set(options.kinds);
  $("fold").hidden = !kinds.has("fold");
  const checkCall = $("check-call");
  checkCall.hidden = !kinds.has("check") && !kinds.has("call");
  checkCall.dataset.action = kinds.has("check") ? "check" : "call";
  checkCall.querySelector("[data-role=label]").textContent = kinds.has("check") ? pgettext("poker action", "Check") : fmt(gettext("Call %(amount)s"), { amount: money(options.call_minor) });
  const canSize = (kinds.has("bet") || kinds.has("raise")) && options.min_to_minor !== null;
  $("bet-raise").hidden = !canSize;
  const fixed = canSize && options.min_to_minor === options.max_to_minor;
  $("sizing").hidden = !canSize || fixed;
  const allIn = $("all-in");
  allIn.hidden = !kinds.has("all_in");
  // Seed 003, Showdown: a player whose hand wins nothing may show it or muck it.
  $("show").hidden = !kinds.has("show");
  $("muck").hidden = !kinds.has("muck");
  allIn.querySelector("[data-role=label]").textContent = options.all_in_to_minor ? fmt(gettext("All-in %(amount)s"), { amount: money(options.all_in_to_minor) }) : gettext("All-in");
  if (canSize) {
    const slider = $("bet-slider");
    const input = $("bet-amount");
    slider.min = String(options.min_to_minor);
    slider.max = String(options.max_to_minor);
    slider.step = String(state.table.config.small_blind_minor || 1);
    input.min = toMajorInput(options.min_to_minor);
    input.max = toMajorInput(options.max_to_minor);
    const sizes = presetSizes({
      legal: options,
      totalPotMinor: hand().total_pot_minor,
      bets: state.table.seats.map((seat) => seat.bet_minor),
    });
    for (const button of document.querySelectorAll("[data-preset]")) {
      const size = sizes[button.dataset.preset];
      button.dataset.amountMinor = size === null ? "" : String(size);
      button.disabled = size === null;
      button.title = size === null ? gettext("Not legal now") : money(size);
    }
    if (fresh || !state.amountTouched) {
      state.amountTouched = false;
      setAmount(options.min_to_minor);
    } else {
      setAmount(chosenAmount() ?? options.min_to_minor);
    }
  }
}

function act(kind) {
  const options = legal();
  if (!options) return;
  const button = { fold: $("fold"), check: $("check-call"), call: $("check-call"), bet: $("bet-raise"), raise: $("bet-raise"), all_in: $("all-in"), show: $("show"), muck: $("muck") }[kind];
  if (!button || !options.kinds.includes(kind) || button.hidden) return;
  // Seed 003 lets a player fold at any stage; a fold when checking is free is asked twice.
  if (kind === "fold" && options.kinds.includes("check") && !window.confirm(gettext("Checking is free. Fold anyway?"))) return;
  const fields = {};
  if (kind === "bet" || kind === "raise") fields.amount = chosenAmount();
  send(kind, fields);
  $("action-bar").hidden = true; // until the next frame says it is our turn again
}

// --- the turn clock --------------------------------------------------------------------------

function renderTimer() {
  const current = hand();
  const timer = $("timer");
  if (!handRunning() || current.to_act === null || !current.act_deadline) {
    timer.hidden = true;
    return;
  }
  const now = serverNow();
  const deadline = Date.parse(current.act_deadline);
  const bankFrom = current.time_bank_from ? Date.parse(current.time_bank_from) : deadline;
  const started = current.turn_started_at ? Date.parse(current.turn_started_at) : now;
  const inBank = now >= bankFrom;
  const end = inBank ? deadline : bankFrom;
  const begin = inBank ? bankFrom : started;
  const left = Math.max(0, end - now);
  timer.hidden = false;
  timer.dataset.stage = inBank ? "bank" : "act";
  const mine = current.to_act === mySeat();
  const who = mine ? gettext("You") : (seatView(current.to_act)?.name ?? "");
  timer.querySelector("[data-role=label]").textContent = fmt(inBank ? gettext("%(who)s: time bank") : gettext("%(who)s: time to act"), { who });
  timer.querySelector("[data-role=value]").textContent = `${Math.ceil(left / 1000)} s`;
  const span = Math.max(1, end - begin);
  timer.querySelector("[data-role=bar]").style.width = `${Math.min(100, (100 * left) / span).toFixed(1)}%`;
}

// --- announcements ---------------------------------------------------------------------------

function announce() {
  const current = hand();
  if (!current) return;
  if (handRunning() && current.to_act !== null) {
    const key = `${current.id}:${current.street}:${current.to_act}:${current.turn_started_at}`;
    if (state.announcedTurn !== key) {
      state.announcedTurn = key;
      const mine = current.to_act === mySeat();
      $("announcer").textContent = mine ? gettext("Your turn.") : fmt(gettext("%(name)s to act."), { name: seatView(current.to_act)?.name ?? gettext("A player") });
    }
  }
  if (current.result && state.announcedResult !== current.id) {
    state.announcedResult = current.id;
    const winners = Object.entries(current.result.won)
      .filter(([, amount]) => amount > 0)
      .map(([seat, amount]) => fmt(gettext("%(name)s wins %(amount)s"), { name: seatView(Number(seat))?.name ?? fmt(gettext("Seat %(seat)s"), { seat: Number(seat) + 1 }), amount: money(amount) }));
    $("results-announcer").textContent = fmt(gettext("Hand #%(number)s over. %(winners)s."), { number: current.number, winners: winners.join(". ") });
  }
}

function renderFooter() {
  const current = hand();
  $("commitment").textContent = current ? current.commitment : "–";
  const over = Boolean(current?.result);
  $("seed-wrap").hidden = !over;
  // The seeds give the whole deck, folded hands included: null until result.seed_public_at
  // (docs/provably-fair.md, Card commitments).
  $("seed").textContent = !over ? "" : current.result.server_seed ?? fmt(gettext("published %(when)s"), { when: formatWhen(current.result.seed_public_at) });
  const link = $("hand-link");
  const phh = $("phh-link");
  link.hidden = !over;
  phh.hidden = !over;
  if (over) {
    link.href = boot.urls.hand.replace("{id}", String(current.id));
    phh.href = boot.urls.phh.replace("{id}", String(current.id));
  }
}

function render() {
  renderSeats();
  renderBoard();
  renderMe();
  renderActions();
  renderTimer();
  renderFooter();
  announce();
}

// --- seat dialog: take a seat, add chips -----------------------------------------------------

function dialogRange() {
  const config = state.table.config;
  const wallet = state.private.wallet_minor;
  if (state.dialog.mode === "add") {
    // Between hands up to the maximum buy-in; a player who ran out buys at least the minimum.
    const room = config.max_buy_in_minor - state.private.stack_minor;
    const least = state.private.stack_minor === 0 ? config.min_buy_in_minor : 1;
    return { min: Math.min(least, room), max: Math.min(room, wallet) };
  }
  return { min: config.min_buy_in_minor, max: Math.min(config.max_buy_in_minor, wallet) };
}

function openSeatDialog(number) {
  if (mySeat() !== null) return;
  state.dialog = { mode: "seat", seat: number };
  showDialog(fmt(gettext("Take seat %(seat)s"), { seat: number + 1 }));
}

function openAddChips() {
  state.dialog = { mode: "add", seat: mySeat() };
  showDialog(gettext("Add chips"));
}

function showDialog(title) {
  const dialog = $("seat-dialog");
  const range = dialogRange();
  dialog.querySelector("[data-role=title]").textContent = title;
  $("dialog-wallet").textContent = money(state.private.wallet_minor);
  $("dialog-error").textContent = range.max < range.min ? gettext("Your wallet does not hold enough for this table.") : "";
  $("blind-choice").hidden = state.dialog.mode !== "seat";
  const label = dialog.querySelector("[data-role=amount-label]");
  label.textContent = fmt(state.dialog.mode === "seat" ? gettext("Buy-in (%(min)s to %(max)s)") : gettext("Chips to add (%(min)s to %(max)s)"), { min: money(range.min), max: money(Math.max(range.min, range.max)) });
  const amount = $("buy-in-amount");
  const slider = $("buy-in-slider");
  amount.min = toMajorInput(range.min);
  amount.max = toMajorInput(Math.max(range.min, range.max));
  slider.min = String(range.min);
  slider.max = String(Math.max(range.min, range.max));
  slider.step = String(state.table.config.big_blind_minor);
  const start = state.dialog.mode === "seat" ? Math.max(range.min, Math.min(range.max, state.table.config.max_buy_in_minor)) : Math.max(range.min, range.max);
  slider.value = String(start);
  amount.value = toMajorInput(start);
  $("seat-confirm").disabled = range.max < range.min;
  $("seat-confirm").textContent = state.dialog.mode === "seat" ? gettext("Sit down") : gettext("Add chips");
  dialog.showModal();
  amount.focus();
}

function confirmDialog() {
  const range = dialogRange();
  const amount = fromMajorInput($("buy-in-amount").value);
  if (!Number.isFinite(amount) || amount < range.min || amount > range.max) {
    $("dialog-error").textContent = fmt(gettext("Choose an amount from %(min)s to %(max)s."), { min: money(range.min), max: money(range.max) });
    return false;
  }
  const onError = (frame) => toast(refusalText(frame) || frame.code, "error");
  if (state.dialog.mode === "seat") {
    const blind = document.querySelector("input[name=blind]:checked")?.value ?? "wait";
    send("join", { seat: state.dialog.seat, buy_in_minor: amount, blind }, onError);
  } else {
    send("add_chips", { amount_minor: amount }, onError);
  }
  return true;
}

// --- sending ---------------------------------------------------------------------------------

function send(type, fields = {}, onError = null) {
  const ref = state.nextRef;
  state.nextRef += 1;
  if (!socket.send({ type, ref, ...fields })) {
    toast(gettext("Not connected: try again in a moment."), "error", { key: "offline" });
    return null;
  }
  state.refs.set(ref, { action: type, onError });
  return ref;
}

function onAnswer(frame) {
  const pending = frame.ref !== undefined ? state.refs.get(frame.ref) : undefined;
  if (frame.ref !== undefined) state.refs.delete(frame.ref);
  if (frame.type === "ack") {
    if (frame.action === "leave") toast(gettext("You left the table: your chips are back in your wallet after the hand."));
    return;
  }
  if (pending?.onError) pending.onError(frame);
  else toast(refusalText(frame) || frame.code, "error", { key: frame.code });
  resync(); // whatever was refused, the screen shows the server's state again
}

function onFrame(frame) {
  switch (frame.type) {
    case "holdem_state": return applyTable(frame);
    case "holdem_private": return applyPrivate(frame);
    case "ack":
    case "error": return onAnswer(frame);
    case "pong": return syncClock(frame.server_time);
    case "kicked": return showKicked(frame.reason);
    default: return undefined; // frames of the other game's screen
  }
}

/** The server took the player away from the tables (common.js, showKicked): the reason in the player's message. */
function showKicked(reason) {
  sayKicked(reason, { state, message: $("me-message"), lobby: boot.urls.lobby });
}

const socket = openTableSocket(boot.urls.socket, { onFrame, resync, onKicked: () => showKicked(null), urls: boot.urls });

// --- wiring ----------------------------------------------------------------------------------

for (const button of document.querySelectorAll("[data-action]")) {
  button.addEventListener("click", () => act(button.dataset.action));
}
for (const button of document.querySelectorAll("[data-preset]")) {
  button.addEventListener("click", () => {
    state.amountTouched = true;
    setAmount(Number(button.dataset.amountMinor));
  });
}
$("bet-slider").addEventListener("input", (event) => {
  state.amountTouched = true;
  setAmount(Number(event.target.value), { from: "slider" });
});
$("bet-amount").addEventListener("input", () => {
  state.amountTouched = true;
  const typed = fromMajorInput($("bet-amount").value);
  if (Number.isFinite(typed)) $("bet-slider").value = String(typed);
  updateRaiseLabel();
});
$("bet-amount").addEventListener("change", () => setAmount(chosenAmount() ?? 0));
$("bet-amount").addEventListener("keydown", (event) => {
  if (event.key === "Enter") act($("bet-raise").dataset.action);
});
for (const button of document.querySelectorAll("[data-seat-action]")) {
  button.addEventListener("click", () => {
    const action = button.dataset.seatAction;
    if (action === "leave" && handRunning() && seatView(mySeat())?.in_hand
      && !window.confirm(gettext("Leave the table? You fold when your turn comes; your chips come back after the hand."))) return;
    send(action);
  });
}
$("add-chips-open").addEventListener("click", openAddChips);
$("buy-in-slider").addEventListener("input", (event) => {
  $("buy-in-amount").value = toMajorInput(Number(event.target.value));
});
$("buy-in-amount").addEventListener("input", () => {
  const typed = fromMajorInput($("buy-in-amount").value);
  if (Number.isFinite(typed)) $("buy-in-slider").value = String(typed);
});
$("seat-form").addEventListener("submit", (event) => {
  if (event.submitter?.value === "confirm" && !confirmDialog()) event.preventDefault();
});

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  if (target instanceof HTMLElement && (target.matches("input, textarea, select") || target.closest("dialog"))) return;
  const key = event.key.toLowerCase();
  if (!legal() || $("action-bar").hidden) return;
  if (key === "f") act("fold");
  else if (key === "c") act($("check-call").dataset.action);
  else if (key === "r") {
    const raise = $("bet-raise");
    if (!raise.hidden) act(raise.dataset.action);
  } else return;
  event.preventDefault();
});

setInterval(renderTimer, TICK_MS);
setInterval(() => socket.isOpen() && socket.send({ type: "ping" }), PING_MS);
render();
