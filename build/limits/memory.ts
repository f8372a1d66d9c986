/**
 * Peak isolate memory of each model host, computed (not measured) from the placement: a host's
 * placed bytes (core/placement.ts, what the per-isolate budget counts: each model's WASM matrix and
 * scratch, the vocabulary it keeps, its cache reserve and mapper bundles, and its language data),
 * against the isolate's 128 MiB. Over it the isolate is killed: hard.
 *
 * Beside it, the load peak: a host reads a model's whole artifact into one buffer before it
 * builds the matrix (worker/sources/models.ts), and the budget's admission does not count that
 * buffer. With every other model loaded first, the largest artifact's buffer comes on top of the
 * placed bytes. That row warns only: it is an upper bound (the order may differ, and the buffer is
 * collected once the matrix is built), and the runtime's own heap is in neither figure.
 */
import type { Placement, PlacementModel } from '../../core/placement';
import { ISOLATE_MEMORY_BYTES, WORKERS_LIMITS_URL } from './figures';
import { formatValue, row, type LimitRow } from './table';

export function memoryRows(placement: Placement, models: readonly PlacementModel[]): LimitRow[] {
  const artifactOf = new Map(models.map((m) => [m.id, m.artifactBytes]));
  const source = `${WORKERS_LIMITS_URL}#memory`;
  const mb = (n: number): string => formatValue(n, 'bytes');
  return placement.hosts.flatMap((h) => {
    const largest = Math.max(0, ...h.models.map((id) => artifactOf.get(id) ?? 0));
    const held = [...h.models, ...h.shards].join(', ') || 'nothing';
    return [
      row({
        check: 'memory',
        subject: h.name,
        value: h.bytes,
        unit: 'bytes',
        measured: false,
        limit: ISOLATE_MEMORY_BYTES,
        source,
        hard: true,
        note: `placed bytes of ${held} with languages ${h.languages.join(', ') || 'none'} (core/placement.ts; budget ${mb(placement.budgetBytes)}): computed, not measured`,
      }),
      row({
        check: 'memory load peak',
        subject: h.name,
        value: h.bytes + largest,
        unit: 'bytes',
        measured: false,
        limit: ISOLATE_MEMORY_BYTES,
        source,
        hard: false,
        note: `placed bytes + the largest artifact read whole while loading (${mb(largest)}); computed upper bound, not measured`,
      }),
    ];
  });
}
