/**
 * Japanese conjugation from IPADIC (mecab-ipadic 2.7.0-20070801, as shipped in npm kuromoji's
 * dict/): every conjugated form that IPADIC lists for a verb, an i-adjective or an auxiliary,
 * with its dictionary form, and the na-adjective stems. IPADIC generates these forms with its
 * conjugation tables (conj.csv / cForm.def: one ending per conjugation type and form), so this
 * is those rules applied to its lexicon, read back from the compiled dictionary:
 *
 *   tid_pos.dat  per entry "surface,pos,pos1,pos2,pos3,conjType,conjForm,base,reading,pron" (UTF-8, NUL-ended)
 *   tid.dat      per entry 10 bytes: left id, right id, word cost (int16 LE each), offset into tid_pos (int32 LE)
 *
 * A surface that is a form of several words keeps the entry of lowest word cost (MeCab's unigram
 * cost: the most likely reading), as MeCab would pick without context; a surface whose cheapest
 * entry is another part of speech (話し the noun, 好き the na-adjective) is no conjugated form.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { pkgFile } from './inputs';

export type PredicateKind = 'verb' | 'adjective' | 'auxiliary';

export interface ConjugatedForm {
  base: string;
  kind: PredicateKind;
  cost: number;
}

export interface IpadicPredicates {
  /** Every conjugated or dictionary form of a verb, i-adjective or auxiliary, by surface (lowest cost). */
  forms: Map<string, ConjugatedForm>;
  /** Stems of na-adjectives (形容動詞語幹: 静か, 綺麗, 好き). */
  naAdjectives: Set<string>;
  /**
   * Every form of an auxiliary (助動詞, suffix verbs れる/させる...; classical ones too) and the
   * nominalizing suffixes さ and そう: what may follow a conjugated word inside one piece of text.
   */
  auxiliaries: Set<string>;
  /**
   * Auxiliary surfaces whose cheapest IPADIC entry is an auxiliary, a particle or a conjunction
   * (た, ます, じゃ, たく), and the nominal suffixes: endings with no meaning of their own. Not 無い, まし, なる (an adjective, a
   * na-adjective, a verb are cheapest).
   */
  endings: Set<string>;
  /**
   * Words of another part of speech (cheapest entry: adverb, noun, particle...) of two or more
   * characters ending in hiragana: pieces the split must leave whole (思わず, とりあえず, ただ).
   */
  otherWords: Set<string>;
}

/** Suffixes (名詞,接尾) that make a noun of an adjective stem: 美し|さ, 美味し|そう. */
const NOMINAL_SUFFIXES = ['さ', 'そう'];

/** Classical forms a modern text does not need (文語基本形 "美し", 体言接続 "美しき"); 音便基本形 "ねえ" stays. */
const SKIPPED_FORMS = /文語|古|体言接続/;

function kindOf(pos: string, pos1: string): PredicateKind | null {
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

export function ipadicPredicates(): IpadicPredicates {
  const pos = zlib.gunzipSync(fs.readFileSync(pkgFile('kuromoji', 'dict/tid_pos.dat.gz')));
  const tid = zlib.gunzipSync(fs.readFileSync(pkgFile('kuromoji', 'dict/tid.dat.gz')));
  const view = new DataView(tid.buffer, tid.byteOffset, tid.byteLength);
  const forms = new Map<string, ConjugatedForm>();
  const naAdjectives = new Set<string>();
  const auxiliaries = new Set<string>(NOMINAL_SUFFIXES);
  // Per surface the lowest cost of an entry that is no conjugated form (nouns, particles, adverbs),
  // and whether that entry is a particle or a conjunction (じゃ).
  const otherCost = new Map<string, number>();
  const otherIsParticle = new Map<string, boolean>();
  for (let at = 0; at + 10 <= tid.byteLength; at += 10) {
    const cost = view.getInt16(at + 4, true);
    const offset = view.getInt32(at + 6, true);
    const end = pos.indexOf(0, offset);
    const f = pos.toString('utf8', offset, end < 0 ? pos.length : end).split(',');
    const [surface, p, p1, , , , conjForm, base] = f;
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
    const had = forms.get(surface);
    if (!had || cost < had.cost) forms.set(surface, { base, kind, cost });
  }
  const endings = new Set<string>(NOMINAL_SUFFIXES);
  const otherWords = new Set<string>();
  const hiraganaEnd = /\p{Script=Hiragana}$/u;
  for (const [surface, other] of otherCost) {
    const form = forms.get(surface);
    if ((form === undefined || other < form.cost) && surface.length >= 2 && hiraganaEnd.test(surface))
      otherWords.add(surface);
  }
  for (const surface of auxiliaries) {
    const form = forms.get(surface);
    const other = otherCost.get(surface) ?? Infinity;
    if (naAdjectives.has(surface)) continue;
    if (form !== undefined && form.cost <= other ? form.kind === 'auxiliary' : otherIsParticle.get(surface) === true)
      endings.add(surface);
  }
  for (const [surface, form] of forms) {
    const other = otherCost.get(surface);
    if (naAdjectives.has(surface) || (other !== undefined && other < form.cost)) forms.delete(surface);
  }
  return { forms, naAdjectives, auxiliaries, endings, otherWords };
}
