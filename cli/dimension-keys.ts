/**
 * `--dimension-keys name`: the output's per-dimension objects keyed by the names the user gave the
 * dimensions ("food") instead of the interface's ids ("1"). The interface keys dimensionScores,
 * explanation.dimensions and word-scores' averages.dimensionScores by the id written as a string;
 * by default the CLI prints them unchanged. goalScoreFactors already carries the name (`field`)
 * beside the id and stays as it is.
 *
 * The names are those of the request's dimensions (-d NAME=..., --dimensions, --request); a
 * dimension without one keeps its id. Keys that would stand for two dimensions (two dimensions
 * of the same name, or a name equal to an unnamed dimension's id) are refused before anything is
 * scored.
 */
import { UsageError } from './args';

export type DimensionKeys = 'id' | 'name';

/** The option's value: 'id' (default) or 'name'. */
export function dimensionKeysOption(v: unknown): DimensionKeys {
  if (v === undefined || v === 'id') return 'id';
  if (v === 'name') return 'name';
  throw new UsageError(`--dimension-keys must be 'id' or 'name', not '${String(v)}'`);
}

/**
 * The output key of each dimension id of the request (id as a string -> name, or id when unnamed);
 * null when the keys stay ids.
 */
export function dimensionKeyMap(keys: DimensionKeys, dimensions: unknown): Map<string, string> | null {
  if (keys === 'id') return null;
  const map = new Map<string, string>();
  const owner = new Map<string, string>();
  for (const d of Array.isArray(dimensions) ? (dimensions as unknown[]) : []) {
    if (typeof d !== 'object' || d === null) continue;
    const { id: rawId, name } = d as { id?: unknown; name?: unknown };
    const id = String(rawId);
    // A repeated id is the service's to refuse (422), with its own message.
    if (map.has(id)) continue;
    const key = typeof name === 'string' && name.trim() !== '' ? name : id;
    const other = owner.get(key);
    if (other !== undefined)
      throw new UsageError(
        `--dimension-keys name: dimensions ${other} and ${id} would both be keyed '${key}'; give each dimension its own name`,
      );
    owner.set(key, id);
    map.set(id, key);
  }
  return map;
}

/** `scores` (an object keyed by dimension id) keyed by `map`; a null-prototype object, since names are the user's. */
function rekey(scores: unknown, map: Map<string, string>): unknown {
  if (typeof scores !== 'object' || scores === null) return scores;
  const out = Object.create(null) as Record<string, unknown>;
  for (const [id, value] of Object.entries(scores)) out[map.get(id) ?? id] = value;
  return out;
}

/** A scored text or word (or word-scores' averages) with its per-dimension objects keyed by `map`. */
export function withDimensionKeys<T extends Record<string, unknown>>(scored: T, map: Map<string, string> | null): T {
  if (!map) return scored;
  const out: Record<string, unknown> = { ...scored };
  if ('dimensionScores' in scored) out.dimensionScores = rekey(scored.dimensionScores, map);
  const explanation = scored.explanation as { dimensions?: unknown } | undefined;
  if (explanation && typeof explanation === 'object' && 'dimensions' in explanation)
    out.explanation = { ...explanation, dimensions: rekey(explanation.dimensions, map) };
  return out as T;
}
