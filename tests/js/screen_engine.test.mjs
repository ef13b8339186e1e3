// The game screen's JavaScript against the engine (issue 21): static/js/odds.js computes the
// odds of any hold from the panel the server sends, static/js/cards.js names cards and hand
// categories. tests/tables/test_screen_js_against_engine.py writes what the engine says for
// random boards to the JSON file named by SCREEN_ENGINE_CASES and runs this file with node.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

// cards.js reads the page's language and catalog at load (common.js): a page in English.
globalThis.window = {};
globalThis.document = { documentElement: { lang: "en" } };
const { holdMask, holdOdds } = await import("../../static/js/odds.js");
const { CATEGORIES, cardName, isRed } = await import("../../static/js/cards.js");

const cases = JSON.parse(readFileSync(process.env.SCREEN_ENGINE_CASES, "utf8"));
const close = (actual, expected, what) =>
  assert.ok(Math.abs(actual - expected) <= 1e-12, `${what}: ${actual} != ${expected}`);

test("holdMask numbers every hold as the engine's hold_mask", () => {
  for (const [mask, code] of cases.masks.entries()) {
    assert.equal(holdMask([...code].map((c) => c === "H")), mask, code);
  }
});

test("holdOdds gives the engine's exact probabilities for every hold and 1 to 5 draws", () => {
  let compared = 0;
  for (const panelCase of cases.panels) {
    for (const [mask, code] of panelCase.panel.masks.entries()) {
      const hold = [...code].map((c) => c === "H");
      for (let draws = 1; draws <= 5; draws += 1) {
        const odds = holdOdds(panelCase.panel, hold, draws);
        const expected = panelCase.expected[mask][draws - 1];
        expected.best.forEach((p, category) => close(odds.best[category], p, `${code} x${draws} cat ${category}`));
        close(odds.improveBest, expected.improve, `${code} x${draws} improve`);
        if (draws === 1) {
          expected.best.forEach((p, category) => close(odds.one[category], p, `${code} one cat ${category}`));
          close(odds.improveOne, expected.improve, `${code} improve one`);
        }
        compared += 1;
      }
    }
  }
  assert.equal(compared, cases.panels.length * 32 * 5);
});

test("cardName and isRed name the engine's 52 cards", () => {
  const names = new Set();
  for (const card of cases.cards) {
    const name = cardName(card.code);
    assert.equal(name, card.name, card.code);
    assert.equal(isRed(card.code), card.red, card.code);
    names.add(name);
  }
  assert.equal(names.size, 52);
});

test("CATEGORIES are the engine's hand categories, by value", () => {
  assert.deepEqual(CATEGORIES, cases.categories);
});
