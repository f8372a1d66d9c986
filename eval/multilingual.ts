/**
 * `npm run bench:multilingual`: quality of the aligned models (build/aligned-models.ts).
 *
 *   1. Spearman rho and coverage on multilingual WS-353 and SimLex-999 (Leviant & Reichart 2015,
 *      ../shared/data/wordsim-de/): German on the aligned German models; English on the default
 *      model (en-distilled-glove-use-100d, #36 targets WS-353 >= .68, SimLex >= .36) beside
 *      en-glove-6b-100d (the baseline of the same run). Pairs with a missing
 *      word are left out (coverage says how many were scored).
 *   2. Cross-lingual sanity: 50 common German, French and Japanese words each (chosen by hand,
 *      everyday vocabulary, not from the test pairs) and their English translation: is the
 *      translation among the word's 10 translations (word-translations into the English model it
 *      was projected onto: the nearest English words, phrase rows skipped)?
 *
 * Both sets of aligned models run side by side (compareAlignedModels): the ones on GloVe (the ids
 * of before #36) and the ones on the default English model, which must not drop below them in
 * the cross-lingual checks (the nearest-word check above, and the cross-lingual r of their
 * multilingual mapper bundles, recorded in each bundle by build/mapper/multilingual.ts). Figures without a prefix are the default models'; `glove_` ones the
 * GloVe-based models'.
 *
 * Last line: one JSON object.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  ALIGNED,
  ALIGNED_GLOVE,
  ALIGNED_LANGUAGES,
  alignedModelFile,
  builtAligned,
  ensureAlignedModels,
  SKIP_LINE,
  type AlignedLanguage,
  type AlignedSpec,
} from '../build/aligned-models';
import { ensureDefaultModel } from '../build/default-model';
import { ensureGloveModel } from '../build/glove-model';
import { ensureDefaultMappers } from '../build/mapper/defaults';
import { ensureMultilingualMappers } from '../build/mapper/multilingual';
import { ensureKernels } from '../build/build-wasm';
import { loadDefaultModel, loadModelFile } from '../build/load-model';
import { GLOVE_MODEL_FILE, MAPPERS_DIR, modelFile } from '../build/paths';
import type { EmbeddingModel } from '../core/model';
import { translateWords } from '../core/translation';

const DATA = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../shared/data/wordsim-de');
const DATA_DIR = fs.existsSync(DATA) ? DATA : '/work/shared/data/wordsim-de';

export function readPairs(file: string): Array<[string, string, number]> {
  return fs
    .readFileSync(path.join(DATA_DIR, file), 'utf8')
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'))
    .filter((p) => p.length >= 3 && p[0] && p[1])
    .map((p) => [p[0]!.trim(), p[1]!.trim(), Number(p[2])]);
}

function ranks(xs: number[]): number[] {
  const idx = xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0]);
  const r = new Array<number>(xs.length);
  for (let i = 0; i < idx.length;) {
    let j = i;
    while (j + 1 < idx.length && idx[j + 1]![0] === idx[i]![0]) j++;
    for (let k = i; k <= j; k++) r[idx[k]![1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return r;
}

export function spearman(a: number[], b: number[]): number {
  const ra = ranks(a);
  const rb = ranks(b);
  const n = a.length;
  const ma = ra.reduce((s, x) => s + x, 0) / n;
  const mb = rb.reduce((s, x) => s + x, 0) / n;
  let num = 0;
  let da = 0;
  let db = 0;
  for (let i = 0; i < n; i++) {
    num += (ra[i]! - ma) * (rb[i]! - mb);
    da += (ra[i]! - ma) ** 2;
    db += (rb[i]! - mb) ** 2;
  }
  return num / Math.sqrt(da * db);
}

function cosine(model: EmbeddingModel, a: number, b: number): number {
  const x = model.vector(a);
  const y = model.vector(b);
  let s = 0;
  for (let d = 0; d < x.length; d++) s += x[d]! * y[d]!;
  return s;
}

function wordSim(model: EmbeddingModel, file: string): { rho: number; coverage: number; pairs: number } {
  const pairs = readPairs(file);
  const gold: number[] = [];
  const pred: number[] = [];
  for (const [a, b, score] of pairs) {
    const ra = model.rowOf(a);
    const rb = model.rowOf(b);
    if (ra < 0 || rb < 0) continue;
    gold.push(score);
    pred.push(cosine(model, ra, rb));
  }
  return { rho: spearman(gold, pred), coverage: gold.length / pairs.length, pairs: pairs.length };
}

/** Everyday words with their English translation (not taken from the word-similarity pairs). */
const SANITY: Record<AlignedLanguage, Array<[string, string]>> = {
  de: [
    ['Haus', 'house'],
    ['Hund', 'dog'],
    ['Wasser', 'water'],
    ['Stadt', 'city'],
    ['Buch', 'book'],
    ['Baum', 'tree'],
    ['Auto', 'car'],
    ['Brot', 'bread'],
    ['Fenster', 'window'],
    ['Tür', 'door'],
    ['Schule', 'school'],
    ['Kirche', 'church'],
    ['Zeitung', 'newspaper'],
    ['Krankheit', 'disease'],
    ['Frühling', 'spring'],
    ['Winter', 'winter'],
    ['Schnee', 'snow'],
    ['Regen', 'rain'],
    ['Sonne', 'sun'],
    ['Mond', 'moon'],
    ['Pferd', 'horse'],
    ['Vogel', 'bird'],
    ['Fisch', 'fish'],
    ['Apfel', 'apple'],
    ['Milch', 'milk'],
    ['Käse', 'cheese'],
    ['Schlüssel', 'key'],
    ['Stuhl', 'chair'],
    ['Tisch', 'table'],
    ['Bett', 'bed'],
    ['Arzt', 'doctor'],
    ['Lehrer', 'teacher'],
    ['Bruder', 'brother'],
    ['Schwester', 'sister'],
    ['Mutter', 'mother'],
    ['Vater', 'father'],
    ['Kind', 'child'],
    ['Freund', 'friend'],
    ['schnell', 'fast'],
    ['langsam', 'slow'],
    ['groß', 'big'],
    ['klein', 'small'],
    ['glücklich', 'happy'],
    ['traurig', 'sad'],
    ['schlafen', 'sleep'],
    ['essen', 'eat'],
    ['trinken', 'drink'],
    ['laufen', 'run'],
    ['schreiben', 'write'],
    ['singen', 'sing'],
  ],
  fr: [
    ['maison', 'house'],
    ['chien', 'dog'],
    ['eau', 'water'],
    ['ville', 'city'],
    ['livre', 'book'],
    ['arbre', 'tree'],
    ['voiture', 'car'],
    ['pain', 'bread'],
    ['fenêtre', 'window'],
    ['porte', 'door'],
    ['école', 'school'],
    ['église', 'church'],
    ['journal', 'newspaper'],
    ['maladie', 'disease'],
    ['printemps', 'spring'],
    ['hiver', 'winter'],
    ['neige', 'snow'],
    ['pluie', 'rain'],
    ['soleil', 'sun'],
    ['lune', 'moon'],
    ['cheval', 'horse'],
    ['oiseau', 'bird'],
    ['poisson', 'fish'],
    ['pomme', 'apple'],
    ['lait', 'milk'],
    ['fromage', 'cheese'],
    ['clé', 'key'],
    ['chaise', 'chair'],
    ['table', 'table'],
    ['lit', 'bed'],
    ['médecin', 'doctor'],
    ['professeur', 'teacher'],
    ['frère', 'brother'],
    ['sœur', 'sister'],
    ['mère', 'mother'],
    ['père', 'father'],
    ['enfant', 'child'],
    ['ami', 'friend'],
    ['rapide', 'fast'],
    ['lent', 'slow'],
    ['grand', 'big'],
    ['petit', 'small'],
    ['heureux', 'happy'],
    ['triste', 'sad'],
    ['dormir', 'sleep'],
    ['manger', 'eat'],
    ['boire', 'drink'],
    ['courir', 'run'],
    ['écrire', 'write'],
    ['chanter', 'sing'],
  ],
  ja: [
    ['家', 'house'],
    ['犬', 'dog'],
    ['水', 'water'],
    ['都市', 'city'],
    ['本', 'book'],
    ['木', 'tree'],
    ['車', 'car'],
    ['パン', 'bread'],
    ['窓', 'window'],
    ['ドア', 'door'],
    ['学校', 'school'],
    ['教会', 'church'],
    ['新聞', 'newspaper'],
    ['病気', 'disease'],
    ['春', 'spring'],
    ['冬', 'winter'],
    ['雪', 'snow'],
    ['雨', 'rain'],
    ['太陽', 'sun'],
    ['月', 'moon'],
    ['馬', 'horse'],
    ['鳥', 'bird'],
    ['魚', 'fish'],
    ['りんご', 'apple'],
    ['牛乳', 'milk'],
    ['チーズ', 'cheese'],
    ['鍵', 'key'],
    ['椅子', 'chair'],
    ['机', 'desk'],
    ['ベッド', 'bed'],
    ['医者', 'doctor'],
    ['先生', 'teacher'],
    ['兄弟', 'brother'],
    ['姉妹', 'sisters'],
    ['母', 'mother'],
    ['父', 'father'],
    ['子供', 'child'],
    ['友達', 'friend'],
    ['速い', 'fast'],
    ['遅い', 'slow'],
    ['大きい', 'big'],
    ['小さい', 'small'],
    ['幸せ', 'happy'],
    ['悲しい', 'sad'],
    ['寝る', 'sleep'],
    ['食べる', 'eat'],
    ['飲む', 'drink'],
    ['走る', 'run'],
    ['書く', 'write'],
    ['歌う', 'sing'],
  ],
};

/**
 * Share of words whose English translation is among their 10 translations as word-translations
 * gives them (core/translation.ts: the nearest English words, phrase rows and entries without a
 * letter skipped).
 */
function sanity(
  model: EmbeddingModel,
  english: EmbeddingModel,
  lang: AlignedLanguage,
): { hits: number; total: number; missing: string[]; misses: string[] } {
  let hits = 0;
  const missing: string[] = [];
  const misses: string[] = [];
  for (const [word, en] of SANITY[lang]) {
    if (model.entryRow(word) < 0) {
      missing.push(word);
      continue;
    }
    const top = translateWords(model, english, [word], 10)[0]!.translations.map((t) => t.word);
    if (top.includes(en)) hits++;
    else misses.push(`${word}->${top[0]}`);
  }
  return { hits, total: SANITY[lang].length, missing, misses };
}

/** German pairs and cross-lingual checks of one set of aligned models (one English base). */
interface AlignedFigures {
  /** Check name -> value, for the models built. */
  values: Map<string, number>;
  /** Language -> the model measured ("id (N words)"). */
  models: Map<AlignedLanguage, string>;
}

/**
 * The cross-lingual r of a model's multilingual mapper bundles (build/mapper/multilingual.ts
 * records it in each bundle's info): check name -> Pearson r.
 */
function mapperChecks(spec: AlignedSpec): Map<string, number> {
  const out = new Map<string, number>();
  for (const key of ['sentiment', 'afinn', 'pattern']) {
    const file = path.join(MAPPERS_DIR, spec.id, `${key}.json`);
    if (!fs.existsSync(file)) continue;
    const info = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      crossLingual?: { metrics: Record<string, { pearsonR: number }> };
    };
    for (const [v, m] of Object.entries(info.crossLingual?.metrics ?? {}))
      out.set(`${spec.language}_mapper_${key}_${v}_r`, m.pearsonR);
  }
  return out;
}

const GERMAN_PAIRS = [
  ['ws353', 'ms_wordsim353-german.txt'],
  ['simlex999', 'ms_simlex-german.txt'],
] as const;

/** The figures of the built models among `specs` (each language's model against its own English base). */
function alignedFigures(specs: Record<AlignedLanguage, AlignedSpec>): AlignedFigures {
  const values = new Map<string, number>();
  const models = new Map<AlignedLanguage, string>();
  const englishModels = new Map<string, EmbeddingModel>();
  let hits = 0;
  let total = 0;
  for (const spec of builtAligned(ALIGNED_LANGUAGES.map((l) => specs[l]))) {
    const model = loadModelFile(alignedModelFile(spec));
    models.set(spec.language, `${spec.id} (${model.size} words, onto ${spec.english.id})`);
    const note = (check: string, value: number): void => void values.set(check, value);
    if (spec.language === 'de')
      for (const [name, file] of GERMAN_PAIRS) {
        const r = wordSim(model, file);
        note(`de_${name}_rho`, +r.rho.toFixed(4));
        note(`de_${name}_coverage`, +r.coverage.toFixed(4));
      }
    let english = englishModels.get(spec.english.id);
    if (!english) englishModels.set(spec.english.id, (english = loadModelFile(modelFile(spec.english.id))));
    const s = sanity(model, english, spec.language);
    hits += s.hits;
    total += s.total;
    note(`${spec.language}_crosslingual_top10`, +(s.hits / s.total).toFixed(4));
    note(`${spec.language}_vocabulary`, model.size);
    for (const [check, r] of mapperChecks(spec)) note(check, r);
    if (s.missing.length || s.misses.length)
      console.log(
        `[${spec.id}] not in model: ${s.missing.join(' ') || '-'}; misses (top-1 shown): ${s.misses.join(' ') || '-'}`,
      );
  }
  if (total > 0) values.set('crosslingual_top10', +(hits / total).toFixed(4));
  return { values, models };
}

/**
 * The aligned models on GloVe and on the default English model, side by side in one table and in
 * the figures (`glove_` prefix for the former). `crosslingual_not_below_glove` is false when a
 * language's default model finds fewer translations than its GloVe-based one.
 */
function compareAlignedModels(): Record<string, number | string | boolean> {
  const old = alignedFigures(ALIGNED_GLOVE);
  const now = alignedFigures(ALIGNED);
  const checks = [...new Set([...old.values.keys(), ...now.values.keys()])];
  console.log('\n| language | on GloVe | on the default English model |');
  console.log('|---|---|---|');
  for (const l of ALIGNED_LANGUAGES)
    console.log(`| ${l} | ${old.models.get(l) ?? '-'} | ${now.models.get(l) ?? '-'} |`);
  console.log('\n| check | on GloVe | on the default English model | change |');
  console.log('|---|---|---|---|');
  const figures: Record<string, number | string | boolean> = {};
  let notBelow = true;
  for (const check of checks) {
    const a = old.values.get(check);
    const b = now.values.get(check);
    const change = a !== undefined && b !== undefined ? (b - a >= 0 ? '+' : '') + (b - a).toFixed(4) : '-';
    console.log(`| ${check} | ${a ?? '-'} | ${b ?? '-'} | ${change} |`);
    if (a !== undefined) figures[`glove_${check}`] = a;
    if (b !== undefined) figures[check] = b;
    const crossLingual = check.endsWith('crosslingual_top10') || check.includes('_mapper_');
    if (crossLingual && a !== undefined && b !== undefined && b < a) notBelow = false;
  }
  figures.crosslingual_not_below_glove = notBelow;
  figures.aligned_models =
    builtAligned()
      .map((s) => s.id)
      .join(',') || 'none';
  return figures;
}

/** The English dev-pair targets of #36 (docs/models-and-kernels.md): the default model beside GloVe. */
const ENGLISH_TARGETS = { ws353: 0.68, simlex999: 0.36 } as const;

/**
 * English WS-353 and SimLex on the default (distilled) model and on en-glove-6b-100d, the
 * baseline of the same run. Figures: en_<set>_rho (default), glove_en_<set>_rho, en_<set>_target_met.
 */
function englishPairs(figures: Record<string, number | string | boolean>): void {
  const models = [loadDefaultModel(), loadModelFile(GLOVE_MODEL_FILE)];
  for (const [name, file] of [
    ['ws353', 'ms_wordsim353-english.txt'],
    ['simlex999', 'ms_simlex-english.txt'],
  ] as const) {
    for (const [k, model] of models.entries()) {
      const r = wordSim(model, file);
      const target = k === 0 ? ` (target >= ${ENGLISH_TARGETS[name]})` : ' (baseline)';
      console.log(
        `| ${name}-en (${r.pairs} pairs) | ${model.manifest.id}${target} | ${r.rho.toFixed(3)} | ${(100 * r.coverage).toFixed(1)}% |`,
      );
      const prefix = k === 0 ? 'en' : 'glove_en';
      figures[`${prefix}_${name}_rho`] = +r.rho.toFixed(4);
      figures[`${prefix}_${name}_coverage`] = +r.coverage.toFixed(4);
      if (k === 0) figures[`en_${name}_target_met`] = r.rho >= ENGLISH_TARGETS[name] ? 1 : 0;
    }
  }
}

async function main(): Promise<void> {
  await ensureKernels();
  await ensureGloveModel();
  await ensureDefaultModel();
  await ensureAlignedModels();
  // The multilingual bundles carry the cross-lingual r compared below.
  await ensureDefaultMappers();
  await ensureMultilingualMappers();
  const figures: Record<string, number | string | boolean> = {};
  console.log('| set | model | Spearman rho | coverage |');
  console.log('|---|---|---|---|');
  englishPairs(figures);
  if (builtAligned().length === 0) console.log(SKIP_LINE);
  Object.assign(figures, compareAlignedModels());
  console.log(JSON.stringify(figures));
}

if (process.argv[1]?.endsWith('multilingual.ts'))
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
