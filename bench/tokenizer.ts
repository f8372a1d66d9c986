/**
 * Tokenizer bench: tokens per second per language (our tokenize() with lemmas, stop words and
 * synonyms) against plain Intl.Segmenter word segmentation of the same text, and the memory a
 * language takes once loaded (file bytes held as one ArrayBuffer + JS heap of the parsed view).
 * Run alone: `npx tsx bench/tokenizer.ts`; part of `npm run bench`.
 */
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { ensureLanguageData, languageFile } from '../build/lang-data';
import { parseLanguageData, SUPPORTED_LANGUAGES, tokenize, type LanguageData } from '../core/tokenizer';
import { runIfMain } from './main';

const here = path.dirname(fileURLToPath(import.meta.url));
/** About the size of a long article: a realistic request (limit: 100,000 characters). */
const TARGET_CHARS = 20_000;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function corpus(language: string): string {
  const gold = JSON.parse(
    fs.readFileSync(path.join(here, '..', 'test', 'gold', `tokens-${language}.json`), 'utf8'),
  ) as { sentences: Array<{ text: string }> };
  const base = gold.sentences.map((s) => s.text).join(language === 'ja' ? '' : ' ');
  let text = '';
  while (text.length < TARGET_CHARS) text += base + (language === 'ja' ? '' : ' ');
  return text;
}

function timeIt(fn: () => number, minMs = 1500): { perSecond: number } {
  fn(); // warm-up
  let units = 0;
  const t0 = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    units += fn();
    elapsed = performance.now() - t0;
  }
  return { perSecond: (units * 1000) / elapsed };
}

export async function run(): Promise<Record<string, number | string>> {
  await ensureLanguageData();
  const figures: Record<string, number | string> = {};
  const loaded: LanguageData[] = [];
  for (const l of SUPPORTED_LANGUAGES) {
    const bytes = fs.readFileSync(languageFile(l));
    gc();
    const heap0 = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    const data = parseLanguageData(new Uint8Array(bytes).buffer);
    const loadMs = performance.now() - t0;
    gc();
    const heapDelta = Math.max(0, process.memoryUsage().heapUsed - heap0);
    loaded.push(data);

    const text = corpus(l);
    const ours = timeIt(() => tokenize(text, data).tokenCount);
    const seg = new Intl.Segmenter(l, { granularity: 'word' });
    const plain = timeIt(() => {
      let n = 0;
      for (const s of seg.segment(text)) if (s.isWordLike) n++;
      return n;
    });
    figures[`tokenizer_${l}_tokens_per_s`] = Math.round(ours.perSecond);
    figures[`tokenizer_${l}_intl_segmenter_tokens_per_s`] = Math.round(plain.perSecond);
    figures[`tokenizer_${l}_file_mb`] = +(bytes.byteLength / 1e6).toFixed(2);
    figures[`tokenizer_${l}_memory_mb`] = +((bytes.byteLength + heapDelta) / 1e6).toFixed(2);
    figures[`tokenizer_${l}_load_ms`] = +loadMs.toFixed(1);
    console.log(
      `[bench tokenizer] ${l}: ${Math.round(ours.perSecond)} tokens/s (Intl.Segmenter ${Math.round(plain.perSecond)}), ` +
        `file ${(bytes.byteLength / 1e6).toFixed(2)} MB, loaded ${((bytes.byteLength + heapDelta) / 1e6).toFixed(2)} MB, parse ${loadMs.toFixed(1)} ms`,
    );
  }
  return figures;
}

runIfMain(import.meta.url, run);
