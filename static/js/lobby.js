// The lobby: table lines pushed live over ws/lobby/, re-read over HTTP as a fallback.
import { el, fetchJson, fmt, formatBps, formatMinor, gettext, openSocket, pgettext } from "./common.js";

const SPEEDS = { turbo: pgettext("table speed", "turbo"), fast: pgettext("table speed", "fast"), normal: pgettext("table speed", "normal"), slow: pgettext("table speed", "slow") };
const PHASES = { waiting: pgettext("table phase", "waiting"), change: pgettext("table phase", "change"), results: pgettext("table phase", "results"), closed: pgettext("table phase", "closed") };
const MODES = { cash: gettext("cash"), fun: gettext("fun") };

const table = document.querySelector("[data-testid=lobby-table]");
const body = table.tBodies[0];
const status = document.querySelector("[data-testid=lobby-status]");

/** A table's jackpots: icon, name for screen readers, live amount (seed 001, Jackpots). */
function renderJackpots(t) {
  if (!t.jackpots || t.jackpots.length === 0) return [el("span", { class: "muted" }, gettext("none"))];
  return t.jackpots.map((j) =>
    el(
      "span",
      {
        class: `jackpot jackpot-${j.kind}`,
        "data-testid": "jackpot",
        title: `${j.name}: ${j.one_in ? fmt(gettext("drawn 1 in %(n)s hands"), { n: j.one_in }) : gettext("won by a royal flush")}`,
      },
      el("span", { class: "jackpot-icon", "aria-hidden": "true" }, j.kind === "royal" ? "♛" : "★"),
      el("span", { class: "visually-hidden" }, fmt(gettext("%(name)s jackpot"), { name: j.name })),
      ` ${formatMinor(j.balance_minor, t.currency)}`,
    ),
  );
}

/** The line of one table, with the same cells as templates/lobby/lobby.html. */
function renderRow(t) {
  const href = `/tables/${t.id}/`;
  return el(
    "tr",
    { dataset: { tableId: t.id }, "data-testid": "lobby-row" },
    el(
      "th",
      { scope: "row", dataset: { field: "name" } },
      el("a", { href }, t.name),
      " ",
      el("a", { class: "details-link", href: `/tables/${t.id}/details/`, "data-testid": "table-details" }, gettext("conditions")),
      t.next_special ? el("br") : null,
      t.next_special ? el("small", { class: "next-special", "data-testid": "next-special" }, fmt(gettext("Special: %(special)s"), { special: t.next_special })) : null,
    ),
    el("td", { dataset: { field: "mode" } }, el("span", { class: `badge badge-${t.mode}` }, MODES[t.mode] ?? t.mode), t.mode === "cash" ? ` ${t.currency}` : null),
    el("td", { class: "num", dataset: { field: "ante", label: gettext("Ante") } }, formatMinor(t.ante_minor, t.currency)),
    el("td", { dataset: { field: "speed", label: gettext("Speed") } }, `${SPEEDS[t.speed] ?? t.speed} · ${t.change_seconds} s`),
    el("td", { class: "num", dataset: { field: "rake", label: gettext("Rake") } }, formatBps(t.rake_bps)),
    el("td", { class: "num", dataset: { field: "paid", label: pgettext("share of players paid", "Paid") } }, fmt(gettext("top %(share)s"), { share: formatBps(t.paid_fraction_bps) })),
    el("td", { dataset: { field: "jackpots", label: gettext("Jackpots") } }, ...renderJackpots(t)),
    el("td", { class: "num", dataset: { field: "players", label: gettext("Players") } }, String(t.players)),
    el("td", { class: "num", dataset: { field: "pool", label: gettext("Pool") } }, formatMinor(t.pool_minor, t.currency)),
    el("td", { dataset: { field: "phase" } }, el("span", { class: `phase phase-${t.phase}` }, PHASES[t.phase] ?? t.phase)),
    el(
      "td",
      { dataset: { field: "play" } },
      el("a", { class: "button button-small button-primary", href, "data-testid": "open-table" }, t.is_open ? gettext("Play") : gettext("Watch")),
    ),
  );
}

/** Replace (or add) a WiderPoker table's line, unless we already show a newer version of it. */
function upsert(t) {
  if (/^T\d+$/.test(t.currency)) return; // a tournament's table (its chips' currency): listed on /tournaments/
  const current = body.querySelector(`tr[data-table-id="${t.id}"]`);
  if (current && Number(current.dataset.version) > t.version) return;
  const row = renderRow(t);
  row.dataset.version = t.version;
  if (current) {
    current.replaceWith(row);
  } else {
    body.querySelector(".empty-row")?.remove();
    body.append(row);
  }
}

const BETTING = {
  "no-limit": () => gettext("Hold'em no-limit"),
  "pot-limit": () => gettext("Hold'em pot-limit"),
  "fixed-limit": () => gettext("Hold'em fixed-limit"),
};

/** A Hold'em table's line, with the same cells as templates/lobby/lobby.html. */
function renderHoldemRow(t) {
  const href = `/tables/${t.id}/`;
  return el(
    "tr",
    { dataset: { tableId: t.id }, "data-testid": "holdem-row" },
    el("th", { scope: "row", dataset: { field: "name" } }, el("a", { href }, t.name)),
    el("td", { dataset: { field: "mode" } }, el("span", { class: `badge badge-${t.mode}` }, t.mode === "cash" ? gettext("cash") : gettext("fun")), t.mode === "cash" ? ` ${t.currency}` : null),
    el("td", { dataset: { field: "game", label: gettext("Game") } }, (BETTING[t.betting] ?? (() => `Hold'em ${t.betting}`))()),
    el("td", { dataset: { field: "stakes", label: gettext("Stakes") } }, t.stakes),
    el("td", { class: "num", dataset: { field: "seats", label: gettext("Seats") } }, `${t.seats_taken}/${t.seats}`),
    el(
      "td",
      { class: "num", dataset: { field: "buy-in", label: gettext("Buy-in") } },
      fmt(gettext("%(low)s to %(high)s"), { low: formatMinor(t.min_buy_in_minor, t.currency), high: formatMinor(t.max_buy_in_minor, t.currency) }),
    ),
    el("td", { class: "num", dataset: { field: "rake", label: gettext("Rake") } }, formatBps(t.rake_bps)),
    el(
      "td",
      { dataset: { field: "play" } },
      el("a", { class: "button button-small button-primary", href, "data-testid": "open-holdem-table" }, t.is_open ? gettext("Play") : gettext("Watch")),
    ),
  );
}

function renderHoldem(rows) {
  const holdemBody = document.querySelector("[data-testid=holdem-lobby-table]")?.tBodies[0];
  if (!holdemBody || !rows || rows.length === 0) return;
  holdemBody.replaceChildren(...rows.map(renderHoldemRow));
}

/**
 * Each game's live line (the ``lobby_table`` frame, pushed for every table): the game of
 * the line picks its section. A game without one here (Hold'em: its section is re-read over
 * HTTP, renderHoldem) keeps its lines as the last read gave them.
 */
const LIVE_LINES = { widerpoker: upsert };

function liveLine(t) {
  LIVE_LINES[t.game ?? "widerpoker"]?.(t);
}

async function refetch() {
  try {
    const data = await fetchJson(table.dataset.tablesUrl);
    data.tables.forEach(upsert); // WiderPoker's section (lobby/tables.json lists each game's lines under its own key)
    renderHoldem(data.holdem_tables);
  } catch {
    // offline for now: the next tick or a pushed frame will catch up
  }
}

function showStatus(state) {
  status.dataset.state = state;
  status.querySelector(".live-label").textContent =
    state === "open" ? gettext("Live") : state === "reconnecting" ? gettext("Reconnecting…") : gettext("Offline");
}

openSocket(table.dataset.socketUrl, {
  onFrame(frame) {
    if (frame.type === "lobby_table") liveLine(frame.table);
  },
  onOpen(reopened) {
    if (reopened) refetch(); // frames sent while we were away are lost
  },
  onStatus: showStatus,
});
setInterval(refetch, Number(table.dataset.refreshSeconds) * 1000);
