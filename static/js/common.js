// Helpers shared by the lobby and the game screen (ES module: nothing leaks to window).

const MINOR_DIGITS = 2;
const RECONNECT_BASE_MS = 500;
const RECONNECT_MAX_MS = 15000;
const TOAST_MS = 5000;

// Translations: Django's JavaScript catalog (/jsi18n/, loaded by base.html before any module)
// defines gettext, ngettext, pgettext and interpolate on window; without it, English.
const catalog = window;
export const gettext = (text) => (catalog.gettext ? catalog.gettext(text) : text);
export const ngettext = (one, many, n) => (catalog.ngettext ? catalog.ngettext(one, many, n) : n === 1 ? one : many);
export const pgettext = (context, text) => (catalog.pgettext ? catalog.pgettext(context, text) : text);
/** fmt("Hand #%(n)s", {n: 3}): a translated text with named values filled in. */
export function fmt(text, values) {
  return text.replace(/%\(([a-z_]+)\)s/g, (_, name) => String(values[name]));
}
/** The page's language ("en", "it"), from <html lang>. */
export const LANGUAGE = (document.documentElement.lang || "en").split("-")[0];

/** A place as the page's language writes it: 1 -> "1st" in English, "1º" in Italian. */
export function ordinal(n) {
  if (LANGUAGE === "it") return `${n}º`;
  const tail = n % 100 >= 11 && n % 100 <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" })[n % 10] ?? "th";
  return `${n}${tail}`;
}

/** An ISO 8601 time for people, in the page's language and the browser's time zone:
 * "2026-11-27T06:17:02.326+00:00" -> "27/11/2026, 07:17" in Italian at Rome. "" stays "". */
export function formatWhen(iso) {
  if (!iso) return "";
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return iso;
  return when.toLocaleString(LANGUAGE, { dateStyle: "short", timeStyle: "short" });
}

// How each language writes an amount, as wallet.money.format_minor does on the server.
const MONEY_STYLE = {
  en: { thousands: ",", decimal: ".", symbols: {} },
  it: { thousands: ".", decimal: ",", symbols: { EUR: "€" } },
};

/** Minor units for people, like wallet.money.format_minor: 123456, "EUR" -> "1,234.56 EUR"
 * in English, "1.234,56 €" in Italian. */
export function formatMinor(amountMinor, currency = "") {
  if (amountMinor === null || amountMinor === undefined) return "—";
  const style = MONEY_STYLE[LANGUAGE] ?? MONEY_STYLE.en;
  const sign = amountMinor < 0 ? "-" : "";
  const abs = Math.abs(amountMinor);
  const scale = 10 ** MINOR_DIGITS;
  const whole = String(Math.floor(abs / scale)).replace(/\B(?=(\d{3})+(?!\d))/g, style.thousands);
  const cents = String(abs % scale).padStart(MINOR_DIGITS, "0");
  // A tournament's chips (currency T<id>, wallet.models.chip_currency) read as "chips".
  const label = /^T\d+$/.test(currency) ? gettext("chips") : (style.symbols[currency] ?? currency);
  return `${sign}${whole}${style.decimal}${cents} ${label}`.trim();
}

/** A decimal number as the page's language writes it: "12.5" -> "12,5" in Italian. */
export function localDecimal(text) {
  return String(text).replace(".", (MONEY_STYLE[LANGUAGE] ?? MONEY_STYLE.en).decimal);
}

// What a refusal says in the page's language, by its stable code (the server's message is
// English; wallet/errors.py has the same sentences for the pages).
const REFUSALS = {
  insufficient_funds: () => gettext("Your balance is too low for this."),
  deposit_limit: () => gettext("This deposit would pass your deposit limit."),
  loss_limit: () => gettext("This would take your losses past your loss limit."),
  session_limit: () => gettext("You reached your session time limit: take a break before playing again."),
  self_excluded: () => gettext("You excluded yourself from playing."),
  time_out: () => gettext("You are on a time-out from playing."),
  suspended: () => gettext("This account is suspended."),
  table_not_found: () => gettext("No such table."),
  table_closed: () => gettext("This table is closed."),
  not_seated: () => gettext("You have no seat at this table."),
  not_in_hand: () => gettext("You are not in this hand."),
  phase_closed: () => gettext("The change phase is over."),
  turn_over: () => gettext("Your time to act is over."),
  redeal_closed: () => gettext("Redeals are closed for this hand."),
  limit_reached: () => gettext("No more can be bought in this hand."),
  invalid_hold: () => gettext("Choose the cards to hold, one per column."),
  no_free_item: () => gettext("You have no free draw or redeal to use."),
  promotion_unavailable: () => gettext("Free items cannot be paid out now; yours stays in stock."),
};

/** An error frame ({code, message}) for people: the server writes ``message`` in the
 * page's language (the language cookie: docs/i18n.md); the code's sentence when it has none. */
export function refusalText(frame) {
  if (frame.message || !REFUSALS[frame.code]) return frame.message;
  return REFUSALS[frame.code]();
}

/** Basis points as a percentage: 500 -> "5%". */
export function formatBps(bps) {
  return `${localDecimal(Number((bps / 100).toFixed(2)))}%`;
}

/**
 * Show a short message in the toast area (errors stay a little longer). Toasts with the same
 * key (by default the message) coalesce: the one on screen shows a count and stays longer
 * instead of another piling up over the game.
 */
export function toast(message, kind = "info", { key = message, link = null } = {}) {
  const area = document.querySelector(".toasts");
  if (!area) return;
  const duration = kind === "error" ? TOAST_MS * 1.5 : TOAST_MS;
  const existing = [...area.children].find((item) => item.dataset.key === key);
  if (existing) {
    const count = Number(existing.dataset.count) + 1;
    existing.dataset.count = String(count);
    existing.textContent = `${message} (×${count})`;
    if (link) existing.append(" ", el("a", { href: link.href, "data-testid": "toast-link" }, link.text));
    clearTimeout(Number(existing.dataset.timer));
    existing.dataset.timer = String(setTimeout(() => existing.remove(), duration));
    return;
  }
  const item = document.createElement("div");
  item.className = `toast toast-${kind}`;
  item.setAttribute("role", kind === "error" ? "alert" : "status");
  item.dataset.key = key;
  item.dataset.count = "1";
  item.textContent = message;
  if (link) item.append(" ", el("a", { href: link.href, "data-testid": "toast-link" }, link.text));
  area.append(item);
  item.dataset.timer = String(setTimeout(() => item.remove(), duration));
}

/** How long a kicked player reads why before the lobby opens (milliseconds). */
export const KICKED_REDIRECT_MS = 4000;

/**
 * The server took the player away from the tables (tables/realtime/frames.py, KickedFrame;
 * close code 4403: staff suspended him, or he started a break): say why once, in
 * ``message`` (an element) and a toast, then go to ``lobby`` (a URL) after ``delayMs``.
 * ``state.kicked`` remembers that it was said (the frame and the close both call this).
 */
export function showKicked(reason, { state, message, lobby, delayMs = KICKED_REDIRECT_MS }) {
  if (state.kicked) return;
  state.kicked = true;
  const text = reason ?? gettext("You were removed from the table.");
  if (message) message.textContent = text;
  toast(text, "error", { key: "kicked" });
  setTimeout(() => window.location.assign(lobby), delayMs);
}

/** Build an element: el("span", {class: "x", dataset: {a: 1}}, child, "text"). */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "dataset") Object.assign(node.dataset, value);
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

/** A game screen's table socket (WiderPoker and Hold'em alike): reconnects and re-reads the
 * snapshot with ``resync`` after a reconnect, shows the connection's state in [data-testid=connection],
 * and ends the page on the server's close codes (docs/protocol.md): 4401 -> the log-in page,
 * 4403 (removed from play) -> ``onKicked``, 4404 (no such table) -> the lobby. */
export function openTableSocket(path, { onFrame, resync, onKicked, urls }) {
  const status = document.querySelector("[data-testid=connection]");
  return openSocket(path, {
    onFrame,
    onOpen(reopened) {
      if (reopened) resync(); // the server also sends its snapshot on connect
    },
    onStatus(state) {
      status.hidden = state === "open";
      status.textContent = state === "closed" ? gettext("Disconnected") : gettext("Reconnecting…");
    },
    onClose(code) {
      if (code === 4401) {
        window.location.assign(`${urls.login}?next=${encodeURIComponent(window.location.pathname)}`);
        return false;
      }
      if (code === 4403) {
        onKicked(); // removed from play (suspension or a break): no reconnecting
        return false;
      }
      if (code === 4404) {
        toast(gettext("This table does not exist any more."), "error");
        window.location.assign(urls.lobby);
        return false;
      }
      return true;
    },
  });
}

/**
 * A WebSocket that reconnects with exponential backoff and jitter.
 *
 * handlers.onFrame(frame)    every JSON frame received
 * handlers.onOpen(reopened)  the socket opened; reopened is true after a reconnection
 * handlers.onStatus(status)  "open" | "reconnecting" | "closed"
 * handlers.onClose(code)     return false to stop reconnecting (e.g. 4401 not logged in)
 */
export function openSocket(path, handlers) {
  let socket = null;
  let attempt = 0;
  let everOpened = false;
  let stopped = false;

  function url() {
    const scheme = window.location.protocol === "https:" ? "wss" : "ws";
    return `${scheme}://${window.location.host}${path}`;
  }

  function connect() {
    socket = new WebSocket(url());
    socket.addEventListener("open", () => {
      attempt = 0;
      handlers.onStatus?.("open");
      handlers.onOpen?.(everOpened);
      everOpened = true;
    });
    socket.addEventListener("message", (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return; // the server only sends JSON; ignore anything else
      }
      handlers.onFrame(frame);
    });
    socket.addEventListener("close", (event) => {
      socket = null;
      if (stopped) return;
      if (handlers.onClose?.(event.code) === false) {
        stopped = true;
        handlers.onStatus?.("closed");
        return;
      }
      scheduleReconnect();
    });
  }

  function scheduleReconnect() {
    handlers.onStatus?.("reconnecting");
    const ceiling = Math.min(RECONNECT_MAX_MS, RECONNECT_BASE_MS * 2 ** attempt);
    const delay = ceiling * (0.5 + Math.random() / 2); // jitter: no thundering herd
    attempt += 1;
    setTimeout(connect, delay);
  }

  connect();
  return {
    isOpen: () => socket !== null && socket.readyState === WebSocket.OPEN,
    /** Send a frame; false when the socket is not open (the caller falls back). */
    send(frame) {
      if (socket === null || socket.readyState !== WebSocket.OPEN) return false;
      socket.send(JSON.stringify(frame));
      return true;
    },
    stop() {
      stopped = true;
      socket?.close();
    },
  };
}

/** GET a JSON document with the session cookie; throws on an HTTP error. */
export async function fetchJson(url) {
  const response = await fetch(url, {
    credentials: "same-origin",
    headers: { Accept: "application/json" },
  });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}
