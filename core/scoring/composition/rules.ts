/**
 * The rules over a text's tokens (applyRules), one function per rule: function words and
 * two-token phrases, boosters and dampeners, negation scopes, contrast, all-caps and "!".
 *
 * Event-driven: after one pass that sets every token's defaults, the rules visit only the
 * tokens of the lists (negators, boosters, contrast words, phrase heads) and the few tokens
 * after them; clause breaks are read from the gap before a token when asked (clauseAt). Only a
 * text with a contrast word or "!" has every gap read, since those rules act on whole
 * sentences. No closures in here: bundlers that keep function names (tsx, wrangler) pay a
 * defineProperty for each one per call.
 */
import {
  C_BOOSTER,
  C_CONTRAST,
  C_NEG,
  C_OPENER_NEEDED,
  C_PAIR_HEAD,
  C_PAIR_TAIL,
  C_SCOPE_BARRIER,
  C_POLAR,
  C_SPECIAL,
  F_ALL_CAPS,
  F_STOP,
  R_CANCELLED,
  R_CONTRAST,
  R_NEEDS_OPENER,
  R_NEGATOR,
  S_ALL_CAPS,
  S_CLASSES,
  S_NOT_ALL_CAPS,
  SEEN_BANG,
} from './bits';
import { pairEntry, type CompiledComposition, type FormInfo } from './compile';
import { addRule, NO_SYMBOLS, type ComposedItem, type RuleName } from './items';
import { clauseAt, readGaps, seenInText } from './scan';
import { findSymbols, weighSymbols } from './symbols';
import { FACTORS, NEGATION_SCOPE, VADER } from './vader';

/** composeForms' results per token (the shared scratch: valid until the next composition). */
export interface CompositionScratch {
  /** 0 scored, else not. */
  kind: Uint8Array;
  /** Product of the emphasis factors, and the number of negations (composeValue). */
  scale: Float64Array;
  negations: Uint8Array;
  /** Contrast weight. */
  weight: Float64Array;
}

/**
 * A token form that keeps what the composition needs of it (core/tokenizer's TokenForm), from
 * info = computeFormInfo(rules, form): the info, its cls and its flags | stopFlag(isStop).
 */
export interface ComposableForm {
  compositionInfo: unknown;
  compositionClasses: number;
  compositionFlags: number;
}

/**
 * Per-token working arrays, reused across calls (one composition at a time: the scorer is
 * synchronous). cls: list classes; flags: case flags (F_*); starts/ends: offsets; kind: 0
 * scored, 1 function word, 2 not scored; covered: part of an emoticon; role: R_* bits;
 * clauseBefore and sentenceOf: readGaps; scale and weight start at 1. The lists hold token
 * positions in text order: specials (a C_SPECIAL class), boosterAt (with boosterValue) and
 * negatorAt. The fields after them hold the call's text and the rules' counts, so the rules'
 * functions share one argument.
 */
export interface Scratch {
  /** Per token: its FormInfo (composeText; composeForms reads the forms'). */
  infos: FormInfo[];
  cls: Uint8Array;
  flags: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  kind: Uint8Array;
  covered: Uint8Array;
  role: Uint8Array;
  clauseBefore: Uint8Array;
  negations: Uint8Array;
  sentenceOf: Int32Array;
  scale: Float64Array;
  weight: Float64Array;
  specials: Int32Array;
  boosterAt: Int32Array;
  boosterValue: Float64Array;
  negatorAt: Int32Array;
  /** Open negation scopes: scored tokens each has left (applyNegation). */
  scopes: Int32Array;
  /** composeForms' answer (one object, reused). */
  result: { symbols: ComposedItem[]; scratch: CompositionScratch };
  /** Whether an emoticon covers a token (findSymbols). */
  coverage: { any: boolean };
  // The call (applyRules sets these before the rules run).
  text: string;
  n: number;
  forms: ArrayLike<ComposableForm> | null;
  /** The tokens' offsets: composeForms' own arrays, or starts/ends above (composeText). */
  at: Int32Array;
  to: Int32Array;
  rules: CompiledComposition;
  ruleSets: Array<RuleName[] | undefined> | null;
  /** Every gap was read (readGaps): clauseAt reads clauseBefore. */
  eager: boolean;
  /** How many specials, boosters, negators and contrast words the first passes found. */
  ns: number;
  nb: number;
  nn: number;
  contrasts: number;
}

let scratchCap = 0;
let scratchBuf: Scratch | null = null;
/** The shared scratch with room for n tokens; applyRules resets the arrays it uses (plain texts never touch them). */
export function scratch(n: number): Scratch {
  if (!scratchBuf || n + 1 > scratchCap) {
    scratchCap = Math.max(64, 2 * (n + 1));
    const u8 = () => new Uint8Array(scratchCap);
    scratchBuf = {
      infos: [],
      cls: u8(),
      flags: u8(),
      starts: new Int32Array(scratchCap),
      ends: new Int32Array(scratchCap),
      kind: u8(),
      covered: u8(),
      role: u8(),
      clauseBefore: u8(),
      negations: u8(),
      sentenceOf: new Int32Array(scratchCap),
      scale: new Float64Array(scratchCap),
      weight: new Float64Array(scratchCap),
      specials: new Int32Array(scratchCap),
      boosterAt: new Int32Array(scratchCap),
      boosterValue: new Float64Array(scratchCap),
      negatorAt: new Int32Array(scratchCap),
      scopes: new Int32Array(scratchCap),
      result: { symbols: NO_SYMBOLS, scratch: null! },
      coverage: { any: false },
      text: '',
      n: 0,
      forms: null,
      at: new Int32Array(0),
      to: new Int32Array(0),
      rules: null!,
      ruleSets: null,
      eager: false,
      ns: 0,
      nb: 0,
      nn: 0,
      contrasts: 0,
    };
    scratchBuf.result.scratch = scratchBuf;
  }
  return scratchBuf;
}

/** Puts token i's info into the scratch and adds it to the text's summary. */
export function addToken(sc: Scratch, i: number, f: FormInfo, isStop: boolean, summary: number): number {
  sc.infos[i] = f;
  sc.cls[i] = f.cls;
  sc.flags[i] = isStop ? f.flags | F_STOP : f.flags;
  return summary | f.summary;
}

/** Token i's FormInfo: from its form (composeForms) or from the scratch (composeText). */
const infoAt = (sc: Scratch, i: number): FormInfo =>
  sc.forms !== null ? (sc.forms[i].compositionInfo as FormInfo) : sc.infos[i];

/** Token i's rule list (created on first use); null when rule names are not wanted. */
function ruleListAt(ruleSets: Array<RuleName[] | undefined> | null, i: number): RuleName[] | null {
  return ruleSets ? (ruleSets[i] ??= []) : null;
}

/** Whether a clause or sentence break comes before token j (scan.ts clauseAt on this call). */
const breakBefore = (sc: Scratch, j: number): boolean => clauseAt(sc.text, sc.at, sc.to, sc.clauseBefore, sc.eager, j);

/**
 * The rules over the n tokens whose infos, classes and case flags (| F_STOP) are in `forms`
 * (composeForms) or else in sc (addToken: composeText), `summary` the | of their infos' summary,
 * and offsets in starts/ends: leaves kind, negations, scale (every emphasis factor) and weight
 * per token in sc, and returns the text's emoticon and emoji items with their contrast weight,
 * or null when no rule applies (plain text). ruleSets (null: not wanted) receives each token's
 * rule names.
 */
export function applyRules(
  text: string,
  n: number,
  summary: number,
  forms: ArrayLike<ComposableForm> | null,
  starts: Int32Array,
  ends: Int32Array,
  rules: CompiledComposition,
  sc: Scratch,
  ruleSets: Array<RuleName[] | undefined> | null,
): ComposedItem[] | null {
  const seen = seenInText(rules, text, n, starts, ends, summary);
  const symbols = findSymbols(text, n, starts, ends, rules, seen, sc.covered, sc.coverage);

  // All-caps emphasis only when the text mixes cases (VADER's allcap_differential).
  const anyClass = summary & S_CLASSES;
  const capsDiff = (summary & (S_ALL_CAPS | S_NOT_ALL_CAPS)) === (S_ALL_CAPS | S_NOT_ALL_CAPS);
  // Plain text, the common case: no word of the lists, no emoticon or emoji, no "!" and no all-caps
  // emphasis. Every rule below would leave each item at scale 1, weight 1 and no negation.
  const bang = (seen & SEEN_BANG) !== 0;
  if (symbols.length === 0 && !bang && anyClass === 0 && !capsDiff) return null;

  sc.text = text;
  sc.n = n;
  sc.forms = forms;
  sc.at = starts;
  sc.to = ends;
  sc.rules = rules;
  sc.ruleSets = ruleSets;
  setDefaults(sc);
  // Contrast and "!" act on sentences: then every gap is read (clause and sentence breaks before
  // each token, "!" count of each sentence). Otherwise clauseAt reads a gap when a rule asks.
  sc.eager = bang || (anyClass & C_CONTRAST) !== 0;
  const bangs = sc.eager ? readGaps(text, n, starts, ends, sc.clauseBefore, sc.sentenceOf) : null;
  markFunctionWords(sc);
  applyBoosters(sc);
  applyNegation(sc);
  if (sc.contrasts > 0) applyContrast(sc);
  if (capsDiff || bang) applyEmphasis(sc, capsDiff, bang ? bangs : null);
  const out = weighSymbols(symbols, sc.contrasts, n, starts, sc.weight, sc.sentenceOf);
  // Hold no reference to the call's text or forms past it.
  sc.text = '';
  sc.forms = null;
  sc.ruleSets = null;
  return out;
}

/**
 * Defaults: a stop word is not scored unless it is polar; emoticon characters are not scored.
 * The tokens of the lists go to `specials`.
 */
function setDefaults(sc: Scratch): void {
  const { n, forms, cls, flags, kind, role, negations, scale, weight, specials, covered } = sc;
  let ns = 0;
  for (let i = 0; i < n; i++) {
    let c: number;
    let fl: number;
    if (forms !== null) {
      const f = forms[i];
      cls[i] = c = f.compositionClasses;
      flags[i] = fl = f.compositionFlags;
    } else {
      c = cls[i];
      fl = flags[i];
    }
    kind[i] = fl & F_STOP && !(c & C_POLAR) ? 2 : 0;
    role[i] = 0;
    negations[i] = 0;
    scale[i] = 1;
    weight[i] = 1;
    if (c & C_SPECIAL) specials[ns++] = i;
  }
  if (sc.coverage.any) for (let i = 0; i < n; i++) if (covered[i]) kind[i] = 2;
  sc.ns = ns;
}

/** Function words and two-token phrases ("not only", "kind of"): negators, boosters, contrast words. */
function markFunctionWords(sc: Scratch): void {
  const { n, cls, kind, role, covered, specials, sentenceOf, clauseBefore, boosterAt, boosterValue, negatorAt } = sc;
  const anyCovered = sc.coverage.any;
  let nb = 0;
  let nn = 0;
  let contrasts = 0;
  let notOnlyInSentence = -1;
  let skip = -1;
  for (let s = 0; s < sc.ns; s++) {
    const i = specials[s];
    if (i <= skip || (anyCovered && covered[i])) continue;
    const c = cls[i];
    const head = c & C_PAIR_HEAD && i + 1 < n ? infoAt(sc, i) : null;
    // A head is looked up with its next token only when that token can end a phrase (C_PAIR_TAIL)
    // or the head holds a space of its own.
    if (head !== null && (cls[i + 1] & C_PAIR_TAIL || head.spaced) && !breakBefore(sc, i + 1)) {
      const pair = pairEntry(sc.rules, head, infoAt(sc, i + 1));
      if (pair !== null && pair.notNegating) {
        kind[i] = kind[i + 1] = 1;
        role[i] |= R_CANCELLED;
        role[i + 1] |= R_CANCELLED;
        if (sc.eager) notOnlyInSentence = sentenceOf[i];
        skip = i + 1;
        continue;
      }
      if (pair !== null && pair.booster !== undefined) {
        kind[i] = kind[i + 1] = 1;
        boosterAt[nb] = i + 1;
        boosterValue[nb++] = pair.booster;
        skip = i + 1;
        continue;
      }
    }
    if (c & C_NEG) {
      kind[i] = 1;
      role[i] |= c & C_OPENER_NEEDED ? R_NEGATOR | R_NEEDS_OPENER : R_NEGATOR;
      negatorAt[nn++] = i;
    } else if (c & C_CONTRAST) {
      kind[i] = 1;
      if (notOnlyInSentence !== sentenceOf[i]) {
        role[i] |= R_CONTRAST;
        contrasts++;
      } else role[i] |= R_CANCELLED;
      clauseBefore[i] = 1;
      if (i + 1 < n) clauseBefore[i + 1] = 1;
    } else if (c & C_BOOSTER) {
      kind[i] = 1;
      boosterAt[nb] = i;
      boosterValue[nb++] = infoAt(sc, i).booster;
    }
  }
  sc.nb = nb;
  sc.nn = nn;
  sc.contrasts = contrasts;
}

/** Boosters and dampeners scale the next scored token in their clause; one with none after it ("Das war super.") is a word like any other. */
function applyBoosters(sc: Scratch): void {
  const { n, cls, flags, kind, scale, boosterAt, boosterValue, ruleSets } = sc;
  for (let b = 0; b < sc.nb; b++) {
    const i = boosterAt[b];
    const value = boosterValue[b];
    if (value === 0) continue;
    let target = -1;
    for (let j = i + 1; j < n && j <= i + VADER.BOOSTER_WINDOW; j++) {
      if (breakBefore(sc, j)) break;
      if (kind[j] === 0) {
        target = j;
        break;
      }
    }
    if (target < 0) {
      if (!(flags[i] & F_STOP) || cls[i] & C_POLAR) kind[i] = 0;
      continue;
    }
    const decay = FACTORS.boosterDistance[Math.min(target - i, 3)];
    if (value > 0) {
      scale[target] *= 1 + (FACTORS.booster - 1) * decay;
      addRule(ruleListAt(ruleSets, target), 'intensified');
    } else {
      scale[target] *= 1 - (1 - FACTORS.dampener) * decay;
      addRule(ruleListAt(ruleSets, target), 'downtoned');
    }
  }
}

/**
 * Negation scopes: each active forward scope covers its next NEGATION_SCOPE scored tokens
 * (scopes[0 .. open - 1]: how many each has left). The sweep jumps from negator to negator while
 * no scope is open (no token between them can change then).
 */
function applyNegation(sc: Scratch): void {
  const { n, flags, kind, role, negations, negatorAt, scopes, ruleSets, rules } = sc;
  const nn = sc.nn;
  let open = 0;
  for (let i = 0, q = 0; i < n; i++) {
    if (open === 0) {
      while (q < nn && negatorAt[q] < i) q++;
      if (q === nn) break;
      i = negatorAt[q];
    }
    if (open > 0 && breakBefore(sc, i)) open = 0;
    const r = role[i];
    if (r & R_NEGATOR && !(r & R_CANCELLED)) {
      const inScope =
        open > 0 || (rules.direction === 'backward' && i > 0 && role[i - 1] & R_NEGATOR && !breakBefore(sc, i));
      if (r & R_NEEDS_OPENER && !inScope) {
        // "plus" without "ne": not a negation; a content word ("personne") is scored as usual.
        if (!(flags[i] & F_STOP)) kind[i] = 0;
        continue;
      }
      if (inScope && rules.concord) {
        // Negative concord: "ne ... jamais rien", "ありませ|ん" are one negation.
        scopes.fill(NEGATION_SCOPE, 0, open);
        continue;
      }
      if (rules.direction === 'backward') {
        negateBackward(sc, i);
        continue;
      }
      let hasTarget = false;
      for (let j = i + 1; j < n && !breakBefore(sc, j); j++) {
        if (kind[j] === 0) {
          hasTarget = true;
          break;
        }
      }
      // German: a negator with nothing after it in its clause looks back ("Ich mag es nicht.").
      if (!hasTarget && rules.direction === 'forward-else-backward') negateBackward(sc, i);
      else scopes[open++] = NEGATION_SCOPE; // a second negator inside a scope (en, de) negates again
      continue;
    }
    if (kind[i] === 0 && open > 0) {
      negations[i] = open;
      addRule(ruleListAt(ruleSets, i), 'negated');
      // Each scope has one scored token less left; spent scopes end.
      let kept = 0;
      for (let k = 0; k < open; k++) if (scopes[k] > 1) scopes[kept++] = scopes[k] - 1;
      open = kept;
    }
  }
}

/**
 * The scored tokens before negator i in its clause, at most NEGATION_SCOPE of them and none
 * before a scope barrier (ja を), take one negation more.
 */
function negateBackward(sc: Scratch, i: number): void {
  const { cls, kind, negations, ruleSets } = sc;
  for (let j = i - 1, left = NEGATION_SCOPE; j >= 0 && left > 0; j--) {
    if (cls[j] & C_SCOPE_BARRIER) break;
    if (kind[j] === 0) {
      negations[j]++;
      addRule(ruleListAt(ruleSets, j), 'negated');
      left--;
    }
    if (breakBefore(sc, j)) break;
  }
}

/** Contrast: the first contrast word of a sentence weights the sentence before it 0.5 and after it 1.5. */
function applyContrast(sc: Scratch): void {
  const { n, kind, role, weight, sentenceOf, ruleSets } = sc;
  let si = 0;
  while (si < n) {
    let end = si;
    while (end < n && sentenceOf[end] === sentenceOf[si]) end++;
    let c = -1;
    for (let j = si; j < end; j++) {
      if (role[j] & R_CONTRAST) {
        c = j;
        break;
      }
    }
    if (c >= 0) {
      for (let j = si; j < end; j++) {
        if (kind[j] !== 0) continue;
        weight[j] = j < c ? VADER.BUT_BEFORE : VADER.BUT_AFTER;
        addRule(ruleListAt(ruleSets, j), 'contrast');
      }
    }
    si = end;
  }
}

/** All-caps emphasis and "!" (bangs: the "!" count per sentence, null when the text has no "!"). */
function applyEmphasis(sc: Scratch, capsDiff: boolean, bangs: number[] | null): void {
  const { n, kind, flags, scale, sentenceOf, ruleSets } = sc;
  for (let i = 0; i < n; i++) {
    if (kind[i] !== 0) continue;
    let s = scale[i];
    if (capsDiff && flags[i] & F_ALL_CAPS) {
      s *= FACTORS.caps;
      addRule(ruleListAt(ruleSets, i), 'caps');
    }
    const b = bangs !== null ? Math.min(bangs[sentenceOf[i]] ?? 0, VADER.EXCL_MAX) : 0;
    if (b > 0) {
      s *= 1 + b * FACTORS.exclamation;
      addRule(ruleListAt(ruleSets, i), 'exclamation');
    }
    scale[i] = s;
  }
}
