/**
 * `npm run bench:multilingual`: quality of the aligned models (build/aligned-models.ts).
 *
 *   1. Spearman rho and coverage on multilingual WS-353 and SimLex-999 (Leviant & Reichart 2015,
 *      ../shared/data/wordsim-de/): German on the aligned German model; English on the default
 *      model (en-distilled-glove-use-100d, #36 targets WS-353 >= .68, SimLex >= .36) beside
 *      en-glove-6b-100d (the baseline of the same run). Pairs with a missing
 *      word are left out (coverage says how many were scored).
 *   2. Cross-lingual sanity: 50 common German, French and Japanese words each (chosen by hand,
 *      everyday vocabulary, not from the test pairs) and their English translation: is the
 *      translation among the 10 nearest English words of the foreign word's vector?
 *
 * Last line: one JSON object.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  ALIGNED,
  alignedModelFile,
  builtAlignedLanguages,
  ensureAlignedModels,
  SKIP_LINE,
  type AlignedLanguage,
} from '../build/aligned-models';
import { ensureDefaultModel } from '../build/default-model';
import { ensureGloveModel } from '../build/glove-model';
import { GLOVE_MODEL_FILE } from '../build/paths';
import { ensureKernels } from '../build/build-wasm';
import { loadDefaultModel, loadModelFile } from '../build/load-model';
import type { EmbeddingModel } from '../core/model';

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

/** Share of words whose English translation is among the 10 nearest English words of its vector. */
function sanity(
  model: EmbeddingModel,
  english: EmbeddingModel,
  lang: AlignedLanguage,
): { hits: number; total: number; missing: string[]; misses: string[] } {
  let hits = 0;
  const missing: string[] = [];
  const misses: string[] = [];
  for (const [word, en] of SANITY[lang]) {
    const row = model.entryRow(word);
    if (row < 0) {
      missing.push(word);
      continue;
    }
    const top = english.topK(model.vector(row), 10);
    const target = english.rowOf(en);
    if (Array.from(top.rows).includes(target)) hits++;
    else misses.push(`${word}->${english.word(top.rows[0]!)}`);
  }
  return { hits, total: SANITY[lang].length, missing, misses };
}

/** The English dev-pair targets of #36 (docs/models-and-kernels.md): the default model beside GloVe. */
const ENGLISH_TARGETS = { ws353: 0.68, simlex999: 0.36 } as const;

/**
 * English WS-353 and SimLex on the default (distilled) model and on en-glove-6b-100d, the
 * baseline of the same run. Figures: en_<set>_rho (default), glove_en_<set>_rho, en_<set>_target_met.
 */
function englishPairs(figures: Record<string, number | string>): void {
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
  const built = builtAlignedLanguages();
  const figures: Record<string, number | string> = {};
  // The aligned models' own English space (today's aligned ids are projected onto GloVe).
  const english = loadModelFile(GLOVE_MODEL_FILE);
  console.log('| set | model | Spearman rho | coverage |');
  console.log('|---|---|---|---|');
  englishPairs(figures);
  if (!built.includes('de')) console.log(SKIP_LINE);
  const models = new Map<AlignedLanguage, EmbeddingModel>();
  for (const lang of built) models.set(lang, loadModelFile(alignedModelFile(lang)));
  const de = models.get('de');
  if (de) {
    for (const [name, file] of [
      ['ws353', 'ms_wordsim353-german.txt'],
      ['simlex999', 'ms_simlex-german.txt'],
    ] as const) {
      const r = wordSim(de, file);
      console.log(
        `| ${name}-de (${r.pairs} pairs) | ${de.manifest.id} | ${r.rho.toFixed(3)} | ${(100 * r.coverage).toFixed(1)}% |`,
      );
      figures[`de_${name}_rho`] = +r.rho.toFixed(4);
      figures[`de_${name}_coverage`] = +r.coverage.toFixed(4);
    }
  }
  console.log('\n| language | model | words | translation in English top 10 | not in model | misses (top-1 shown) |');
  console.log('|---|---|---|---|---|---|');
  let hits = 0;
  let total = 0;
  for (const [lang, model] of models) {
    const s = sanity(model, english, lang);
    hits += s.hits;
    total += s.total;
    console.log(
      `| ${lang} | ${ALIGNED[lang].id} (${model.size} words) | ${s.total} | ${((100 * s.hits) / s.total).toFixed(0)}% | ${s.missing.join(' ') || '-'} | ${s.misses.join(' ') || '-'} |`,
    );
    figures[`${lang}_crosslingual_top10`] = +(s.hits / s.total).toFixed(4);
    figures[`${lang}_vocabulary`] = model.size;
  }
  if (total > 0) figures.crosslingual_top10 = +(hits / total).toFixed(4);
  figures.aligned_models = built.join(',') || 'none';
  console.log(JSON.stringify(figures));
}

if (process.argv[1]?.endsWith('multilingual.ts'))
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
