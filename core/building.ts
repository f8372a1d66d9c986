/**
 * What a local first start is still building (build/start.ts writes it to R2 as BUILDING_KEY while
 * the server already answers; docs/deployment.md "First start"). The Worker lists the models in it
 * with loadingStatus `loading` and refuses what is not there yet with 503 MODEL_LOADING instead of
 * a 404 or 422 that would stop being true minutes later. Absent (production, later starts): nothing
 * is being built.
 */
import type { ModelManifest } from './types';

/** A model being built: the catalog fields known before its build (the rest come with its manifest). */
export type BuildingModel = Pick<ModelManifest, 'id' | 'language' | 'country'> &
  Partial<
    Pick<
      ModelManifest,
      | 'version'
      | 'sources'
      | 'features'
      | 'tag'
      | 'trainingYear'
      | 'trainingMonth'
      | 'labels'
      | 'tokenCount'
      | 'hasTranslation'
      | 'license'
      | 'dimensions'
    >
  >;

export interface BuildingState {
  /** Models not built (or not seeded) yet. */
  models: BuildingModel[];
  /** Languages whose tokenizer data is not built yet. */
  languages: string[];
  /** Models whose mapper bundles, sub-word table or head artifact may still be missing. */
  derived: string[];
}

/** Seconds a client waits before asking again for something being built. */
export const MODEL_LOADING_RETRY_S = 30;

const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/** The state from its JSON; null when it is not one (nothing is then treated as being built). */
export function parseBuildingState(value: unknown): BuildingState | null {
  if (!value || typeof value !== 'object') return null;
  const v = value as Partial<BuildingState>;
  if (!Array.isArray(v.models) || !strings(v.languages) || !strings(v.derived)) return null;
  const models = v.models.filter(
    (m): m is BuildingModel =>
      !!m && typeof m.id === 'string' && typeof m.language === 'string' && typeof m.country === 'string',
  );
  return { models, languages: v.languages, derived: v.derived };
}

/** True when nothing is left to build. */
export function buildingDone(s: BuildingState | null | undefined): boolean {
  return !s || (s.models.length === 0 && s.languages.length === 0 && s.derived.length === 0);
}
