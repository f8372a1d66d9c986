/**
 * What the service says about a model before its bytes: the catalog entry
 * (GET /api/v1/embedding-models/{id}: version, language, mapper bundles) and the artifact paths
 * of the model and its head.
 */
import { ApiError } from '../../core/problem';
import { ProblemError } from './cache';
import type { CachedModelInfo, OfflineProblem } from './protocol';
import { config } from './scorer-config';

export interface CatalogEntry {
  version: string;
  language: string;
  dimensions?: number;
  vocabularySize?: number;
  _embedded: { mappers: Array<{ key: string; variables: string[]; label: string }> };
}

/** The model's catalog entry; null when the service cannot be reached, an ApiError when it has no such model. */
export async function fetchCatalogEntry(id: string): Promise<CatalogEntry | null> {
  let res: Response;
  try {
    res = await fetch(new URL(`/api/v1/embedding-models/${encodeURIComponent(id)}`, config.baseUrl).toString(), {
      headers: config.token ? { authorization: `Bearer ${config.token}` } : {},
      cache: 'no-store',
    });
  } catch {
    return null;
  }
  if (res.status === 404) throw new ApiError('EMBEDDING_MODEL_NOT_FOUND', `No embedding model '${id}'`);
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as Partial<OfflineProblem>;
    throw new ProblemError({
      status: res.status,
      code: body.code ?? 'HTTP_ERROR',
      translationKey: body.translationKey ?? 'httpError',
      title: body.title ?? res.statusText,
      detail: body.detail ?? `GET /api/v1/embedding-models/${id} answered ${res.status}`,
    });
  }
  return (await res.json()) as CatalogEntry;
}

/** The mapper bundles an entry lists, as a cached pointer records them. */
export const catalogBundles = (entry: CatalogEntry): CachedModelInfo['mapperBundles'] =>
  entry._embedded.mappers.map((m) => ({ key: m.key, variables: m.variables, label: m.label }));

/** The model's artifact (GET), and with `/head` appended its head (progressive cold start). */
export const modelPath = (id: string): string => `/api/v1/artifacts/models/${encodeURIComponent(id)}`;
