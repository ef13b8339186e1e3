// The game screen's state (static/js/table.js): the page's boot data, the table and private
// frames as last applied, and what follows from them (the server's clock, the entry and
// hand on screen, whether the player can play now). Shared by the screen's modules.

export const boot = JSON.parse(document.getElementById("table-boot").textContent);
export const $ = (testid) => document.querySelector(`[data-testid="${testid}"]`);

export const state = {
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

export function syncClock(serverTime) {
  if (serverTime) state.offsetMs = Date.parse(serverTime) - Date.now();
}

export function serverNow() {
  return Date.now() + state.offsetMs;
}

export function currentEntry() {
  const hand = state.table.hand;
  const priv = state.private;
  return hand && priv && priv.hand_id === hand.id ? priv.entry : null;
}

/** The hand and entry on screen: the running one, or the last result while waiting. */
export function shown() {
  if (state.table.hand) return { hand: state.table.hand, entry: currentEntry(), last: false };
  if (state.lastResult) return { ...state.lastResult, last: true };
  return { hand: null, entry: null, last: false };
}

export function canPlay() {
  const entry = currentEntry();
  return state.table.phase === "change" && state.table.hand?.status === "change" && entry && !entry.result;
}

export function displayedHold() {
  return state.hold ?? [false, false, false, false, false];
}

export function freeStock(type) {
  const powerups = state.private?.powerups;
  if (!powerups) return 0;
  return type === "buy_draw" ? powerups.free_draws : powerups.free_redeals;
}
