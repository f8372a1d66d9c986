/**
 * Vocabulary quality bench (`npm run bench:vocab`, docs/vocabulary.md): on the default model and
 * English language data, each figure beside the same figure of the behaviour before the
 * vocabulary filter (computed in the same run). Last line: one JSON object.
 *
 *   1. find-and-score: 100 seed sets (listed below: common, rare, multi-word); of the top 20
 *      neighbours, the share that are dictionary words (target >= 98%) and the share that are
 *      stop words or pronouns/auxiliaries (target 0). Baseline: the old candidate rule (every
 *      entry with a letter, no rank cutoff).
 *   2. synonyms: the 500 most frequent content dictionary words; the share whose synonyms all
 *      pass the similarity filter (cosine >= SYNONYM_MIN_COSINE in the served model).
 *   3. autocomplete (autocompleteFigures below): 200 frequent content headwords (spread over the
 *      10,000 most frequent content words of 5+ letters), typed as their first two thirds (at least
 *      3 letters; also half); the share with the intended word in the top 3 (target >= 80%), and
 *      the mean share of letters typed until it is there. Also the first definition (every 50th
 *      word, inflected forms included). Baseline: the old rule (lower-cased prefix, most frequent
 *      first, entries with a letter).
 *   4. word similarity of the default model (Spearman rho, int8 as served) on the English
 *      multilingual WS-353 and SimLex-999 (../shared/data/wordsim-de/), beside en-glove-6b-100d's
 *      (int8 and its float source vectors) on the same pairs and published GloVe figures.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt } from '../build/ensure';
import { GLOVE_MODEL_FILE, GLOVE_MODEL_ID } from '../build/glove-model';
import { languageFile, SYNONYM_MIN_COSINE } from '../build/lang-data';
import { loadGloveFloatVectors, loadDefaultModel, loadModelFile } from '../build/load-model';
import { ROOT } from '../build/wrangler';
import type { EmbeddingModel } from '../core/model';
import { autocomplete, scoreWords, seedCentroid, seedSet } from '../core/scoring';
import { parseLanguageData, tokenize } from '../core/tokenizer';
import { FLAG } from '../core/tokenizer/data';
import { VOCAB_FLAG } from '../core/vocab-quality';

/** 100 seed sets: 40 common, 30 rare, 30 multi-word (phrases or several seeds). */
export const SEED_SETS: string[][] = [
  // common
  ...[
    'coffee',
    'berlin',
    'happy',
    'car',
    'music',
    'football',
    'doctor',
    'garden',
    'money',
    'school',
    'river',
    'computer',
    'summer',
    'city',
    'dog',
    'bread',
    'movie',
    'travel',
    'price',
    'beautiful',
    'fast',
    'healthy',
    'family',
    'phone',
    'green',
    'winter',
    'hotel',
    'kitchen',
    'shoes',
    'bank',
    'election',
    'church',
    'ocean',
    'bicycle',
    'chocolate',
    'fashion',
    'dance',
    'teacher',
    'fresh',
    'luxury',
  ].map((w) => [w]),
  // rare
  ...[
    'bitcoin',
    'umami',
    'eco',
    'cozy',
    'organic',
    'vegan',
    'artisanal',
    'minimalist',
    'gluten',
    'hummus',
    'kombucha',
    'mindfulness',
    'karaoke',
    'origami',
    'sourdough',
    'probiotic',
    'biodegradable',
    'handcrafted',
    'ergonomic',
    'wanderlust',
    'espresso',
    'cashmere',
    'skincare',
    'podcast',
    'smartphone',
    'crowdfunding',
    'vintage',
    'lavender',
    'quinoa',
    'turmeric',
  ].map((w) => [w]),
  // multi-word
  ['ice cream'],
  ['New York'],
  ['climate change'],
  ['real estate'],
  ['social media'],
  ['credit card'],
  ['high school'],
  ['solar power'],
  ['fast food'],
  ['health care'],
  ['olive oil'],
  ['red wine'],
  ['green tea'],
  ['fitness center'],
  ['video game'],
  ['coffee shop'],
  ['electric car'],
  ['online shopping'],
  ['customer service'],
  ['dark chocolate'],
  ['coffee', 'tea'],
  ['sustainable', 'organic'],
  ['luxury', 'hotel'],
  ['running', 'shoes'],
  ['cheap', 'flights'],
  ['fresh', 'bread', 'bakery'],
  ['smart', 'phone'],
  ['beach', 'holiday'],
  ['wedding', 'dress'],
  ['pizza', 'pasta'],
];

const ws = (f: string) => path.join(ROOT, '..', 'shared', 'data', 'wordsim-de', f);
/** Shared data lives beside the worktrees (/work/shared); fall back to that absolute path. */
function wordsimFile(f: string): string {
  for (const p of [ws(f), path.join('/work/shared/data/wordsim-de', f)]) if (fs.existsSync(p)) return p;
  throw new Error(`wordsim file ${f} not found`);
}

function pct(x: number): number {
  return Math.round(x * 1000) / 10;
}

function oldNeighbours(model: EmbeddingModel, seeds: string[], k: number): number[] {
  const s = seedSet(model, seeds);
  const c = seedCentroid(model, s);
  if (!c) return [];
  const excluded = new Set([...s.rows, ...s.phrases.flatMap((p) => p.rows)]);
  const out: number[] = [];
  for (const r of model.topK(c, k + excluded.size + 64).rows) {
    if (out.length >= k) break;
    if (!excluded.has(r) && /\p{L}/u.test(model.word(r))) out.push(r);
  }
  return out;
}

function neighbourFigures(model: EmbeddingModel) {
  const count = (rows: number[]) => {
    let dict = 0;
    let stop = 0;
    for (const r of rows) {
      const f = model.flags(r);
      if (f & VOCAB_FLAG.DICTIONARY) dict++;
      if (f & (VOCAB_FLAG.STOP | VOCAB_FLAG.FUNCTION)) stop++;
    }
    return { dict, stop, n: rows.length };
  };
  const now = { dict: 0, stop: 0, n: 0 };
  const before = { dict: 0, stop: 0, n: 0 };
  let emptySets = 0;
  for (const seeds of SEED_SETS) {
    const data = scoreWords(
      { seedWords: seeds, embeddingModelId: model.manifest.id, limit: 20 },
      { index: model, mappers: [], storedDimensions: new Map() },
    ).data;
    if (data.length === 0) emptySets++;
    const a = count(data.map((d) => d.modelRank - 1));
    const b = count(oldNeighbours(model, seeds, 20));
    for (const k of ['dict', 'stop', 'n'] as const) {
      now[k] += a[k];
      before[k] += b[k];
    }
  }
  return {
    seedSets: SEED_SETS.length,
    emptySets,
    dictionaryShare: pct(now.dict / now.n),
    stopOrPronounShare: pct(now.stop / now.n),
    baselineDictionaryShare: pct(before.dict / before.n),
    baselineStopOrPronounShare: pct(before.stop / before.n),
  };
}

function contentRows(model: EmbeddingModel, minLength: number, limit: number): number[] {
  const out: number[] = [];
  for (let r = 0; r < model.size && out.length < limit; r++) {
    const f = model.flags(r);
    if (
      !(f & VOCAB_FLAG.DICTIONARY) ||
      f &
        (VOCAB_FLAG.STOP |
          VOCAB_FLAG.FUNCTION |
          VOCAB_FLAG.NUMBER |
          VOCAB_FLAG.SHORT |
          VOCAB_FLAG.PROPER |
          VOCAB_FLAG.ACRONYM)
    )
      continue;
    const w = model.word(r);
    if (w.length >= minLength && /^\p{Ll}+$/u.test(w)) out.push(r);
  }
  return out;
}

function synonymFigures(model: EmbeddingModel) {
  const en = parseLanguageData(new Uint8Array(fs.readFileSync(languageFile('en'))));
  const rows = contentRows(model, 3, 500);
  const isStop = (w: string) => (en.flagsOf(en.find(w)) & FLAG.STOP) !== 0;
  let withSynonyms = 0;
  let allPass = 0;
  let links = 0;
  for (const r of rows) {
    const w = model.word(r);
    const syns = tokenize(w, en).tokens[0]?.synonyms ?? [];
    if (syns.length === 0) continue;
    withSynonyms++;
    links += syns.length;
    const a = model.vector(
      model.rowOf(tokenize(w, en).tokens[0]!.token) >= 0 ? model.rowOf(tokenize(w, en).tokens[0]!.token) : r,
    );
    const ok = syns.every((s) => {
      // As the build compares them: a multi-word synonym by its content words.
      const parts = s.split(' ');
      const content = parts.filter((p) => !isStop(p));
      const c = seedCentroid(model, seedSet(model, [(content.length ? content : parts).join(' ')]));
      if (!c) return false;
      let dot = 0;
      for (let j = 0; j < a.length; j++) dot += a[j]! * c[j]!;
      return dot >= SYNONYM_MIN_COSINE - 1e-6;
    });
    if (ok) allPass++;
  }
  return {
    words: rows.length,
    withSynonyms,
    synonymLinks: links,
    allPassShare: pct(withSynonyms ? allPass / withSynonyms : 1),
    threshold: SYNONYM_MIN_COSINE,
  };
}

/**
 * Autocomplete figures. Targets: frequent content dictionary words of 5+ letters, spread over the
 * 10,000 most frequent (every k-th). Two target sets:
 *   - headwords (the figure compared with the target): words that are not an inflected form of
 *     another dictionary word (flag INFLECTED), i.e. what a dictionary lists and what autocomplete
 *     offers first; an inflected form is reached by typing past its lemma ("plann" -> planned);
 *   - all forms (the definition of the first version of this bench, kept for comparison).
 * Prefix: the first ceil(share x length) letters, at least 3 (autocomplete cannot know the word
 * from one or two letters); shares 1/2 and 2/3. Also the mean share of a headword's letters typed
 * until it is in the top 3 (keystrokes; 1 = only the whole word finds it).
 */
function autocompleteFigures(model: EmbeddingModel) {
  const pool = contentRows(model, 5, 10_000);
  const spread = (rows: number[]) => rows.filter((_, i) => i % Math.floor(rows.length / 200) === 0).slice(0, 200);
  const allForms = pool.filter((_, i) => i % 50 === 0).slice(0, 200);
  const headwords = spread(pool.filter((r) => !(model.flags(r) & VOCAB_FLAG.INFLECTED)));
  const top3 = (prefix: string) =>
    autocomplete(model, { word: prefix, embeddingModelId: 'x' })
      .suggestions.slice(0, 3)
      .map((s) => s.toLowerCase());
  const before3 = (prefix: string) => {
    const seen = new Set<string>();
    return model
      .prefixRows(prefix, 3, (row) => {
        const x = model.word(row).toLowerCase();
        if (seen.has(x) || !/\p{L}/u.test(x)) return false;
        seen.add(x);
        return true;
      })
      .map((row) => model.word(row).toLowerCase());
  };
  const run = (targets: number[], share: number) => {
    let hit = 0;
    let hitBefore = 0;
    for (const r of targets) {
      const w = model.word(r);
      const prefix = w.slice(0, Math.max(3, Math.ceil(w.length * share)));
      if (top3(prefix).includes(w)) hit++;
      if (before3(prefix).includes(w)) hitBefore++;
    }
    return { top3Share: pct(hit / targets.length), baselineTop3Share: pct(hitBefore / targets.length) };
  };
  const keystrokes = (targets: number[]) => {
    const need = (w: string, list: (p: string) => string[]) => {
      for (let n = 3; n <= w.length; n++) if (list(w.slice(0, n)).includes(w)) return n / w.length;
      return 1;
    };
    let now = 0;
    let before = 0;
    for (const r of targets) {
      const w = model.word(r);
      now += need(w, top3);
      before += need(w, before3);
    }
    return { meanShareTyped: pct(now / targets.length), baselineMeanShareTyped: pct(before / targets.length) };
  };
  return {
    headwords: {
      prefixes: headwords.length,
      half: run(headwords, 1 / 2),
      twoThirds: run(headwords, 2 / 3),
      ...keystrokes(headwords),
    },
    allForms: { prefixes: allForms.length, half: run(allForms, 1 / 2), twoThirds: run(allForms, 2 / 3) },
  };
}

function spearman(a: number[], b: number[]): number {
  const rank = (x: number[]) => {
    const o = x.map((_, i) => i).sort((i, j) => x[i]! - x[j]!);
    const r = new Array<number>(x.length);
    for (let i = 0; i < o.length;) {
      let j = i;
      while (j + 1 < o.length && x[o[j + 1]!] === x[o[i]!]) j++;
      for (let k = i; k <= j; k++) r[o[k]!] = (i + j) / 2;
      i = j + 1;
    }
    return r;
  };
  const ra = rank(a);
  const rb = rank(b);
  const m = (ra.length - 1) / 2;
  let s = 0;
  let sa = 0;
  let sb = 0;
  for (let i = 0; i < ra.length; i++) {
    s += (ra[i]! - m) * (rb[i]! - m);
    sa += (ra[i]! - m) ** 2;
    sb += (rb[i]! - m) ** 2;
  }
  return s / Math.sqrt(sa * sb);
}

/** The default model's pairs (int8 as served) beside en-glove-6b-100d's, int8 and its float source. */
async function similarityFigures(model: EmbeddingModel, glove: EmbeddingModel) {
  const floats = await loadGloveFloatVectors();
  const d = floats.dims;
  const fcos = (a: number, b: number) => {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let j = 0; j < d; j++) {
      const x = floats.vectors[a * d + j]!;
      const y = floats.vectors[b * d + j]!;
      dot += x * y;
      na += x * x;
      nb += y * y;
    }
    return dot / Math.sqrt(na * nb);
  };
  const one = (file: string) => {
    const gold: number[] = [];
    const int8: number[] = [];
    const gloveInt8: number[] = [];
    const gloveF32: number[] = [];
    let missing = 0;
    for (const line of fs.readFileSync(wordsimFile(file), 'utf8').split('\n').slice(1)) {
      const [a, b, s] = line.split('\t');
      if (!a || !b || !s) continue;
      const ra = model.rowOf(a.toLowerCase());
      const rb = model.rowOf(b.toLowerCase());
      const ga = glove.rowOf(a.toLowerCase());
      const gb = glove.rowOf(b.toLowerCase());
      if (ra < 0 || rb < 0 || ga < 0 || gb < 0) {
        missing++;
        continue;
      }
      gold.push(Number(s));
      int8.push(model.scores(model.vector(ra), [rb])[0]!);
      gloveInt8.push(glove.scores(glove.vector(ga), [gb])[0]!);
      gloveF32.push(fcos(ga, gb));
    }
    const r3 = (x: number): number => Math.round(x * 1000) / 1000;
    return {
      pairs: gold.length,
      missing,
      spearmanInt8: r3(spearman(gold, int8)),
      gloveSpearmanInt8: r3(spearman(gold, gloveInt8)),
      gloveSpearmanFloat: r3(spearman(gold, gloveF32)),
    };
  };
  return {
    ws353: {
      ...one('ms_wordsim353-english.txt'),
      published:
        'GloVe 6B 300d on the original WS-353: 0.658 (Pennington et al. 2014, Table 3); no 6B 100d figure is published there',
    },
    simlex999: {
      ...one('ms_simlex-english.txt'),
      published:
        'no GloVe 6B 100d figure is published by the GloVe or SimLex-999 authors; the multilingual re-annotation (Leviant & Reichart 2015) also differs from the original ratings',
    },
  };
}

async function main(): Promise<void> {
  await ensureBuilt();
  const model = loadDefaultModel();
  const t0 = performance.now();
  const neighbours = neighbourFigures(model);
  console.log(
    `find-and-score, ${neighbours.seedSets} seed sets, top 20: dictionary words ${neighbours.dictionaryShare}% (before the filter ${neighbours.baselineDictionaryShare}%; target >= 98%), stop words/pronouns ${neighbours.stopOrPronounShare}% (before ${neighbours.baselineStopOrPronounShare}%; target 0)`,
  );
  const synonyms = synonymFigures(model);
  console.log(
    `synonyms, ${synonyms.words} frequent content words: ${synonyms.withSynonyms} have synonyms (${synonyms.synonymLinks} links); all pass the similarity filter (cos >= ${synonyms.threshold}): ${synonyms.allPassShare}%`,
  );
  const ac = autocompleteFigures(model);
  const h = ac.headwords;
  console.log(
    `autocomplete, ${h.prefixes} frequent headwords: intended word in the top 3 with two thirds typed ${h.twoThirds.top3Share}% (before ${h.twoThirds.baselineTop3Share}%; target >= 80%), with half typed ${h.half.top3Share}% (before ${h.half.baselineTop3Share}%); mean share of letters typed until it is in the top 3 ${h.meanShareTyped}% (before ${h.baselineMeanShareTyped}%)`,
  );
  console.log(
    `autocomplete, ${ac.allForms.prefixes} frequent words, inflected forms included (first definition): half typed ${ac.allForms.half.top3Share}% (before ${ac.allForms.half.baselineTop3Share}%), two thirds ${ac.allForms.twoThirds.top3Share}% (before ${ac.allForms.twoThirds.baselineTop3Share}%)`,
  );
  const sim = await similarityFigures(model, loadModelFile(GLOVE_MODEL_FILE));
  for (const [name, f] of [
    ['WS-353', sim.ws353],
    ['SimLex-999', sim.simlex999],
  ] as const)
    console.log(
      `word similarity (Spearman): ${name} ${f.spearmanInt8} on ${model.manifest.id}; ${GLOVE_MODEL_ID} ${f.gloveSpearmanInt8} int8 / ${f.gloveSpearmanFloat} float (${f.pairs} pairs; published: ${f.published})`,
    );
  console.log(
    JSON.stringify({
      date: new Date().toISOString(),
      model: model.manifest.id,
      neighbours,
      synonyms,
      autocomplete: ac,
      similarity: sim,
      ms: Math.round(performance.now() - t0),
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
