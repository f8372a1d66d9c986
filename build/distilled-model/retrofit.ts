/**
 * Retrofitting (Faruqui et al. 2015, "Retrofitting Word Vectors to Semantic Lexicons"): each
 * word's vector is pulled toward its lexicon neighbours while staying near its own,
 *
 *   q_i <- (q̂_i + mean_{j in N(i)} q_j) / 2      (alpha = 1, beta_ij = 1 / deg(i)),
 *
 * updated in place in row order for a fixed number of iterations (the paper's 10). Words without
 * neighbours keep their vector. Deterministic: same rows and graph, same output.
 */
import type { Synset } from './wordnet';

/** Neighbour lists as CSR: the rows linked to row i are targets[offsets[i] .. offsets[i+1]). */
export interface Graph {
  offsets: Int32Array;
  targets: Int32Array;
}

/**
 * The lexicon graph over the vocabulary: two rows are neighbours when they are lemmas of the same
 * synset, or of two synsets linked as hypernym/hyponym. Each pair once, both directions.
 */
export function lexiconGraph(synsets: readonly Synset[], rowOf: Map<string, number>, rows: number): Graph {
  const rowsOf = synsets.map((s) => s.lemmas.map((l) => rowOf.get(l) ?? -1).filter((r) => r >= 0));
  const edges = new Set<number>(); // pair key a * rows + b (a < b); fits 2^53 for < 94M rows
  const add = (a: number, b: number): void => {
    if (a !== b) edges.add(a < b ? a * rows + b : b * rows + a);
  };
  synsets.forEach((s, i) => {
    const own = rowsOf[i]!;
    for (let x = 0; x < own.length; x++) for (let y = x + 1; y < own.length; y++) add(own[x]!, own[y]!);
    for (const t of s.links) for (const a of own) for (const b of rowsOf[t]!) add(a, b);
  });
  const degree = new Int32Array(rows + 1);
  for (const e of edges) {
    degree[Math.floor(e / rows)]!++;
    degree[e % rows]!++;
  }
  const offsets = new Int32Array(rows + 1);
  for (let i = 0; i < rows; i++) offsets[i + 1] = offsets[i]! + degree[i]!;
  const fill = offsets.slice(0, rows);
  const targets = new Int32Array(offsets[rows]!);
  // Sorted pair keys give each list in ascending order, whatever the Set's insertion order.
  for (const e of [...edges].sort((p, q) => p - q)) {
    const a = Math.floor(e / rows);
    const b = e % rows;
    targets[fill[a]!++] = b;
    targets[fill[b]!++] = a;
  }
  return { offsets, targets };
}

/** Retrofits `vectors` (rows x dims, changed in place) to the graph. */
export function retrofit(vectors: Float32Array, dims: number, graph: Graph, iterations = 10): void {
  const rows = graph.offsets.length - 1;
  // The original vectors q̂ of the rows that have neighbours (the others never change).
  const linked: number[] = [];
  for (let i = 0; i < rows; i++) if (graph.offsets[i + 1]! > graph.offsets[i]!) linked.push(i);
  const original = new Float32Array(linked.length * dims);
  linked.forEach((r, k) => original.set(vectors.subarray(r * dims, (r + 1) * dims), k * dims));
  const sum = new Float64Array(dims);
  for (let it = 0; it < iterations; it++) {
    for (let k = 0; k < linked.length; k++) {
      const i = linked[k]!;
      const from = graph.offsets[i]!;
      const to = graph.offsets[i + 1]!;
      sum.fill(0);
      for (let e = from; e < to; e++) {
        const base = graph.targets[e]! * dims;
        for (let d = 0; d < dims; d++) sum[d] += vectors[base + d]!;
      }
      const inv = 1 / (to - from);
      const base = i * dims;
      const ob = k * dims;
      for (let d = 0; d < dims; d++) vectors[base + d] = (original[ob + d]! + sum[d]! * inv) / 2;
    }
  }
}
