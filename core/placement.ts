/**
 * Placement of models on model hosts (docs/architecture.md "Model hosts"): the build packs the
 * catalog's models into hosts whose isolates each hold their models within the per-isolate memory
 * budget (build/placement.ts writes it), and the API Worker routes each model's scoring work to
 * its host (worker/hosts/router.ts). Plain data and pure functions: the build, the Worker and the
 * tests share them.
 */
import { ISOLATE_MEMORY_BYTES, KERNELS_BASE_BYTES, placementBytes, type Footprint } from './footprint';
import { rowCacheBytes } from './sharded-index';
import { STATS_CACHE_BYTES } from './engine';
import { EXPANSION_CACHE_BYTES } from './scoring/dimensions';
import { englishCompanionOf } from './projection';

/**
 * A model as placement sees it: its footprint. A projected model needs no copy of its English
 * companion beside it: its host fetches the few companion rows a request needs from the
 * companion's host (core/rows.ts), so each model is placed once.
 */
export interface PlacementModel extends Footprint {
  id: string;
  features?: readonly string[];
  /** An aligned model's English model (its manifest's; core/projection.ts englishCompanionOf). */
  englishModelId?: string;
  /** Bytes of its mapper bundles (kept parsed beside it when the budget allows). */
  mapperBytes?: number;
  /** Bytes of its sub-word table artifact (core/subword.ts), loaded by the first request that opts in. */
  subwordTableBytes?: number;
}

/**
 * Room a placed model keeps for its caches (core/engine.ts: normalization statistics up to
 * STATS_CACHE_BYTES, seed expansions up to EXPANSION_CACHE_BYTES) besides its parsed mapper
 * bundles: a host packed to its budget by the models alone would evict nothing but re-read its
 * bundles and recompute its statistics on every request.
 */
export const CACHE_RESERVE_BYTES = STATS_CACHE_BYTES + EXPANSION_CACHE_BYTES;

/** What a model is placed by: its placement bytes, its caches, bundles and sub-word table (in a kernels memory of its own). */
export function placedBytes(m: PlacementModel): number {
  const table = m.subwordTableBytes ? m.subwordTableBytes + KERNELS_BASE_BYTES : 0;
  return placementBytes(m) + CACHE_RESERVE_BYTES + (m.mapperBytes ?? 0) + table;
}

/**
 * A model larger than one isolate, row-sharded (core/sharded-index.ts): its parts (row ranges,
 * each an artifact `<id>/rows-<start>-<end>`) and its word map (`<id>/words`), each placed on a
 * host like a model. The map's host answers for the model (it coordinates the parts).
 */
export interface ShardLayout {
  map: { id: string; binding: string };
  parts: Array<{ id: string; start: number; end: number; binding: string }>;
}

export interface PlacedHost {
  /** Worker script name suffix and service binding: host `n` is bound as HOST_n. */
  name: string;
  binding: string;
  /** The models its isolates hold. */
  models: string[];
  /** Parts and word maps of sharded models its isolates hold (artifact ids). */
  shards: string[];
  /** Languages whose data its isolates hold (tokenizations of that language are routed here). */
  languages: string[];
  /** Placed bytes of its models (with their cache room), shards and their language data, at or below budgetBytes. */
  bytes: number;
}

export interface Placement {
  budgetBytes: number;
  hosts: PlacedHost[];
  /** Model id -> the binding of the host that answers for it (a sharded model's: its map's host). */
  models: Record<string, string>;
  /** Language -> the binding of the host that answers its tokenizations. */
  languages: Record<string, string>;
  /** Sharded models by id. */
  sharded: Record<string, ShardLayout>;
  /**
   * Aligned model id -> its English companion's id, placed too: its host fetches the companion's
   * rows from the companion's host, and a translation without a target is routed there.
   */
  companions: Record<string, string>;
}

export class PlacementError extends Error {}

/** Artifact id of a sharded model's word map. */
export const mapId = (modelId: string): string => `${modelId}/words`;
/** Artifact id of the part of a sharded model holding rows [start, end). */
export const partId = (modelId: string, start: number, end: number): string => `${modelId}/rows-${start}-${end}`;

/** The footprint of rows [0, n) of a model as an artifact of their own (a part). */
function partFootprint(m: PlacementModel, n: number): Footprint {
  const bytesPerRow = m.vocabularySize > 0 ? m.artifactBytes / m.vocabularySize : 0;
  return { ...m, vocabularySize: n, artifactBytes: Math.ceil(bytesPerRow * n) };
}

/** Bytes of a word map's artifact: the model's with a one-byte placeholder row for each word. */
function mapArtifactBytes(m: PlacementModel): number {
  return Math.max(0, m.artifactBytes - m.vocabularySize * (m.dimensions - 1));
}

/**
 * Bytes of a sharded model's word map on its host, language data aside: the vocabulary sections of
 * the artifact with a one-byte placeholder row, the model's caches and bundles, and the row cache
 * its coordinator fetches the parts' rows into.
 */
export function mapBytes(m: PlacementModel): number {
  const artifactBytes = mapArtifactBytes(m);
  return (
    placementBytes({ ...m, dimensions: 1, artifactBytes }) +
    CACHE_RESERVE_BYTES +
    (m.mapperBytes ?? 0) +
    rowCacheBytes(m.dimensions)
  );
}

/**
 * Bytes a part is placed by: its placement bytes plus its artifact's, which its host reads whole
 * before it builds the matrix (the load's peak). A part is as large as a budget allows, so that
 * room is kept on its host rather than shared with another part loading beside it.
 */
export function partBytes(m: PlacementModel, rows: number): number {
  const f = partFootprint(m, rows);
  return placementBytes(f) + f.artifactBytes;
}

/**
 * The parts of a model over budget: the fewest equal row ranges of which each fits the budget on
 * its own, load included (partBytes; the count comes from the budget, not from configuration).
 */
export function shardRows(m: PlacementModel, budgetBytes: number): Array<{ start: number; end: number }> {
  const n = m.vocabularySize;
  const fits = (rows: number): boolean => partBytes(m, rows) <= budgetBytes;
  if (!fits(1)) throw new PlacementError(`${m.id}: one row does not fit the ${budgetBytes}-byte budget of an isolate`);
  let lo = 1;
  let hi = n;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  const count = Math.ceil(n / lo);
  const per = Math.ceil(n / count);
  return Array.from({ length: count }, (_, i) => ({ start: i * per, end: Math.min(n, (i + 1) * per) }));
}

/** One thing placed on a host: a model, a part or a word map. */
interface Item {
  id: string;
  /** Bytes without language data. */
  bytes: number;
  /** The language whose data it needs beside it (models and maps tokenize; parts do not). */
  language: string | null;
  /**
   * Bytes held only while it loads: a whole model's or a word map's artifact, read whole before
   * its rows go into WASM memory (a part's bytes include its artifact already: partBytes).
   */
  load: number;
}

/**
 * First-fit decreasing: models by bytes (their own plus their language data), largest first, each
 * into the first host where it fits the budget, else into a new host. A model that cannot fit an
 * empty host is row-sharded: its parts (shardRows) and its word map are placed as items of their
 * own. A model whose word map alone exceeds the budget is refused (PlacementError).
 */
export function planPlacement(
  models: readonly PlacementModel[],
  languageBytes: ReadonlyMap<string, number>,
  budgetBytes: number,
): Placement {
  const items: Item[] = [];
  const layouts = new Map<string, { map: string; parts: Array<{ id: string; start: number; end: number }> }>();
  const withLanguage = (i: Item): number => i.bytes + (i.language ? (languageBytes.get(i.language) ?? 0) : 0);
  for (const m of models) {
    const whole: Item = { id: m.id, bytes: placedBytes(m), language: m.language, load: m.artifactBytes };
    if (withLanguage(whole) <= budgetBytes) {
      items.push(whole);
      continue;
    }
    const map: Item = { id: mapId(m.id), bytes: mapBytes(m), language: m.language, load: mapArtifactBytes(m) };
    if (withLanguage(map) > budgetBytes)
      throw new PlacementError(
        `${m.id}: its word map needs ${withLanguage(map)} bytes, over the ${budgetBytes}-byte budget of one isolate`,
      );
    const parts = shardRows(m, budgetBytes).map((r) => ({ ...r, id: partId(m.id, r.start, r.end) }));
    items.push(map);
    for (const p of parts) items.push({ id: p.id, bytes: partBytes(m, p.end - p.start), language: null, load: 0 });
    layouts.set(m.id, { map: map.id, parts });
  }
  const byId = new Map(items.map((i) => [i.id, i]));
  const bytesOf = (ids: Iterable<string>): number => {
    let n = 0;
    const languages = new Set<string>();
    for (const id of ids) {
      const i = byId.get(id)!;
      n += i.bytes;
      if (i.language) languages.add(i.language);
    }
    for (const l of languages) n += languageBytes.get(l) ?? 0;
    return n;
  };
  // A host's isolate holds its placed bytes within the budget, and while one of its models loads,
  // that model's artifact besides: the two together stay within the isolate's memory.
  const fits = (ids: string[]): boolean => {
    const bytes = bytesOf(ids);
    return bytes <= budgetBytes && bytes + Math.max(0, ...ids.map((id) => byId.get(id)!.load)) <= ISOLATE_MEMORY_BYTES;
  };
  const hosts: Array<Set<string>> = [];
  const hostOf = new Map<string, number>();
  const order = [...items].sort((a, b) => withLanguage(b) - withLanguage(a) || (a.id < b.id ? -1 : 1));
  for (const item of order) {
    let at = hosts.findIndex((h) => fits([...h, item.id]));
    if (at < 0) {
      hosts.push(new Set());
      at = hosts.length - 1;
    }
    hosts[at]!.add(item.id);
    hostOf.set(item.id, at);
  }
  const placed: PlacedHost[] = hosts.map((h, i) => {
    const ids = [...h].sort();
    return {
      name: `host-${i}`,
      binding: `HOST_${i}`,
      models: ids.filter((id) => !id.includes('/')),
      shards: ids.filter((id) => id.includes('/')),
      languages: [...new Set(ids.flatMap((id) => byId.get(id)!.language ?? []))].sort(),
      bytes: bytesOf(h),
    };
  });
  const bindingOf = (itemId: string): string => placed[hostOf.get(itemId)!]!.binding;
  const ids = models.map((m) => m.id).sort();
  const modelsOut: Record<string, string> = {};
  const sharded: Record<string, ShardLayout> = {};
  for (const id of ids) {
    const layout = layouts.get(id);
    modelsOut[id] = bindingOf(layout ? layout.map : id);
    if (layout)
      sharded[id] = {
        map: { id: layout.map, binding: bindingOf(layout.map) },
        parts: layout.parts.map((p) => ({ ...p, binding: bindingOf(p.id) })),
      };
  }
  // A language's tokenizations go to the host of its first model (by id).
  const languagesOut: Record<string, string> = {};
  const all = new Map(models.map((m) => [m.id, m]));
  for (const id of ids) languagesOut[all.get(id)!.language] ??= modelsOut[id]!;
  return {
    budgetBytes,
    hosts: placed,
    models: modelsOut,
    languages: languagesOut,
    sharded,
    companions: companionsOf(models),
  };
}

/**
 * Each aligned model's English companion. A companion missing from the models is refused: its
 * host would load the whole companion beside its own models to read a few seed rows.
 */
function companionsOf(models: readonly PlacementModel[]): Record<string, string> {
  const ids = new Set(models.map((m) => m.id));
  const out: Record<string, string> = {};
  for (const m of [...models].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const companion = englishCompanionOf(m);
    if (!companion || companion === m.id) continue;
    if (!ids.has(companion))
      throw new PlacementError(`${m.id}: its English companion ${companion} is not among the models placed`);
    out[m.id] = companion;
  }
  return out;
}

/**
 * What the Workers route by, as the PLACEMENT var carries it: hosts by number (host n is
 * `host-n`, bound as HOST_n), and each sharded model as its map's host then each part's end row
 * and host. A Worker var holds at most 5 KB: the placement file's sizes, names and ids are left
 * out (they follow from these), so a deployment of ten sharded 1.5M-word models fits.
 */
export interface RoutingPlacement {
  /** Number of hosts. */
  hosts: number;
  models: Record<string, number>;
  languages: Record<string, number>;
  /** Model id -> [map host, end of part 0, its host, end of part 1, its host, ...]. */
  sharded: Record<string, number[]>;
  /** Aligned model id -> its English companion's id (absent in vars written before it). */
  companions?: Record<string, string>;
}

/** Bytes a Worker var may hold (Cloudflare's limit). */
export const PLACEMENT_VAR_LIMIT_BYTES = 5_120;

const hostNumber = (binding: string): number => Number(binding.slice('HOST_'.length));

/** The routing form of a placement. */
export function routingPlacement(p: Placement): RoutingPlacement {
  const numbers = (r: Record<string, string>) =>
    Object.fromEntries(Object.entries(r).map(([k, b]) => [k, hostNumber(b)]));
  return {
    hosts: p.hosts.length,
    models: numbers(p.models),
    languages: numbers(p.languages),
    sharded: Object.fromEntries(
      Object.entries(p.sharded ?? {}).map(([id, s]) => [
        id,
        [hostNumber(s.map.binding), ...s.parts.flatMap((x) => [x.end, hostNumber(x.binding)])],
      ]),
    ),
    companions: p.companions ?? {},
  };
}

/** The PLACEMENT var of a placement; throws when it would exceed a Worker var's 5 KB. */
export function placementVar(p: Placement): string {
  const text = JSON.stringify(routingPlacement(p));
  if (new TextEncoder().encode(text).length > PLACEMENT_VAR_LIMIT_BYTES)
    throw new PlacementError(
      `the placement's routing needs ${text.length} bytes, over a Worker var's ${PLACEMENT_VAR_LIMIT_BYTES}: place fewer models per deployment`,
    );
  return text;
}

/** The routes of a PLACEMENT var: every host with what it holds, each model's host, each sharded model's layout. */
export function routesFromVar(text: string): {
  hosts: Array<{ name: string; binding: string; models: string[] }>;
  models: Map<string, string>;
  languages: Map<string, string>;
  sharded: Map<string, ShardLayout>;
  companions: Map<string, string>;
} {
  const r = JSON.parse(text) as RoutingPlacement;
  const binding = (n: number): string => `HOST_${n}`;
  const held: string[][] = Array.from({ length: r.hosts }, () => []);
  const sharded = new Map<string, ShardLayout>();
  for (const [id, [map, ...rest]] of Object.entries(r.sharded)) {
    const parts: ShardLayout['parts'] = [];
    for (let i = 0, start = 0; i + 1 < rest.length; i += 2) {
      const end = rest[i]!;
      parts.push({ id: partId(id, start, end), start, end, binding: binding(rest[i + 1]!) });
      held[rest[i + 1]!]?.push(partId(id, start, end));
      start = end;
    }
    held[map!]?.push(mapId(id));
    sharded.set(id, { map: { id: mapId(id), binding: binding(map!) }, parts });
  }
  for (const [id, n] of Object.entries(r.models)) if (!sharded.has(id)) held[n]?.push(id);
  return {
    hosts: held.map((models, n) => ({ name: `host-${n}`, binding: binding(n), models: models.sort() })),
    models: new Map(Object.entries(r.models).map(([id, n]) => [id, binding(n)])),
    languages: new Map(Object.entries(r.languages).map(([l, n]) => [l, binding(n)])),
    sharded,
    companions: new Map(Object.entries(r.companions ?? {})),
  };
}
