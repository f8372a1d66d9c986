/**
 * Hostile-text bench (issue 12, defect 3): tokenize() time of the inputs that were quadratic
 * ("." x 100,000; 40,000 CJK characters with language en; "a@" x 50,000; 100,000 letters without
 * white space) beside the baselines of the same run, ordinary English prose of the same length
 * and "a " x 50,000 (as many tokens as "a@" x 50,000),
 * and the growth from half to full length (about 2 for linear work, about 4 for quadratic).
 * Run alone: `npx tsx bench/hostile-text.ts`; part of `npm run bench`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureLanguageData, languageFile } from '../build/lang-data';
import { parseLanguageData, tokenize, type LanguageData } from '../core/tokenizer';
import { runIfMain } from './main';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHARS = 100_000;

function prose(): string {
  const gold = JSON.parse(fs.readFileSync(path.join(here, '..', 'test', 'gold', 'tokens-en.json'), 'utf8')) as {
    sentences: Array<{ text: string }>;
  };
  const base = gold.sentences.map((s) => s.text).join(' ');
  let text = '';
  while (text.length < CHARS) text += `${base} `;
  return text.slice(0, CHARS);
}

const fill = (unit: string, chars: number): string => unit.repeat(Math.ceil(chars / unit.length)).slice(0, chars);

/** Median of 3 runs, in ms. */
function ms(data: LanguageData, text: string): number {
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    tokenize(text, data);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[1];
}

export async function run(): Promise<Record<string, number>> {
  await ensureLanguageData();
  const en = parseLanguageData(fs.readFileSync(languageFile('en')));
  tokenize(prose(), en); // warm-up
  const figures: Record<string, number> = { hostile_baseline_prose_100k_ms: +ms(en, prose()).toFixed(1) };
  // Second baseline: as many tokens as "a@" x 50,000 gives, in ordinary spaced text.
  figures.hostile_baseline_a_space_100k_ms = +ms(en, fill('a ', CHARS)).toFixed(1);
  figures.hostile_baseline_prose_tokens = tokenize(prose(), en).tokenCount;
  const inputs: Array<[string, string, number]> = [
    ['dots', '.', CHARS],
    ['cjk', '漢字かな', 40_000],
    ['at_signs', 'a@', CHARS],
    ['letters', 'a', CHARS],
  ];
  for (const [name, unit, chars] of inputs) {
    const full = ms(en, fill(unit, chars));
    const half = ms(en, fill(unit, chars / 2));
    figures[`hostile_${name}_ms`] = +full.toFixed(1);
    figures[`hostile_${name}_growth_half_to_full`] = +(full / Math.max(half, 0.01)).toFixed(2);
    console.log(
      `[bench hostile-text] ${name} (${chars} chars, en): ${full.toFixed(1)} ms, half length ${half.toFixed(1)} ms; prose ${figures.hostile_baseline_prose_100k_ms} ms`,
    );
  }
  return figures;
}

runIfMain(import.meta.url, run);
