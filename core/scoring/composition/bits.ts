/**
 * The bit sets the composition passes between its steps: a key's list classes (C_*), a form's
 * case flags (F_*), what a text's tokens hold (S_*), what a scan saw (SEEN_*) and a token's role
 * in the rules (R_*). One module so the compiler, the scan and the rules read the same bits.
 */

// List classes of a key (CompiledComposition.classes).
export const C_NEG = 1;
export const C_OPENER_NEEDED = 2;
export const C_CONTRAST = 4;
export const C_BOOSTER = 8;
export const C_POLAR = 16;
export const C_PAIR_HEAD = 32;
/** The second token of a two-token phrase: a head is looked up with its next token only then. Not a rule's class (not in a text's summary). */
export const C_PAIR_TAIL = 64;
/** A token a backward negation scope stops at (CompositionData.scopeBarriers). Not a rule's class either. */
export const C_SCOPE_BARRIER = 128;
/** The classes a rule acts on (applyRules visits only these tokens after its first pass). */
export const C_SPECIAL = C_NEG | C_CONTRAST | C_BOOSTER | C_PAIR_HEAD;

// Case flags of a form.
export const F_CASED = 1;
export const F_ALL_CAPS = 2;
/** In the scratch flags only (not a property of the form's case): the token is a stop word. */
export const F_STOP = 4;

// What a text's tokens hold (the | of their FormInfo.summary): the union of their C_* classes,
// and whether a cased token is all caps and whether one is not (both: all-caps emphasis applies).
export const S_CLASSES = 0xff;
export const S_ALL_CAPS = 0x100;
export const S_NOT_ALL_CAPS = 0x200;
// And the SEEN_* bits of the tokens' strings (seenInText reads the gaps).
export const S_SEEN_SHIFT = 10;
export const S_SEEN_MASK = 0xf;

/**
 * What seenIn saw in a text: "!", an emoticon mark, a unit from which an Extended_Pictographic
 * code point can start (all are at or above U+00A9) and so perhaps "！". A superset: a bit may be
 * set where the rule it guards finds nothing.
 */
export const SEEN_BANG = 1;
export const SEEN_MARK = 2;
export const SEEN_EMOJI = 4;
/** A unit at or above U+00A9: perhaps "！" (seenInText looks). */
export const SEEN_BANG_WIDE = 8;

// Roles of a token in applyRules: a negator (that needs an opener), the contrast word of its
// sentence, cancelled by "not only".
export const R_NEGATOR = 1;
export const R_NEEDS_OPENER = 2;
export const R_CONTRAST = 4;
export const R_CANCELLED = 8;
