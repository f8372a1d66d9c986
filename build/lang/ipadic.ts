/**
 * Japanese conjugation from IPADIC (mecab-ipadic 2.7.0-20070801, as shipped in npm kuromoji's
 * dict/): the rules by which IPADIC conjugates its verbs and i-adjectives, read back from the
 * compiled dictionary, with the dictionary forms they apply to. IPADIC generates every form from
 * its conjugation tables (conj.csv / cForm.def: one ending per conjugation type and form); each
 * of its 115k verb and adjective forms here gives a rule "surface ending -> dictionary ending,
 * conjugation type" (書い -> 書く: い -> く, 五段・カ行イ音便), and the 223 distinct rules, ordered
 * by how many forms follow them, with the 16k dictionary forms and their types, rebuild every
 * form at run time (core/tokenizer/conjugation-ja.ts) in a fraction of a full-form table's memory.
 *
 *   tid_pos.dat  per entry "surface,pos,pos1,pos2,pos3,conjType,conjForm,base,reading,pron" (UTF-8, NUL-ended)
 *   tid.dat      per entry 10 bytes: left id, right id, word cost (int16 LE each), offset into tid_pos (int32 LE)
 *
 * A surface that is a form of several words reads as the one its most frequent rule gives (98.7%
 * agree with IPADIC's lowest-cost reading, MeCab's choice without context; the rest are mostly
 * potential verbs: 持て -> 持てる, not 持つ); a surface whose cheapest entry is another part of
 * speech (話し the noun) is no conjugated form (otherWords).
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { pkgFile } from './inputs';
import { indexRules, ruleReading } from '../../core/tokenizer/conjugation-ja';

export interface IpadicPredicates {
  /** Conjugation types (IPADIC names: 一段, 五段・カ行イ音便, 形容詞・イ段...), indexed by the rules and bases. */
  types: string[];
  /** [surface ending, dictionary ending, type index], most followed first. */
  rules: Array<[string, string, number]>;
  /** Dictionary forms with their types: "base\ttype index", and whether the type is an adjective's. */
  bases: Map<string, 'verb' | 'adjective'>;
  /** Every verb and adjective form (the Bloom filter of candidates). */
  forms: Set<string>;
  /** How many forms the rules read as IPADIC's lowest-cost entry does, of how many. */
  agreement: { same: number; total: number };
  /** Stems of na-adjectives (形容動詞語幹: 静か, 綺麗, 好き). */
  naAdjectives: Set<string>;
  /**
   * Every form of an auxiliary (助動詞, suffix verbs れる/させる...; classical ones too) and the
   * nominalizing suffixes さ and そう: what may follow a conjugated word inside one piece of text.
   */
  auxiliaries: Set<string>;
  /**
   * Auxiliary surfaces whose cheapest IPADIC entry is an auxiliary, a particle or a conjunction
   * (た, ます, じゃ, たく), and the nominal suffixes: endings with no meaning of their own. Not
   * 無い, まし, なる (an adjective, a na-adjective, a verb are cheapest).
   */
  endings: Set<string>;
  /**
   * Surfaces whose cheapest entry is another part of speech (adverb, noun, particle...): of two
   * or more characters ending in hiragana, pieces the split leaves whole (思わず, とりあえず, ただ),
   * and those the rules would read as a conjugated form (話し the noun).
   */
  otherWords: Set<string>;
}

/** Suffixes (名詞,接尾) that make a noun of an adjective stem: 美し|さ, 美味し|そう. */
const NOMINAL_SUFFIXES = ['さ', 'そう'];

/** Classical forms a modern text does not need (文語基本形 "美し", 体言接続 "美しき"); 音便基本形 "ねえ" stays. */
const SKIPPED_FORMS = /文語|古|体言接続/;

type Kind = 'verb' | 'adjective' | 'auxiliary';

function kindOf(pos: string, pos1: string): Kind | null {
  if (pos === '助動詞') return 'auxiliary';
  // れる, られる, せる, させる are suffix verbs (動詞,接尾) in IPADIC: auxiliaries in a grammar's sense.
  if (pos === '動詞') return pos1 === '接尾' ? 'auxiliary' : 'verb';
  if (pos === '形容詞') return 'adjective';
  return null;
}

/** IPADIC's copyright notice and licence, as kuromoji's NOTICE.md carries it (its mecab-ipadic section). */
export function ipadicNotice(): string {
  const notice = fs.readFileSync(pkgFile('kuromoji', 'NOTICE.md'), 'utf8');
  const start = notice.indexOf('mecab-ipadic-2.7.0-20070801\n---');
  if (start < 0) throw new Error('[lang-data] kuromoji NOTICE.md has no mecab-ipadic section');
  return notice.slice(start).trim();
}

interface Entry {
  surface: string;
  base: string;
  type: string;
  kind: Kind;
  cost: number;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

export function ipadicPredicates(): IpadicPredicates {
  const pos = zlib.gunzipSync(fs.readFileSync(pkgFile('kuromoji', 'dict/tid_pos.dat.gz')));
  const tid = zlib.gunzipSync(fs.readFileSync(pkgFile('kuromoji', 'dict/tid.dat.gz')));
  const view = new DataView(tid.buffer, tid.byteOffset, tid.byteLength);
  const naAdjectives = new Set<string>();
  const auxiliaries = new Set<string>(NOMINAL_SUFFIXES);
  // Per surface: its cheapest verb/adjective/auxiliary entry, and the lowest cost of an entry of
  // another part of speech (nouns, particles, adverbs), and whether that one is a particle or a
  // conjunction (じゃ).
  const cheapest = new Map<string, Entry>();
  const entries: Entry[] = [];
  const otherCost = new Map<string, number>();
  const otherIsParticle = new Map<string, boolean>();
  for (let at = 0; at + 10 <= tid.byteLength; at += 10) {
    const cost = view.getInt16(at + 4, true);
    const offset = view.getInt32(at + 6, true);
    const end = pos.indexOf(0, offset);
    const f = pos.toString('utf8', offset, end < 0 ? pos.length : end).split(',');
    const [surface, p, p1, , , type, conjForm, base] = f;
    if (!surface || !base) continue;
    if (p === '名詞' && p1 === '形容動詞語幹') naAdjectives.add(surface);
    const kind = kindOf(p, p1);
    if (kind === 'auxiliary') auxiliaries.add(surface);
    if (kind === null) {
      if (cost < (otherCost.get(surface) ?? Infinity)) {
        otherCost.set(surface, cost);
        otherIsParticle.set(surface, p === '助詞' || p === '接続詞');
      }
      continue;
    }
    if (SKIPPED_FORMS.test(conjForm)) continue;
    const e: Entry = { surface, base, type, kind, cost };
    if (kind !== 'auxiliary') entries.push(e);
    const had = cheapest.get(surface);
    if (!had || cost < had.cost) cheapest.set(surface, e);
  }

  // The rules, most followed first, and the dictionary forms with their types.
  const types: string[] = [];
  const typeIndex = new Map<string, number>();
  const counts = new Map<string, { rule: [string, string, number]; n: number }>();
  const bases = new Map<string, 'verb' | 'adjective'>();
  const forms = new Set<string>();
  for (const e of entries) {
    let t = typeIndex.get(e.type);
    if (t === undefined) {
      typeIndex.set(e.type, (t = types.length));
      types.push(e.type);
    }
    const p = commonPrefix(e.surface, e.base);
    const key = `${e.surface.slice(p)}\u0000${e.base.slice(p)}\u0000${t}`;
    const c = counts.get(key);
    if (c) c.n++;
    else counts.set(key, { rule: [e.surface.slice(p), e.base.slice(p), t], n: 1 });
    bases.set(`${e.base}\t${t}`, e.kind === 'adjective' ? 'adjective' : 'verb');
    forms.add(e.surface);
  }
  const rules = [...counts.values()]
    .sort((a, b) => b.n - a.n || (a.rule.join() < b.rule.join() ? -1 : 1))
    .map((c) => c.rule);
  const index = indexRules(rules);

  const endings = new Set<string>(NOMINAL_SUFFIXES);
  for (const surface of auxiliaries) {
    const form = cheapest.get(surface);
    const other = otherCost.get(surface) ?? Infinity;
    if (naAdjectives.has(surface)) continue;
    if (form !== undefined && form.cost <= other ? form.kind === 'auxiliary' : otherIsParticle.get(surface) === true)
      endings.add(surface);
  }
  const otherWords = new Set<string>();
  const hiraganaEnd = /\p{Script=Hiragana}$/u;
  let same = 0;
  let total = 0;
  const hasBase = (key: string): boolean => bases.has(key);
  for (const [surface, other] of otherCost) {
    const form = cheapest.get(surface);
    if (form !== undefined && form.cost <= other) continue;
    // Another part of speech is cheaper: a word the split leaves whole, or one the rules must not read.
    if ((surface.length >= 2 && hiraganaEnd.test(surface)) || ruleReading(surface, index, hasBase) !== null)
      otherWords.add(surface);
  }
  for (const [surface, e] of cheapest) {
    if (e.kind === 'auxiliary' || naAdjectives.has(surface) || (otherCost.get(surface) ?? Infinity) < e.cost) continue;
    total++;
    if (ruleReading(surface, index, hasBase) === e.base) same++;
  }
  return { types, rules, bases, forms, agreement: { same, total }, naAdjectives, auxiliaries, endings, otherWords };
}
