/**
 * The one engine behind the Worker's routes, the browser's offline scorer and the CLI's local
 * mode. Every method is validate -> load -> score:
 *   validate: the zod request schemas of core/requests.ts (422 VALIDATION_FAILED); the Worker's
 *             routes have validated with the same schemas already (`validated: true`);
 *   load:     model, language data, mapper bundles and stored seeds, in parallel, through an
 *             EngineSource (Worker: R2/D1, worker/sources/; browser: IndexedDB/HTTP,
 *             browser/src/engine-source.ts; CLI: files, cli/local.ts);
 *   score:    core/scoring on the WASM kernels (core/kernels.ts).
 * Refusals are ApiError / ScoringError (core/problem.ts), the same for all three.
 */
import { MapperBundleError, parseMapperBundle, splitMapperVariableId, type MapperBundle } from './mapper-bundle';
import { ApiError, requireLanguage, validationFailed, type ZodIssues } from './problem';
import { englishCompanionOf } from './projection';
import { requestSchemas } from './requests';
import {
  autocomplete,
  BoundedCache,
  expansionCacheBytes,
  languageLexicon,
  missingSeedWords,
  drain,
  paced,
  scoreTextsSteps,
  scoreWordsSteps,
  similarityMatrix,
  wordAvailabilities,
  type DimensionRequest,
  type FactorStats,
  type Pace,
  type Steps,
  type ResolvedMapper,
  type StoredDimensionSeeds,
} from './scoring';
import { checkScoringRequest } from './scoring/request-checks';
import { sharedLoad, type WaitUntil } from './shared-load';
import { ComposingIndex } from './composing-index';
import type { Kernels } from './kernels';
import { KERNELS_BASE_BYTES } from './footprint';
import { SubwordTable } from './subword';
import { convertOffsets } from './offsets';
import { scoringTokenizer, tokenize, type LanguageData, type Language, type ScoringTokenizer } from './tokenizer';
import type { WordTranslationsResponse } from './responses';
import { checkSameSpace, translateWordsSteps, translationTarget, TRANSLATION_LIMIT_DEFAULT } from './translation';
import type { ModelManifest, RowSource, VectorIndex } from './types';

/**
 * A model in memory with its per-model caches (a source may extend it, e.g. with LRU state). The
 * index is an EmbeddingModel, or the browser's PartialIndex while only a model's head is in
 * (core/partial-index.ts).
 */
export class LoadedModel<I extends VectorIndex = VectorIndex> {
  /** Parsed mapper bundles by bundle key (a rejected or missing one is dropped so a later call retries). */
  readonly bundles: Map<string, Promise<MapperBundle | null>>;
  /** Bytes of each parsed bundle kept in `bundles`. */
  readonly bundleBytes: Map<string, number>;
  /** Normalization statistics (mappers, modelRank: per model; dimensions: per seed set), at most STATS_CACHE_BYTES. */
  readonly stats: BoundedCache<FactorStats>;

  /** Asked before a cache keeps more bytes (the Worker's memory budget); absent: always yes. */
  readonly mayGrow?: (bytes: number) => boolean;

  /**
   * The model's sub-word table, loaded on the first request with `subwordFallback` (null: it has
   * none), and the bytes it holds (its kernels' memory), counted in cacheBytes.
   */
  readonly subword: { table: Map<'table', Promise<SubwordTable | null>>; bytes: number };

  constructor(
    readonly id: string,
    readonly index: I,
    options: {
      stats?: BoundedCache<FactorStats>;
      mayGrow?: (bytes: number) => boolean;
      /** Caches shared with another LoadedModel of the same model (each call's view of a sharded model). */
      shareWith?: LoadedModel;
    } = {},
  ) {
    this.mayGrow = options.mayGrow;
    this.bundles = options.shareWith?.bundles ?? new Map();
    this.bundleBytes = options.shareWith?.bundleBytes ?? new Map();
    this.subword = options.shareWith?.subword ?? { table: new Map(), bytes: 0 };
    this.stats =
      options.stats ??
      options.shareWith?.stats ??
      new BoundedCache<FactorStats>(256, {
        maxBytes: STATS_CACHE_BYTES,
        sizeOf: (s, key) => s.sorted.byteLength + 2 * key.length + 64,
        mayGrow: options.mayGrow,
      });
  }

  get manifest(): ModelManifest {
    return this.index.manifest;
  }

  /** Bytes of this model's caches: normalization statistics, seed expansions, parsed mapper bundles. */
  get cacheBytes(): number {
    let n = this.stats.bytes + expansionCacheBytes(this.index);
    for (const b of this.bundleBytes.values()) n += b;
    return n + this.subword.bytes;
  }
}

/** Bytes one model's normalization statistics may hold (a seed set's sample is 160 KB: about 50 sets). */
export const STATS_CACHE_BYTES = 8_000_000;

/** Where an engine's models, language data, mapper bundles and stored seeds come from. */
export interface EngineSource {
  /** The loaded model; throws ApiError EMBEDDING_MODEL_NOT_FOUND (404) or EMBEDDING_MODEL_UNAVAILABLE (503). */
  model(id: string): Promise<LoadedModel>;
  /** The parsed language data; any failure but an ApiError is answered 503 LANGUAGE_DATA_UNAVAILABLE. */
  languageData(language: Language): Promise<LanguageData>;
  /** The bytes of the model's mapper bundle `bundleKey`, null when there is none. */
  mapperBundleBytes(model: LoadedModel, bundleKey: string): Promise<ArrayBuffer | null>;
  /** The stored seeds of these dimension ids (type `dimension`); ids without seeds are absent. */
  storedSeeds(ids: readonly number[]): Promise<StoredDimensionSeeds>;
  /** Ids of the models that have this mapper variable (422 MAPPER_MODEL_MISMATCH instead of MAPPER_NOT_FOUND); none when absent. */
  mapperOwners?(bundleKey: string, variable: string): Promise<string[]>;
  /**
   * The manifest of model `id` and the rows of those `words` it has, for a source that may hold
   * the model in another isolate (a model host fetches its projected model's English companion
   * and a translation's source model this way). Throws as model() does. Without it the engine
   * loads the model.
   */
  rows?(id: string, words: readonly string[]): Promise<{ manifest: ModelManifest; rows: RowSource }>;
  /**
   * The bytes of the model's sub-word table (core/subword.ts; request option subwordFallback),
   * null when it has none, and the kernels instance a table is loaded into. Without them no
   * word is composed.
   */
  subwordTableBytes?(model: LoadedModel): Promise<ArrayBuffer | null>;
  subwordKernels?(): Kernels | Promise<Kernels>;
  /** Keeps shared loads running after the caller has answered (the Worker request's waitUntil). */
  readonly waitUntil?: WaitUntil;
  /**
   * The bundle bytes were verified by a digest already (the browser checks each download's
   * SHA-256 before caching it): their CRC-32 pass is skipped, their structure is still checked.
   */
  readonly bundlesVerified?: boolean;
}

export interface EngineOptions {
  /** The bodies were validated with the core/requests.ts schemas already (the Worker's routes). */
  validated?: boolean;
  /** Called when a phase ends (Server-Timing): `load` after loading, `compute` after scoring. */
  mark?: (phase: 'load' | 'compute') => void;
  /**
   * Awaited after each step of the scorers that work in steps (core/scoring/steps.ts): a model
   * host computes a request in slices with it (worker/hosts/gate.ts). Absent: each scorer runs at once.
   */
  pace?: Pace;
}

// Defined beside the kernels (no engine imports) so the browser worker's first chunk can create it.
export { currentKernels, sharedKernels } from './kernels';

/** A tokenize function bound to a language's data, as text scoring uses it (no synonyms). */
export function tokenizerFor(data: LanguageData): ScoringTokenizer {
  return scoringTokenizer(data);
}

/** The 503 of language data that could not be loaded. */
export function languageDataUnavailable(language: string, cause: unknown): ApiError {
  return new ApiError(
    'LANGUAGE_DATA_UNAVAILABLE',
    `Tokenizer data for language '${language}' could not be loaded: ${cause instanceof Error ? cause.message : String(cause)}`,
  );
}

type ZodLike<T> = {
  safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: ZodIssues } };
};

/**
 * Built on the first validation, not at module load: constructing every zod schema takes tens of
 * ms, which the offline scorer's Web Worker would otherwise spend before it can start reading its
 * cache (browser/src/scorer-worker.ts starts the model's read first, then validates).
 */
let built: Schemas | null = null;
const schemas = (): Schemas => (built ??= requestSchemas());

type Schemas = ReturnType<typeof requestSchemas>;
/** The request schemas' output types (what validation hands on). */
type Req<K extends keyof Schemas> = ReturnType<Schemas[K]['parse']>;

/** The 503 of a sub-word table that cannot be used now (nothing is charged; retry). */
function subwordUnavailable(modelId: string, why: string): ApiError {
  return new ApiError(
    'EMBEDDING_MODEL_UNAVAILABLE',
    `The sub-word table of model '${modelId}' could not be loaded: ${why}`,
    {
      headers: { 'retry-after': '1' },
    },
  );
}

export type Engine = ReturnType<typeof createEngine>;

export function createEngine(source: EngineSource, options: EngineOptions = {}) {
  const validate = <T>(schema: ZodLike<T>, body: unknown): T => {
    if (options.validated) return body as T;
    const r = schema.safeParse(body);
    if (!r.success) throw validationFailed(r.error.issues);
    return r.data;
  };
  const mark = (phase: 'load' | 'compute'): void => options.mark?.(phase);
  const run = <T>(steps: Steps<T>): T | Promise<T> => (options.pace ? paced(steps, options.pace) : drain(steps));

  async function languageData(language: Language): Promise<LanguageData> {
    try {
      return await source.languageData(language);
    } catch (err) {
      throw err instanceof ApiError ? err : languageDataUnavailable(language, err);
    }
  }

  /** The parsed bundle (cached in the model), null when there is none; 422 when trained for another model, 503 when it cannot be parsed. */
  async function bundle(model: LoadedModel, bundleKey: string): Promise<MapperBundle | null> {
    // Only parsed bundles stay cached: a missing or broken one is looked up again next time.
    const p = sharedLoad(
      model.bundles,
      bundleKey,
      source.waitUntil,
      async () => {
        const buf = await source.mapperBundleBytes(model, bundleKey);
        return buf
          ? parseMapperBundle(
              buf,
              {
                id: model.id,
                vocabularySize: model.index.size,
                checksum: model.manifest.checksum,
                // A model's head accepts the bundle's head (the values of its rows) as well.
                rowsPresent: model.index.rows,
              },
              !source.bundlesVerified,
            )
          : null;
      },
      // Kept when the memory budget allows its bytes (model.mayGrow); else parsed again next time.
      (b) => {
        if (b === null || (model.mayGrow && !model.mayGrow(b.byteLength))) return false;
        model.bundleBytes.set(bundleKey, b.byteLength);
        return true;
      },
    );
    try {
      return await p;
    } catch (err) {
      if (err instanceof ApiError) throw err;
      // A bundle trained for another model (e.g. copied under this model's prefix) cannot be applied: a client error.
      if (err instanceof MapperBundleError && err.code === 'WRONG_MODEL') {
        throw new ApiError(
          'MAPPER_MODEL_MISMATCH',
          `Mapper bundle '${bundleKey}' cannot be applied to model '${model.id}': ${err.message}`,
        );
      }
      throw new ApiError(
        'MAPPER_UNAVAILABLE',
        `Mapper bundle '${bundleKey}' of model '${model.id}' could not be loaded: ${(err as Error).message}`,
      );
    }
  }

  /**
   * Mapper variable id = bundle key + '_' + variable; variables never contain '_' (core/mapper-bundle.ts),
   * so the bundle key is everything before the last '_'. Repeated ids are scored once.
   * Unknown: 422 MAPPER_NOT_FOUND; known only for other models (source.mapperOwners): 422 MAPPER_MODEL_MISMATCH.
   */
  async function resolveMappers(
    model: LoadedModel,
    keys: readonly string[] | undefined,
    field = 'mapperKeys',
  ): Promise<ResolvedMapper[]> {
    const out: ResolvedMapper[] = [];
    const seen = new Set<string>();
    for (const [i, id] of (keys ?? []).entries()) {
      if (seen.has(id)) continue;
      seen.add(id);
      const split = splitMapperVariableId(id);
      const b = split ? await bundle(model, split.bundleKey) : null;
      if (split && b && b.has(split.variable)) {
        out.push({ id, variable: split.variable, values: b });
        continue;
      }
      const elsewhere =
        split && source.mapperOwners
          ? (await source.mapperOwners(split.bundleKey, split.variable)).filter((m) => m !== model.id)
          : [];
      if (elsewhere.length > 0) {
        throw new ApiError(
          'MAPPER_MODEL_MISMATCH',
          `Mapper '${id}' exists for ${elsewhere.map((m) => `'${m}'`).join(', ')}, not for embedding model '${model.id}'`,
          {
            errors: [{ path: `${field}.${i}`, message: 'mapper belongs to another embedding model' }],
          },
        );
      }
      throw new ApiError('MAPPER_NOT_FOUND', `No mapper '${id}' for embedding model '${model.id}'`, {
        errors: [{ path: `${field}.${i}`, message: 'unknown mapper key' }],
      });
    }
    return out;
  }

  /** Stored seeds of the request's dimensions of type `dimension` (none asked: no lookup). */
  async function storedSeeds(dimensions: readonly DimensionRequest[] | undefined): Promise<StoredDimensionSeeds> {
    const ids = [...new Set((dimensions ?? []).filter((d) => d.type === 'dimension').map((d) => d.id))];
    return ids.length > 0 ? source.storedSeeds(ids) : new Map();
  }

  /**
   * The English companion of an aligned model (core/projection.ts) when the request has
   * dimensions: seeds the model's language lacks are looked up there, since both share one
   * vector space. Only when the model lacks a seed word: the companion is consulted for those
   * words alone, so one the model has all seeds of is never loaded (the browser would otherwise
   * download a whole English model for German seeds). A source that fetches rows (source.rows)
   * fetches only the missing words. One that cannot be loaded is logged and left out (seeds then
   * come from the model alone), so an aligned model keeps scoring without it.
   */
  async function companionFor(
    model: LoadedModel,
    dimensions: readonly DimensionRequest[] | undefined,
    stored: StoredDimensionSeeds,
  ): Promise<RowSource | null> {
    const companion = englishCompanionOf(model.manifest);
    if (!dimensions?.length || !companion || companion === model.id) return null;
    const words = missingSeedWords(model.index, dimensions, stored);
    if (words.length === 0) return null;
    try {
      if (!source.rows) return (await source.model(companion)).index;
      return (await source.rows(companion, words)).rows;
    } catch (err) {
      console.error(`[companion] ${companion} for ${model.id}: ${(err as Error).message}`);
      return null;
    }
  }

  /** Stored seeds of the request's dimensions, then the companion's rows for the seeds the model lacks. */
  async function seedsAndCompanion(
    model: LoadedModel,
    dimensions: readonly DimensionRequest[] | undefined,
  ): Promise<[StoredDimensionSeeds, RowSource | null]> {
    const stored = await storedSeeds(dimensions);
    return [stored, await companionFor(model, dimensions, stored)];
  }

  /**
   * The index a request scores with: with `subwordFallback`, the model's rows plus words
   * composed from its sub-word table (core/composing-index.ts); the model itself when the option
   * is off or the model has no table (the option is accepted, no word is composed).
   */
  async function scoringIndex(model: LoadedModel, subwordFallback: boolean | undefined): Promise<VectorIndex> {
    if (!subwordFallback || !source.subwordTableBytes || !source.subwordKernels) return model.index;
    const table = await sharedLoad(model.subword.table, 'table', source.waitUntil, async () => {
      const bytes = await source.subwordTableBytes!(model);
      if (!bytes) return null;
      const kernels = await source.subwordKernels!();
      // Checked and counted in the same turn (no await between): the memory budget's promise.
      if (model.mayGrow && !model.mayGrow(bytes.byteLength))
        throw subwordUnavailable(model.id, 'it does not fit the memory budget now');
      let t: SubwordTable;
      try {
        t = SubwordTable.load(bytes, kernels, {
          id: model.id,
          checksum: model.manifest.checksum,
          dims: model.index.dims,
        });
      } catch (err) {
        throw subwordUnavailable(model.id, (err as Error).message);
      }
      // Its matrix, and the memory of a kernels instance of its own (the Worker's).
      model.subword.bytes = t.matrixBytes + KERNELS_BASE_BYTES;
      return t;
    });
    return table ? new ComposingIndex(model.index, table) : model.index;
  }

  return {
    source,
    model: (id: string) => source.model(id),
    languageData,
    resolveMappers,

    /** POST text-scores, with the token count the API meters. */
    async textScores(body: unknown) {
      const req = validate<Req<'TextScoresRequestSchema'>>(schemas().TextScoresRequestSchema, body);
      checkScoringRequest(req);
      const model = await source.model(req.embeddingModelId);
      const [lang, mappers, [storedDimensions, companion], index] = await Promise.all([
        languageData(model.manifest.language as Language),
        resolveMappers(model, req.mapperKeys),
        seedsAndCompanion(model, req.dimensions),
        scoringIndex(model, req.subwordFallback),
      ]);
      mark('load');
      const result = await run(
        scoreTextsSteps(req, {
          index,
          tokenize: tokenizerFor(lang),
          mappers,
          storedDimensions,
          stats: model.stats,
          lexicon: languageLexicon(lang),
          companion,
          composition: lang.meta.composition,
          language: model.manifest.language,
        }),
      );
      mark('compute');
      return result;
    },

    /** POST word-scores (whitelist or find-and-score). */
    async wordScores(body: unknown) {
      const req = validate<Req<'WordScoresRequestSchema'>>(schemas().WordScoresRequestSchema, body);
      checkScoringRequest(req);
      const model = await source.model(req.embeddingModelId);
      // The language data (stop words, dictionary) only when a dimension asks for seed expansion.
      const [mappers, [storedDimensions, companion], lexicon, index] = await Promise.all([
        resolveMappers(model, req.mapperKeys),
        seedsAndCompanion(model, req.dimensions),
        req.dimensions?.some((d) => d.expand)
          ? languageData(model.manifest.language as Language).then(languageLexicon)
          : undefined,
        scoringIndex(model, req.subwordFallback),
      ]);
      mark('load');
      const response = await run(
        scoreWordsSteps(req, {
          index,
          mappers,
          storedDimensions,
          lexicon,
          companion,
        }),
      );
      mark('compute');
      return response;
    },

    /** POST autocomplete-suggestions. */
    async autocomplete(body: unknown) {
      const req = validate<Req<'AutocompleteRequestSchema'>>(schemas().AutocompleteRequestSchema, body);
      const model = await source.model(req.embeddingModelId);
      return autocomplete(model.index, req);
    },

    /** POST word-availabilities of a model. */
    async wordAvailabilities(embeddingModelId: string, body: unknown) {
      const req = validate<Req<'WordAvailabilitiesRequestSchema'>>(schemas().WordAvailabilitiesRequestSchema, body);
      const model = await source.model(embeddingModelId);
      return wordAvailabilities(model.index, req);
    },

    /** POST word-similarity-matrices of a model. */
    async similarityMatrix(embeddingModelId: string, body: unknown) {
      const req = validate<Req<'SimilarityMatrixRequestSchema'>>(schemas().SimilarityMatrixRequestSchema, body);
      const model = await source.model(embeddingModelId);
      const index = await scoringIndex(model, req.subwordFallback);
      mark('load');
      const result = similarityMatrix(index, req);
      mark('compute');
      return result;
    },

    /** POST tokenizations. */
    async tokenize(body: unknown) {
      const req = validate<Req<'TokenizationRequestSchema'>>(schemas().TokenizationRequestSchema, body);
      const data = await languageData(requireLanguage(req.language));
      const result = tokenize(req.text, data);
      convertOffsets(req.text, result.tokens, req.offsetUnit);
      return result;
    },

    /**
     * POST word-translations (docs/multilingual.md): the nearest words of each word in a model
     * sharing its vector space (default: the English companion). The body is the Worker's
     * validated WordTranslationsRequest.
     */
    async wordTranslations(
      embeddingModelId: string,
      req: { words: string[]; limit?: number; targetModelId?: string },
    ): Promise<WordTranslationsResponse> {
      // The source model's rows of the words asked (fetched from its host when it is elsewhere).
      const from = source.rows
        ? await source.rows(
            embeddingModelId,
            req.words.map((w) => w.trim()),
          )
        : await source.model(embeddingModelId).then((m) => ({ manifest: m.manifest, rows: m.index as RowSource }));
      // An aligned model translates into its English companion unless asked otherwise.
      const targetId = translationTarget(embeddingModelId, from.manifest, req.targetModelId);
      const target = await source.model(targetId);
      checkSameSpace(embeddingModelId, from.manifest, from.rows.dims, targetId, target.manifest, target.index.dims);
      const data = await run(
        translateWordsSteps(from.rows, target.index, req.words, req.limit ?? TRANSLATION_LIMIT_DEFAULT),
      );
      return { sourceModelId: embeddingModelId, targetModelId: targetId, data };
    },
  };
}
