// Bet sizes of the Hold'em screen (pure: no DOM), tested against the engine by
// tests/tables/test_holdem_sizes_js.py (node --test tests/js/holdem_sizes.test.mjs).

/**
 * The raise-to (or bet) total that adds ``fraction`` of the pot to a call: the largest bet on
 * the street plus ``fraction`` x (every chip in the pot and in front of the players + the
 * call). ``fraction`` 1 is the pot-sized raise, the pot-limit maximum (seed 003, Pot-Limit:
 * "pot + all bets on the table + the call"). Minor units, rounded down.
 *
 * totalPotMinor: the frame's ``hand.total_pot_minor`` (pots + the street's bets);
 * bets: every seat's ``bet_minor``; callMinor: ``legal.call_minor``.
 */
export function potSizedTo({ totalPotMinor, bets, callMinor }, fraction) {
  const top = Math.max(0, ...bets);
  return top + Math.floor((totalPotMinor + callMinor) * fraction);
}

/**
 * The pre-set sizes the screen offers: ``{half, pot, max}``, each a raise-to total in minor
 * units, or null when not legal now (outside ``legal.min_to_minor`` ..
 * ``legal.max_to_minor``, or no bet or raise allowed). At pot limit "pot" is the maximum.
 */
export function presetSizes({ legal, totalPotMinor, bets }) {
  if (!legal || legal.min_to_minor === null || legal.max_to_minor === null) return { half: null, pot: null, max: null };
  const inRange = (size) => (size >= legal.min_to_minor && size <= legal.max_to_minor ? size : null);
  const table = { totalPotMinor, bets, callMinor: legal.call_minor };
  return {
    half: inRange(potSizedTo(table, 0.5)),
    pot: inRange(potSizedTo(table, 1)),
    max: legal.max_to_minor,
  };
}

/** A typed or slid amount held to the legal range (null when no bet or raise is allowed). */
export function clampTo(legal, minor) {
  if (!legal || legal.min_to_minor === null || legal.max_to_minor === null) return null;
  if (!Number.isFinite(minor)) return legal.min_to_minor;
  return Math.min(legal.max_to_minor, Math.max(legal.min_to_minor, Math.round(minor)));
}
