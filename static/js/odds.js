// Exact odds for any hold from the probability panel (tables/engine/odds.py Panel.as_dict),
// computed in the browser so the panel follows every click without a round-trip.

/** Hold mask: bit c set when column c is held (five booleans -> 0..31). */
export function holdMask(hold) {
  return hold.reduce((bits, held, column) => bits | (held ? 1 << column : 0), 0);
}

/**
 * Probabilities of each final category (index = category value) for a hold, with one draw
 * and with the best of `draws` independent draws: counts / 9^k for one draw, and
 * P(best <= x) = P(one <= x)^n. `improve` is the chance to end above the dealt category.
 */
export function holdOdds(panel, hold, draws) {
  const mask = holdMask(hold);
  const counts = panel.counts[mask];
  const denominator = panel.denominators[mask];
  const one = counts.map((count) => count / denominator);
  let cumulative = 0;
  let below = 0;
  const best = counts.map((count) => {
    cumulative += count;
    const atMost = (cumulative / denominator) ** draws;
    const p = atMost - below;
    below = atMost;
    return p;
  });
  const improveOne = panel.improve_counts[mask] / denominator;
  return { one, best, improveOne, improveBest: 1 - (1 - improveOne) ** draws };
}

/**
 * Whether the panel shows odds yet. Seed 000 §3 ("The probability evaluation gets activated
 * every time the player selects to hold one or more cards") and Glossary, Probabilities
 * ("calculated after selecting at least one card to hold or following the activation of
 * one of the TIP buttons"): before that the panel shows no percentages. `hold`: five
 * booleans or null (nothing chosen yet); `tipUsed`: a tip was used in this hand.
 */
export function oddsActive(hold, tipUsed) {
  return Boolean(tipUsed) || (Array.isArray(hold) && hold.some(Boolean));
}
