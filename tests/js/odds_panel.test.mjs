// The probability panel turns on (seed 000 §3, Glossary "Probabilities") once the player
// holds at least one card or uses a tip: static/js/odds.js oddsActive.
import assert from "node:assert/strict";
import { test } from "node:test";
import { oddsActive } from "../../static/js/odds.js";

test("no odds from the deal, before any card is held or a tip is used", () => {
  assert.equal(oddsActive(null, false), false);
  assert.equal(oddsActive([false, false, false, false, false], false), false);
});

test("holding one card or more turns the odds on", () => {
  assert.equal(oddsActive([false, false, true, false, false], false), true);
  assert.equal(oddsActive([true, true, true, true, true], false), true);
});

test("a tip turns the odds on, even one that changes all five", () => {
  assert.equal(oddsActive([false, false, false, false, false], true), true);
  assert.equal(oddsActive(null, true), true);
});
