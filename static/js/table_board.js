// The game screen's board (static/js/table.js): the reels with the player's payline, the
// draws bought or played, and the probability panel of the hold on screen.
import { CATEGORIES, card, cardBack, cardName, isRed } from "./cards.js";
import { el, fmt, formatMinor, gettext, localDecimal } from "./common.js";
import { holdOdds, oddsActive } from "./odds.js";
import { spinReel } from "./reels.js";
import { $, canPlay, currentEntry, displayedHold, shown, state } from "./table_state.js";

const CENTER_ROW = 4; // the payline: the row where each player's own cards line up

function percent(p) {
  if (p <= 0) return "–";
  if (p >= 1) return "100%";
  if (p < 0.001) return `<${localDecimal("0.1")}%`;
  const text = (p * 100).toFixed(1);
  return text === "100.0" ? `>${localDecimal("99.9")}%` : `${localDecimal(text)}%`;
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

export function renderBoard() {
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

export function renderDraws() {
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

export function renderOdds() {
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
