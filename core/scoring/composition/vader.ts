/**
 * The rule constants and the public item types of text-score composition (decisions.md "Text
 * scores that mean what they say"; docs/text-scores.md).
 *
 * Constants are VADER's (Hutto & Gilbert 2014, vaderSentiment.py / npm vader-sentiment 1.1.3):
 * N_SCALAR -0.74, B_INCR 0.293, B_DECR -0.293, C_INCR 0.733, 0.292 per "!" (at most 4), and the
 * contrast weights 0.5 before / 1.5 after "but". VADER adds B_INCR, C_INCR and the "!" amount to
 * a valence on its -4..4 scale; here the values live on each factor's own scale and most words
 * are near neutral, so the increments act on the distance from neutral, relative to a typical
 * rated word: the mean absolute valence of the VADER lexicon, 1.544 (7,517 entries). A booster
 * thus scales that distance by 1 + 0.293 / 1.544 = 1.19, and a neutral word stays neutral
 * (as in VADER, where a word without valence gets no increment).
 */
export const VADER = {
  N_SCALAR: -0.74,
  B_INCR: 0.293,
  B_DECR: -0.293,
  C_INCR: 0.733,
  /** Per exclamation mark, at most EXCL_MAX of them. */
  EXCL_INCR: 0.292,
  EXCL_MAX: 4,
  BUT_BEFORE: 0.5,
  BUT_AFTER: 1.5,
  /** Mean |rating| over the 7,517 entries of vader_lexicon.txt (-4..4 scale). */
  MEAN_ABS_VALENCE: 1.544,
  /** VADER looks at most three words back for a booster. */
  BOOSTER_WINDOW: 3,
} as const;

/** Relative factors on the distance from neutral (see the header). */
export const FACTORS = {
  booster: 1 + VADER.B_INCR / VADER.MEAN_ABS_VALENCE,
  dampener: 1 + VADER.B_DECR / VADER.MEAN_ABS_VALENCE,
  caps: 1 + VADER.C_INCR / VADER.MEAN_ABS_VALENCE,
  exclamation: VADER.EXCL_INCR / VADER.MEAN_ABS_VALENCE,
  /** Bipolar scales: flip and damp. */
  negatedBipolar: VADER.N_SCALAR,
  /** Unipolar scales (a dimension's cosine): damp by the same 74%. */
  negatedUnipolar: 1 + VADER.N_SCALAR,
  /** VADER's damping of a booster two and three words away. */
  boosterDistance: [1, 1, 0.95, 0.9],
} as const;

/** Negators count up to this many scored tokens (decisions.md: "up to the next clause boundary or three content tokens"). */
export const NEGATION_SCOPE = 3;

export type CompositionMode = 'rules' | 'mean';
