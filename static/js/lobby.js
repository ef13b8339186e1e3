// The lobby: table lines pushed live over ws/lobby/, re-read over HTTP as a fallback.
import { el, fetchJson, formatBps, formatMinor, openSocket } from "./common.js";

const table = document.querySelector("[data-testid=lobby-table]");
const body = table.tBodies[0];
const status = document.querySelector("[data-testid=lobby-status]");

/** A table's jackpots: icon, name for screen readers, live amount (seed 001, Jackpots). */
function renderJackpots(t) {
  if (!t.jackpots || t.jackpots.length === 0) return [el("span", { class: "muted" }, "none")];
  return t.jackpots.map((j) =>
    el(
      "span",
      {
        class: `jackpot jackpot-${j.kind}`,
        "data-testid": "jackpot",
        title: `${j.name}: ${j.one_in ? `drawn 1 in ${j.one_in} hands` : "won by a royal flush"}`,
      },
      el("span", { class: "jackpot-icon", "aria-hidden": "true" }, j.kind === "royal" ? "♛" : "★"),
      el("span", { class: "visually-hidden" }, `${j.name} jackpot`),
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
      el("a", { class: "details-link", href: `/tables/${t.id}/details/`, "data-testid": "table-details" }, "conditions"),
      t.next_special ? el("br") : null,
      t.next_special ? el("small", { class: "next-special", "data-testid": "next-special" }, `Special: ${t.next_special}`) : null,
    ),
    el("td", { dataset: { field: "mode" } }, el("span", { class: `badge badge-${t.mode}` }, t.mode), t.mode === "cash" ? ` ${t.currency}` : null),
    el("td", { class: "num", dataset: { field: "ante", label: "Ante" } }, formatMinor(t.ante_minor, t.currency)),
    el("td", { dataset: { field: "speed", label: "Speed" } }, `${t.speed} · ${t.change_seconds} s`),
    el("td", { class: "num", dataset: { field: "rake", label: "Rake" } }, formatBps(t.rake_bps)),
    el("td", { class: "num", dataset: { field: "paid", label: "Paid" } }, `top ${formatBps(t.paid_fraction_bps)}`),
    el("td", { dataset: { field: "jackpots", label: "Jackpots" } }, ...renderJackpots(t)),
    el("td", { class: "num", dataset: { field: "players", label: "Players" } }, String(t.players)),
    el("td", { class: "num", dataset: { field: "pool", label: "Pool" } }, formatMinor(t.pool_minor, t.currency)),
    el("td", { dataset: { field: "phase" } }, el("span", { class: `phase phase-${t.phase}` }, t.phase)),
    el(
      "td",
      { dataset: { field: "play" } },
      el("a", { class: "button button-small button-primary", href, "data-testid": "open-table" }, t.is_open ? "Play" : "Watch"),
    ),
  );
}

/** Replace (or add) a table's line, unless we already show a newer version of it. */
function upsert(t) {
  if (t.game === "holdem") return; // Hold'em tables have their own list (renderHoldem)
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

/** A Hold'em table's line, with the same cells as templates/lobby/lobby.html. */
function renderHoldemRow(t) {
  const href = `/tables/${t.id}/`;
  return el(
    "tr",
    { dataset: { tableId: t.id }, "data-testid": "holdem-row" },
    el("th", { scope: "row", dataset: { field: "name" } }, el("a", { href }, t.name)),
    el("td", { dataset: { field: "mode" } }, el("span", { class: `badge badge-${t.mode}` }, t.mode), t.mode === "cash" ? ` ${t.currency}` : null),
    el("td", { dataset: { field: "game", label: "Game" } }, `Hold'em ${t.betting}`),
    el("td", { dataset: { field: "stakes", label: "Stakes" } }, t.stakes),
    el("td", { class: "num", dataset: { field: "seats", label: "Seats" } }, `${t.seats_taken}/${t.seats}`),
    el("td", { class: "num", dataset: { field: "buy-in", label: "Buy-in" } }, `${formatMinor(t.min_buy_in_minor, t.currency)} to ${formatMinor(t.max_buy_in_minor, t.currency)}`),
    el("td", { class: "num", dataset: { field: "rake", label: "Rake" } }, formatBps(t.rake_bps)),
    el(
      "td",
      { dataset: { field: "play" } },
      el("a", { class: "button button-small button-primary", href, "data-testid": "open-holdem-table" }, t.is_open ? "Play" : "Watch"),
    ),
  );
}

function renderHoldem(rows) {
  const holdemBody = document.querySelector("[data-testid=holdem-lobby-table]")?.tBodies[0];
  if (!holdemBody || !rows || rows.length === 0) return;
  holdemBody.replaceChildren(...rows.map(renderHoldemRow));
}

async function refetch() {
  try {
    const data = await fetchJson(table.dataset.tablesUrl);
    data.tables.forEach(upsert);
    renderHoldem(data.holdem_tables);
  } catch {
    // offline for now: the next tick or a pushed frame will catch up
  }
}

function showStatus(state) {
  status.dataset.state = state;
  status.querySelector(".live-label").textContent =
    state === "open" ? "Live" : state === "reconnecting" ? "Reconnecting…" : "Offline";
}

openSocket(table.dataset.socketUrl, {
  onFrame(frame) {
    if (frame.type === "lobby_table") upsert(frame.table);
  },
  onOpen(reopened) {
    if (reopened) refetch(); // frames sent while we were away are lost
  },
  onStatus: showStatus,
});
setInterval(refetch, Number(table.dataset.refreshSeconds) * 1000);
