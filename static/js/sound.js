// Game sounds (issue #11): off by default; the screen's switch turns them on and the choice
// is remembered in localStorage. The sounds are synthesised with the Web Audio API (no
// audio files): a click as each reel stops (deal and changes) and a short arpeggio for a
// win. Nothing is ever played, and no AudioContext is created, before the player turns
// sound on; after a reload with sound on, the context starts at his first click or key
// (browsers refuse audio before a gesture anyway).

import { gettext } from "./common.js";

const STORAGE_KEY = "widerpoker.sound";
const NOTES_HZ = { deal: 660, change: 520 };
const WIN_ARPEGGIO_HZ = [523.25, 659.25, 783.99, 1046.5]; // C5 E5 G5 C6

const button = document.querySelector("[data-testid=sound-switch]");
let context = null;

/** Whether the player turned sound on (on this browser). */
export function soundOn() {
  try {
    return window.localStorage.getItem(STORAGE_KEY) === "on";
  } catch {
    return false; // storage blocked: sound stays off
  }
}

function remember(on) {
  try {
    window.localStorage.setItem(STORAGE_KEY, on ? "on" : "off");
  } catch {
    // storage blocked: the switch works for this page only
  }
}

/** The AudioContext, created on a gesture of a player who turned sound on. */
function audio() {
  if (!soundOn()) return null;
  if (context === null) {
    const Context = window.AudioContext ?? window.webkitAudioContext;
    if (!Context) return null;
    context = new Context();
  }
  if (context.state === "suspended") context.resume();
  return context;
}

/** One short enveloped tone: ``hz`` at ``startS`` (context seconds) for ``lengthS``. */
function tone(ctx, hz, startS, lengthS, { type = "triangle", peak = 0.18 } = {}) {
  const oscillator = ctx.createOscillator();
  const gain = ctx.createGain();
  oscillator.type = type;
  oscillator.frequency.setValueAtTime(hz, startS);
  gain.gain.setValueAtTime(0.0001, startS);
  gain.gain.exponentialRampToValueAtTime(peak, startS + 0.01);
  gain.gain.exponentialRampToValueAtTime(0.0001, startS + lengthS);
  oscillator.connect(gain).connect(ctx.destination);
  oscillator.start(startS);
  oscillator.stop(startS + lengthS + 0.02);
}

/**
 * Play ``kind`` ("deal", "change" or "win") if the player turned sound on; ``delayMs`` later
 * (a reel's stop). Returns whether anything was scheduled. The switch's ``data-last-sound``
 * names the last sound played (for the browser tests).
 */
export function play(kind, delayMs = 0) {
  const ctx = soundOn() ? (context ?? null) : null;
  if (ctx === null || ctx.state === "closed") return false;
  const start = ctx.currentTime + delayMs / 1000;
  if (kind === "win") {
    WIN_ARPEGGIO_HZ.forEach((hz, index) => tone(ctx, hz, start + index * 0.11, 0.32, { peak: 0.2 }));
  } else {
    tone(ctx, NOTES_HZ[kind] ?? 600, start, 0.07, { type: "square", peak: 0.06 });
  }
  if (button) button.dataset.lastSound = kind;
  return true;
}

function show() {
  if (!button) return;
  const on = soundOn();
  button.setAttribute("aria-pressed", String(on));
  button.title = on ? gettext("Sound is on: click to turn it off") : gettext("Sound is off: click to turn it on");
}

if (button) {
  button.addEventListener("click", () => {
    const on = !soundOn();
    remember(on);
    if (on) {
      audio(); // created inside the click: the browser lets it play
      play("change");
    } else if (context !== null) {
      context.close();
      context = null;
    }
    show();
  });
  show();
  // Sound left on from a previous visit: start the context at the player's first gesture.
  const wake = () => {
    if (soundOn()) audio();
  };
  window.addEventListener("pointerdown", wake, { once: true });
  window.addEventListener("keydown", wake, { once: true });
}

// Each reel that stops clicks (reels.js); the hand's result plays "win" (win.js).
document.addEventListener("reelspin", (event) => play(event.detail.kind, event.detail.stopsInMs));
document.addEventListener("handwon", () => play("win"));
