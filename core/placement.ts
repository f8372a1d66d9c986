/**
 * Placement of models on model hosts (docs/architecture.md "Model hosts"): the build packs the
 * catalog's models into hosts whose isolates each hold their models within the per-isolate memory
 * budget (build/placement.ts writes it), and the API Worker routes each model's scoring work to
 * its host (worker/hosts/router.ts). Plain data and pure functions: the build, the Worker and the
 * tests share them.
 */
import { placementBytes, type Footprint } from './footprint';
import { STATS_CACHE_BYTES } from './engine';
import { EXPANSION_CACHE_BYTES } from './scoring/common';

/**
 * A model as placement sees it: its footprint. A projected model needs no copy of its English
 * companion beside it: its host fetches the few companion rows a request needs from the
 * companion's host (core/rows.ts), so each model is placed once.
 */
export interface PlacementModel extends Footprint {
  id: string;
  features?: readonly string[];
  /** Bytes of its mapper bundles (kept parsed beside it when the budget allows). */
  mapperBytes?: number;
}

/**
 * Room a placed model keeps for its caches (core/engine.ts: normalization statistics up to
 * STATS_CACHE_BYTES, seed expansions up to EXPANSION_CACHE_BYTES) besides its parsed mapper
 * bundles: a host packed to its budget by the models alone would evict nothing but re-read its
 * bundles and recompute its statistics on every request.
 */
export const CACHE_RESERVE_BYTES = STATS_CACHE_BYTES + EXPANSION_CACHE_BYTES;

/** What a model is placed by: its placement bytes, its caches and bundles. */
export function placedBytes(m: PlacementModel): number {
  return placementBytes(m) + CACHE_RESERVE_BYTES + (m.mapperBytes ?? 0);
}

export interface PlacedHost {
  /** Worker script name suffix and service binding: host `n` is bound as HOST_n. */
  name: string;
  binding: string;
  /** The models its isolates hold. */
  models: string[];
  /** Languages whose data its isolates hold (tokenizations of that language are routed here). */
  languages: string[];
  /** Placed bytes of its models (with their cache room) plus their language data, at or below budgetBytes. */
  bytes: number;
}

export interface Placement {
  budgetBytes: number;
  hosts: PlacedHost[];
  /** Model id -> the binding of the host that answers for it. */
  models: Record<string, string>;
  /** Language -> the binding of the host that answers its tokenizations. */
  languages: Record<string, string>;
}

export class PlacementError extends Error {}

/**
 * First-fit decreasing: models by bytes (their own plus their language data), largest first, each
 * into the first host where it fits the budget, else into a new host. A model that cannot fit an
 * empty host is refused (PlacementError): it needs row sharding, which is not built yet.
 */
export function planPlacement(
  models: readonly PlacementModel[],
  languageBytes: ReadonlyMap<string, number>,
  budgetBytes: number,
): Placement {
  const all = new Map(models.map((m) => [m.id, m]));
  const own = (m: PlacementModel): number => placedBytes(m) + (languageBytes.get(m.language) ?? 0);
  const bytesOf = (ids: ReadonlySet<string>): number => {
    let n = 0;
    const languages = new Set<string>();
    for (const id of ids) {
      const m = all.get(id)!;
      n += placedBytes(m);
      languages.add(m.language);
    }
    for (const l of languages) n += languageBytes.get(l) ?? 0;
    return n;
  };
  const hosts: Array<{ models: Set<string> }> = [];
  const primary: Record<string, number> = Object.create(null);
  const order = [...models].sort((a, b) => own(b) - own(a) || (a.id < b.id ? -1 : 1));
  for (const m of order) {
    const group = [m.id];
    let at = hosts.findIndex((h) => bytesOf(new Set([...h.models, ...group])) <= budgetBytes);
    if (at < 0) {
      if (bytesOf(new Set(group)) > budgetBytes)
        throw new PlacementError(
          `${m.id} needs ${bytesOf(new Set(group))} bytes, over the ${budgetBytes}-byte budget of one isolate (row sharding is not built yet)`,
        );
      hosts.push({ models: new Set() });
      at = hosts.length - 1;
    }
    for (const id of group) hosts[at]!.models.add(id);
    primary[m.id] = at;
  }
  const placed: PlacedHost[] = hosts.map((h, i) => {
    const ids = [...h.models].sort();
    return {
      name: `host-${i}`,
      binding: `HOST_${i}`,
      models: ids,
      languages: [...new Set(ids.map((id) => all.get(id)!.language))].sort(),
      bytes: bytesOf(h.models),
    };
  });
  const modelsOut: Record<string, string> = {};
  for (const id of Object.keys(primary).sort()) modelsOut[id] = placed[primary[id]!]!.binding;
  // A language's tokenizations go to the host of its first model (by id).
  const languagesOut: Record<string, string> = {};
  for (const id of Object.keys(primary).sort()) {
    const l = all.get(id)!.language;
    languagesOut[l] ??= placed[primary[id]!]!.binding;
  }
  return { budgetBytes, hosts: placed, models: modelsOut, languages: languagesOut };
}
