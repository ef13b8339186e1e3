// The tournament page (templates/tables/tournament.html): the countdown to the start or to
// the end of the running phase, and the live standing between hands, re-read from
// state.json every few seconds (the standings change once a hand). A change of state
// (started, finished, cancelled) reloads the page, whose forms follow the state.
import { fmt, formatMinor, formatWhen, gettext } from "./common.js";

const root = document.querySelector("[data-testid=tournament]");
const chips = () => gettext("chips");

function field(name) {
  return root.querySelector(`[data-field=${name}]`);
}

function setText(name, text) {
  const node = field(name);
  if (node) node.textContent = text;
}

function countdown(state) {
  const node = field("countdown");
  const now = Date.now();
  let target = null;
  let label = "";
  if (state.state === "scheduled" || state.state === "registering") {
    target = Date.parse(state.starts_at);
    label = gettext("starts in %(seconds)s s");
  } else if (state.state === "running" && state.phase_deadline) {
    target = Date.parse(state.phase_deadline);
    label = state.phase === "change" ? gettext("hand ends in %(seconds)s s") : gettext("next hand in %(seconds)s s");
  }
  if (target === null) {
    node.textContent = "";
    return;
  }
  const seconds = Math.max(0, Math.ceil((target - now) / 1000));
  node.textContent = fmt(label, { seconds });
}

function render(state) {
  setText("entries", String(state.entries));
  setText("players_left", String(state.players_left));
  setText("prize_pool", formatMinor(state.prize_pool_minor, state.currency));
  setText("paid_places", String(state.paid_places));
  setText("hands_dealt", String(state.hands_dealt));
  setText("level", String(state.level));
  setText("ante", formatMinor(state.ante_minor, chips()));
  const rows = field("standings");
  if (rows && state.state === "running" && state.standings.length) {
    rows.replaceChildren(
      ...state.standings.map((row) => {
        const tr = document.createElement("tr");
        tr.dataset.testid = "standing-row";
        for (const [text, numeric] of [
          [String(row.rank), true],
          [row.player, false],
          [formatMinor(row.chips_minor, chips()), true],
        ]) {
          const td = document.createElement("td");
          if (numeric) td.className = "num";
          td.textContent = text;
          tr.append(td);
        }
        return tr;
      }),
    );
  }
  const me = state.me;
  const rank = root.querySelector("[data-testid=my-rank]");
  const mine = root.querySelector("[data-testid=my-chips]");
  if (me && rank && me.rank) rank.textContent = String(me.rank);
  if (me && mine) mine.textContent = formatMinor(me.chips_minor, chips());
}

let current = root.querySelector("[data-testid=tournament-state]").dataset.state;
let latest = null;

async function refresh() {
  try {
    const answer = await fetch(root.dataset.stateUrl, { headers: { Accept: "application/json" } });
    if (!answer.ok) return;
    latest = await answer.json();
    if (latest.state !== current) {
      window.location.reload();
      return;
    }
    render(latest);
  } catch {
    // The next refresh tries again.
  }
}

for (const node of document.querySelectorAll("[data-when]")) node.textContent = formatWhen(node.dataset.when);
const deadline = field("countdown").dataset.deadline;
latest = {
  state: current,
  starts_at: field("countdown").dataset.startsAt,
  phase_deadline: deadline || null,
  phase: null,
};
countdown(latest);
setInterval(() => countdown(latest), 500);
setInterval(refresh, Number(root.dataset.refreshSeconds || 2) * 1000);
refresh();
