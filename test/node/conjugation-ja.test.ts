/**
 * Japanese conjugation (core/tokenizer/conjugation-ja.ts) on the real language data: per
 * conjugation class, the pieces a conjugated word is cut into and the dictionary form the
 * scorer looks its content piece up by (token stays the surface form); and the negation the
 * composition reads from inflection (core/scoring/composition/), with its scope.
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureLanguageData, languageFile } from '../../build/lang-data';
import { compileComposition, composeText, type ComposedItem } from '../../core/scoring/composition';
import { parseLanguageData, scoringTokenizer, tokenize, type LanguageData } from '../../core/tokenizer';

let ja: LanguageData;
beforeAll(async () => {
  await ensureLanguageData();
  ja = parseLanguageData(fs.readFileSync(languageFile('ja')));
});

/** "piece→lookup | piece | ..." of a text: each token, with its lookup form where that is not the surface ('' for an auxiliary). */
function pieces(text: string): string {
  return scoringTokenizer(ja)(text)
    .map((t) => (t.lookup === t.string ? t.string : `${t.string}→${t.lookup}`))
    .join(' | ');
}

/** The dictionary form the content word `word` of `text` is looked up by. */
function lookupOf(text: string, word: string): string {
  const t = scoringTokenizer(ja)(text).find((x) => x.string === word);
  if (!t) throw new Error(`no token ${word} in ${pieces(text)}`);
  expect(t.token).toBe(t.string);
  return t.lookup;
}

// [text, conjugated piece, dictionary form]
const I_ADJECTIVES: Array<[string, string, string]> = [
  ['料理はまずかった。', 'まずかっ', 'まずい'], // -かった
  ['とても美味しかった。', '美味しかっ', '美味しい'],
  ['楽しかった', '楽しかっ', '楽しい'],
  ['嬉しかった', '嬉しかっ', '嬉しい'],
  ['良かった', '良かっ', '良い'],
  ['悪かった', '悪かっ', '悪い'],
  ['美味しくない', '美味しく', '美味しい'], // -くない
  ['楽しくない', '楽しく', '楽しい'],
  ['面白くなかった', '面白く', '面白い'], // -くなかった
  ['高くて美味しい', '高く', '高い'], // -くて
  ['高ければ買わない', '高けれ', '高い'], // -ければ
  ['美しさ', '美し', '美しい'], // -さ
];
const VERBS: Array<[string, string, string]> = [
  // ichidan
  ['パンを食べます', '食べ', '食べる'], // -ます
  ['パンを食べました', '食べ', '食べる'], // -ました
  ['肉は食べません', '食べ', '食べる'], // -ません
  ['肉は食べませんでした', '食べ', '食べる'], // -ませんでした
  ['テレビを見ない', '見', '見る'], // -ない
  ['テレビを見なかった', '見', '見る'], // -なかった
  ['彼の話を信じた', '信じ', '信じる'], // -た
  ['友達に褒められた', '褒め', '褒める'], // -られる
  ['パンを食べたい', '食べ', '食べる'], // -たい
  // godan
  ['本を読みます', '読み', '読む'], // -ます
  ['本を読まなかった', '読ま', '読む'], // -なかった
  ['手紙を書いて送った', '書い', '書く'], // -て
  ['海で泳いだ', '泳い', '泳ぐ'], // -だ
  ['猫が死んだ', '死ん', '死ぬ'], // -だ
  ['子供は笑っていた', '笑っ', '笑う'], // -て
  ['待っていた', '待っ', '待つ'], // -て
  ['公園で遊んでいる', '遊ん', '遊ぶ'], // -で
  ['行きたくない', '行き', '行く'], // -たくない
  ['本が読まれる', '読ま', '読む'], // -れる (one piece for TinySegmenter: split)
  ['分からない', '分から', '分かる'], // -ない (分|から merged)
  // irregular
  ['友達が来ない', '来', '来る'],
];

describe('dictionary forms by conjugation class (the scorer looks them up; token stays the surface)', () => {
  it('i-adjectives: -かった, -くない, -くなかった, -くて, -ければ, -さ', () => {
    for (const [text, word, base] of I_ADJECTIVES) expect(lookupOf(text, word), pieces(text)).toBe(base);
  });
  it('verbs (ichidan, godan, irregular): -ます, -ました, -ません(でした), -ない, -なかった, -た/-だ, -て/-で, -たい, -たくない, -れる/-られる', () => {
    for (const [text, word, base] of VERBS) expect(lookupOf(text, word), pieces(text)).toBe(base);
  });
  it('na-adjectives and nouns with the copula: the stem is the dictionary form; the copula pieces stand apart', () => {
    expect(pieces('静かでした')).toBe('静か | で | し | た');
    expect(pieces('元気だった')).toBe('元気 | だっ | た');
    expect(pieces('好きです')).toBe('好き | です');
    // TinySegmenter keeps 好きじゃ whole: the auxiliary is split off, so ない negates 好き.
    expect(pieces('好きじゃない')).toBe('好き | じゃ→ | ない');
    expect(pieces('便利じゃない')).toBe('便利 | じゃ→ | ない');
    expect(pieces('綺麗ではありません')).toBe('綺麗 | で | は | あり | ませ→ | ん');
  });
  it('segmentation follows the conjugated word: merged where TinySegmenter cut inside it, a word of its own kept whole', () => {
    expect(pieces('とても美味しかった。')).toContain('美味しかっ→美味しい | た');
    expect(pieces('つまらない映画')).toBe('つまらない | 映画');
    // A particle is no verb stem: は|いる stays two tokens.
    expect(pieces('猫はいる')).toBe('猫 | は | いる');
    // Stop words keep their surface as lookup (い, し are verb forms but carry no content).
    expect(pieces('住んでいます')).toBe('住ん→住む | で | い | ます');
  });
  it('the tokenizations output keeps token = string for every Japanese token', () => {
    for (const [text] of [...I_ADJECTIVES, ...VERBS]) {
      for (const t of tokenize(text, ja).tokens) {
        expect(t.token).toBe(t.string);
        expect(t).not.toHaveProperty('lookup');
      }
    }
  });
  it('synonyms of a conjugated word come from its dictionary form when its surface has none', () => {
    for (const [text, base] of [
      ['本を買った', '買う'],
      ['速かった', '速い'],
    ]) {
      const conjugated = scoringTokenizer(ja)(text).find((t) => t.lookup === base)!;
      const synonyms = tokenize(text, ja).tokens.find((t) => t.string === conjugated.string)!.synonyms;
      expect(synonyms.length, text).toBeGreaterThan(0);
      expect(synonyms).toEqual(tokenize(base, ja).tokens[0]!.synonyms.filter((s) => s !== conjugated.string));
    }
  });
  it('words of other parts of speech that end like a conjugation stay whole (no split, no negation)', () => {
    expect(pieces('ただ一つ')).toBe('ただ | 一つ');
    expect(pieces('それはただの噂だ')).toBe('それ | は | ただ | の | 噂 | だ');
    expect(pieces('思わず笑った')).toBe('思わず | 笑っ→笑う | た');
  });
});

describe('negation by inflection (composition rules, ja)', () => {
  const compose = (text: string): ComposedItem[] =>
    composeText(text, scoringTokenizer(ja)(text), compileComposition(ja.meta.composition));
  const item = (items: ComposedItem[], s: string): ComposedItem => {
    const it = items.find((x) => x.string === s);
    if (!it) throw new Error(`no item ${s} in ${items.map((x) => x.string).join('|')}`);
    return it;
  };

  it('a negative ending negates the word it inflects, and explain names the rule', () => {
    for (const [text, word] of [
      ['美味しくない', '美味しく'],
      ['楽しくない', '楽しく'],
      ['面白くなかった', '面白く'],
      ['肉は食べませんでした', '食べ'],
      ['好きじゃない', '好き'],
      ['テレビを見なければ', '見'],
      ['本が読まれない', '読ま'],
      ['美味しく無い', '美味しく'],
    ]) {
      const it = item(compose(text), word);
      expect(it.negations, text).toBe(1);
      expect(it.rules, text).toContain('negated');
    }
    expect(item(compose('美味しかった'), '美味しかっ').negations).toBe(0);
  });
  it('the scope: back to a case particle (を), at most three scored words, not over a clause break', () => {
    const solved = compose('問題を解決できなかった。');
    expect(item(solved, '解決').negations).toBe(1);
    expect(item(solved, '問題').negations).toBe(0);
    // An existential ない negates its subject (は, が stay open).
    expect(item(compose('問題はない。'), '問題').negations).toBe(1);
    expect(item(compose('料理は良い。悪くない。'), '良い').negations).toBe(0);
    // Auxiliaries are not scored, so they take no place in the scope.
    expect(compose('行きたくない').map((x) => x.string)).not.toContain('たく');
  });
  it('ませ|ん and でし|た after it are one negation (negative concord), not two', () => {
    expect(item(compose('肉は食べませんでした'), '食べ').negations).toBe(1);
    expect(item(compose('美味しくありません'), '美味しく').negations).toBe(1);
  });
});
