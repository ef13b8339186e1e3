// Golden test of static/js/holdem_sizes.js against the engine: the cases come from
// tests/tables/test_holdem_sizes_js.py (HOLDEM_SIZES_CASES: a JSON file of pot-limit
// states with the engine's legal actions and the frame's pot and bets).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { clampTo, potSizedTo, presetSizes } from "../../static/js/holdem_sizes.js";

const cases = JSON.parse(readFileSync(process.env.HOLDEM_SIZES_CASES, "utf8"));

test("there are cases", () => {
  assert.ok(cases.length >= 10);
});

test("the pot-sized raise is the engine's pot-limit maximum (capped by the stack)", () => {
  for (const c of cases) {
    const pot = potSizedTo({ totalPotMinor: c.total_pot_minor, bets: c.bets, callMinor: c.legal.call_minor }, 1);
    assert.equal(Math.min(pot, c.all_in_total), c.legal.max_to_minor, JSON.stringify(c));
  }
});

test("pre-set sizes are legal or null, and the slider clamps to the legal range", () => {
  for (const c of cases) {
    const sizes = presetSizes({ legal: c.legal, totalPotMinor: c.total_pot_minor, bets: c.bets });
    for (const size of [sizes.half, sizes.pot]) {
      if (size !== null) assert.ok(size >= c.legal.min_to_minor && size <= c.legal.max_to_minor);
    }
    assert.equal(sizes.max, c.legal.max_to_minor);
    assert.equal(clampTo(c.legal, 0), c.legal.min_to_minor);
    assert.equal(clampTo(c.legal, 10 ** 9), c.legal.max_to_minor);
  }
});
