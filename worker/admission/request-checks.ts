/**
 * Everything a request decides alone, checked in the API Worker before admission and before any
 * model work (decisions.md "Admission and cost"): model ids against the catalog, mapper keys
 * against the model's mappers in the catalog, stored dimension ids in D1, translation targets,
 * and (core/scoring/request-checks.ts) the dimensions' shape and the goal's references. Only what
 * needs the model's own data (which seeds are in its vocabulary) is decided later. The engine
 * keeps its own checks: the same refusals, for the browser, the CLI and a stale catalog.
 */
import type { Context } from 'hono';
import { ApiError, excerpt } from '../../core/problem';
import { splitMapperVariableId } from '../../core/mapper-bundle';
import { R2_KEYS } from '../../core/storage-keys';
import { checkSameSpace, translationTarget } from '../../core/translation';
import { checkScoringRequest } from '../../core/scoring/request-checks';
import type { DimensionRequest, GoalConfig } from '../../core/requests';
import type { AppEnv } from '../env';
import { catalogModel } from '../catalog/lookup';
import { derivedPending, modelLoading } from '../catalog/building';
import type { Catalog } from '../catalog/store';
import { storedSeeds } from '../dimensions/store';
import { waitUntilOf } from '../sources';

/**
 * Each mapper key names a variable of one of the model's bundles in the catalog: 422
 * MAPPER_NOT_FOUND, or MAPPER_MODEL_MISMATCH when only other models have it (the engine's
 * refusals). A bundle the cached catalog does not list yet but R2 holds is left to the engine.
 */
async function checkMapperKeys(
  c: Context<AppEnv>,
  catalog: Catalog,
  modelId: string,
  keys: readonly string[] | undefined,
  field: string,
): Promise<void> {
  if (!keys?.length) return;
  const ofModel = new Map<string, ReadonlySet<string>>();
  for (const b of catalog.mappers) if (b.modelId === modelId) ofModel.set(b.key, new Set(b.variables));
  const inR2 = new Map<string, Promise<boolean>>();
  for (const [i, id] of keys.entries()) {
    const split = splitMapperVariableId(id);
    if (split && ofModel.get(split.bundleKey)?.has(split.variable)) continue;
    if (split && !ofModel.has(split.bundleKey)) {
      let head = inR2.get(split.bundleKey);
      if (!head) {
        head = c.env.ARTIFACTS.head(R2_KEYS.mapper(modelId, split.bundleKey)).then((o) => o !== null);
        inR2.set(split.bundleKey, head);
      }
      if (await head) continue;
    }
    // Its mapper bundles still being built by a local first start: not an unknown mapper yet.
    if (derivedPending(catalog, modelId))
      throw modelLoading(`The mapper bundles of embedding model '${excerpt(modelId)}'`);
    const elsewhere = split
      ? catalog.mappers
          .filter((b) => b.key === split.bundleKey && b.variables.includes(split.variable) && b.modelId !== modelId)
          .map((b) => b.modelId)
      : [];
    if (elsewhere.length > 0)
      throw new ApiError(
        'MAPPER_MODEL_MISMATCH',
        `Mapper '${id}' exists for ${elsewhere.map((m) => `'${m}'`).join(', ')}, not for embedding model '${modelId}'`,
        { errors: [{ path: `${field}.${i}`, message: 'mapper belongs to another embedding model' }] },
      );
    throw new ApiError('MAPPER_NOT_FOUND', `No mapper '${id}' for embedding model '${modelId}'`, {
      errors: [{ path: `${field}.${i}`, message: 'unknown mapper key' }],
    });
  }
}

/** Stored dimensions (type `dimension`) exist: 422 DIMENSION_NOT_FOUND naming the first that does not. */
async function checkStoredDimensions(
  c: Context<AppEnv>,
  dimensions: readonly DimensionRequest[] | undefined,
): Promise<void> {
  const ids = [...new Set((dimensions ?? []).filter((d) => d.type === 'dimension').map((d) => d.id))];
  if (ids.length === 0) return;
  const stored = await storedSeeds(c.env, ids);
  (dimensions ?? []).forEach((d, i) => {
    if (d.type === 'dimension' && !stored.has(d.id))
      throw new ApiError('DIMENSION_NOT_FOUND', `No stored dimension with id ${d.id}`, {
        errors: [{ path: `dimensions.${i}.id`, message: `No stored dimension with id ${d.id}` }],
      });
  });
}

/** A text-scores or word-scores request: its shape, its model, mappers and stored dimensions. */
export async function checkScoring(
  c: Context<AppEnv>,
  req: {
    embeddingModelId: string;
    dimensions?: DimensionRequest[];
    mapperKeys?: string[];
    goalConfig?: GoalConfig;
  },
): Promise<void> {
  checkScoringRequest(req);
  // The catalog and D1 are asked at once; the first refusal answers.
  await Promise.all([
    catalogModel(c.env, waitUntilOf(c), req.embeddingModelId).then(({ catalog }) =>
      checkMapperKeys(c, catalog, req.embeddingModelId, req.mapperKeys, 'mapperKeys'),
    ),
    checkStoredDimensions(c, req.dimensions),
  ]);
}

/** A request on one model (autocomplete, availabilities, matrices): the model is in the catalog. */
export async function checkModel(c: Context<AppEnv>, embeddingModelId: string): Promise<void> {
  await catalogModel(c.env, waitUntilOf(c), embeddingModelId);
}

/** A translation: the source is in the catalog, has a target of its space, and the target is too. */
export async function checkTranslation(
  c: Context<AppEnv>,
  embeddingModelId: string,
  targetModelId: string | undefined,
): Promise<void> {
  const ctx = waitUntilOf(c);
  const from = (await catalogModel(c.env, ctx, embeddingModelId)).manifest;
  const targetId = translationTarget(embeddingModelId, from, targetModelId);
  const target = (await catalogModel(c.env, ctx, targetId)).manifest;
  checkSameSpace(embeddingModelId, from, from.dimensions, targetId, target, target.dimensions);
}
