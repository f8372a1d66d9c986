/**
 * The CLI's local service: the API's computations in this Node process, with the same core
 * code and kernels.wasm as the Worker (no server, no quota). Models, language data and mapper
 * bundles come from build/generated/ (built by build/ensure.ts when missing); requests are
 * validated with the Worker's zod schemas (core/requests.ts) and refused with the same
 * problems, so a request answers with the JSON the API would send.
 * Stored dimensions (type `dimension`) live in the service's D1: locally they come from a JSON
 * file in the shape of GET /api/v1/artifacts/dimensions (--stored-dimensions), else none exist.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureBuilt } from '../build/ensure';
import { KERNELS_WASM } from '../build/build-wasm';
import { DEFAULT_MODEL_ID } from '../build/default-model';
import { languageFile } from '../build/lang-data';
import { loadKernels, readArrayBuffer } from '../build/load-model';
import { GENERATED } from '../build/wrangler';
import type { Kernels } from '../core/kernels';
import { EmbeddingModel } from '../core/model';
import { parseMapperBundle, splitMapperVariableId, type MapperBundle } from '../core/mapper-bundle';
import { ApiError, requireLanguage, validationFailed, type ZodIssues } from '../core/problem';
import { requestSchemas } from '../core/requests';
import { ALIGNED_FEATURE, ENGLISH_COMPANION_ID } from '../core/projection';
import {
  BoundedCache,
  languageLexicon,
  scoreTexts,
  scoreWords,
  similarityMatrix,
  wordAvailabilities,
  type FactorStats,
  type ResolvedMapper,
  type StoredDimensionSeeds,
  type TokenLike,
} from '../core/scoring';
import { parseLanguageData, tokenize, type LanguageData } from '../core/tokenizer';
import type { ModelManifest } from '../core/types';

const {
  SimilarityMatrixRequestSchema,
  TextScoresRequestSchema,
  TokenizationRequestSchema,
  WordAvailabilitiesRequestSchema,
  WordScoresRequestSchema,
} = requestSchemas();

export const MODELS_DIR = path.join(GENERATED, 'models');
export const MAPPERS_DIR = path.join(GENERATED, 'mappers');

type ZodLike<T> = {
  safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: ZodIssues } };
};

function validate<T>(schema: ZodLike<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) throw validationFailed(r.error.issues);
  return r.data;
}

/** A model id as a file name: the API's id pattern keeps ids to these characters. */
function safeId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) && !id.includes('..');
}

export function modelFile(id: string): string {
  return path.join(MODELS_DIR, `${id}.emb`);
}

/** Manifests of the models in build/generated/models (the local catalog). */
export function localManifests(): ModelManifest[] {
  if (!fs.existsSync(MODELS_DIR)) return [];
  return fs
    .readdirSync(MODELS_DIR)
    .filter(
      (f) =>
        f.endsWith('.json') &&
        !f.endsWith('.stamp.json') &&
        fs.existsSync(path.join(MODELS_DIR, f.replace(/\.json$/, '.emb'))),
    )
    .map((f) => JSON.parse(fs.readFileSync(path.join(MODELS_DIR, f), 'utf8')) as ModelManifest)
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Mapper bundle keys present for a model. */
export function localBundleKeys(modelId: string): string[] {
  const dir = path.join(MAPPERS_DIR, modelId);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.bin'))
    .map((f) => f.slice(0, -4))
    .sort();
}

interface Loaded {
  index: EmbeddingModel;
  stats: BoundedCache<FactorStats>;
  bundles: Map<string, MapperBundle | null>;
}

export interface LocalOptions {
  /** JSON file of stored dimension seeds ({ data: [{ id, name, words }] }). */
  storedDimensions?: string;
  /** Build missing artifacts with build/ensure.ts (default true). */
  build?: boolean;
}

export class LocalService {
  private kernels: Kernels | null = null;
  private readonly models = new Map<string, Loaded>();
  private readonly languages = new Map<string, LanguageData>();
  private readonly seeds: StoredDimensionSeeds;
  private built = false;

  constructor(private readonly options: LocalOptions = {}) {
    const seeds = new Map<number, { words: string[]; name?: string }>();
    if (options.storedDimensions) {
      const parsed = JSON.parse(fs.readFileSync(options.storedDimensions, 'utf8')) as
        | { data?: Array<{ id: number; name?: string; words: string[] }> }
        | Array<{ id: number; name?: string; words: string[] }>;
      for (const d of Array.isArray(parsed) ? parsed : (parsed.data ?? []))
        seeds.set(d.id, { words: d.words, name: d.name });
    }
    this.seeds = seeds;
  }

  /** build/ensure.ts once, when an artifact the call needs is missing. */
  private async ensure(): Promise<void> {
    if (this.built || this.options.build === false) return;
    this.built = true;
    // Build logs go to stderr: stdout carries the command's output.
    const log = console.log;
    console.log = console.error;
    try {
      await ensureBuilt({ forTests: true });
    } finally {
      console.log = log;
    }
  }

  private async getKernels(): Promise<Kernels> {
    if (!this.kernels) {
      if (!fs.existsSync(KERNELS_WASM)) await this.ensure();
      this.kernels = loadKernels();
    }
    return this.kernels;
  }

  async model(id: string): Promise<Loaded> {
    const have = this.models.get(id);
    if (have) return have;
    if (!safeId(id)) throw new ApiError('EMBEDDING_MODEL_NOT_FOUND', `No embedding model '${id}'`);
    const file = modelFile(id);
    if (!fs.existsSync(file) && id === DEFAULT_MODEL_ID) await this.ensure();
    if (!fs.existsSync(file)) {
      throw new ApiError(
        'EMBEDDING_MODEL_NOT_FOUND',
        `No embedding model '${id}' in ${path.relative(process.cwd(), MODELS_DIR) || MODELS_DIR} (import one with: embedding-edge models import)`,
      );
    }
    const index = EmbeddingModel.fromArrayBuffer(readArrayBuffer(file), await this.getKernels());
    const loaded: Loaded = { index, stats: new BoundedCache<FactorStats>(256), bundles: new Map() };
    this.models.set(id, loaded);
    return loaded;
  }

  async language(language: string): Promise<LanguageData> {
    const lang = requireLanguage(language);
    const have = this.languages.get(lang);
    if (have) return have;
    if (!fs.existsSync(languageFile(lang))) await this.ensure();
    if (!fs.existsSync(languageFile(lang)))
      throw new ApiError(
        'LANGUAGE_DATA_UNAVAILABLE',
        `Tokenizer data for language '${lang}' is missing (${languageFile(lang)})`,
      );
    const data = parseLanguageData(readArrayBuffer(languageFile(lang)));
    this.languages.set(lang, data);
    return data;
  }

  private bundle(id: string, m: Loaded, key: string): MapperBundle | null {
    if (m.bundles.has(key)) return m.bundles.get(key)!;
    const file = path.join(MAPPERS_DIR, id, `${key}.bin`);
    const bundle =
      /^[A-Za-z0-9][A-Za-z0-9-]*$/.test(key) && fs.existsSync(file)
        ? parseMapperBundle(readArrayBuffer(file), {
            id,
            vocabularySize: m.index.size,
            checksum: m.index.manifest.checksum,
          })
        : null;
    m.bundles.set(key, bundle);
    return bundle;
  }

  /** Mapper variable ids -> bundles, with the Worker's semantics (repeats once; unknown: 422 MAPPER_NOT_FOUND). */
  async resolveMappers(id: string, keys: readonly string[] | undefined): Promise<ResolvedMapper[]> {
    const m = await this.model(id);
    if ((keys?.length ?? 0) > 0 && !fs.existsSync(path.join(MAPPERS_DIR, id)) && id === DEFAULT_MODEL_ID)
      await this.ensure();
    const out: ResolvedMapper[] = [];
    const seen = new Set<string>();
    for (const [i, key] of (keys ?? []).entries()) {
      if (seen.has(key)) continue;
      seen.add(key);
      const split = splitMapperVariableId(key);
      const bundle = split ? this.bundle(id, m, split.bundleKey) : null;
      if (split && bundle && bundle.has(split.variable)) {
        out.push({ id: key, variable: split.variable, values: bundle });
        continue;
      }
      throw new ApiError('MAPPER_NOT_FOUND', `No mapper '${key}' for embedding model '${id}'`, {
        errors: [{ path: `mapperKeys.${i}`, message: 'unknown mapper key' }],
      });
    }
    return out;
  }

  /** Loads what a text-scores request needs (model, language data, mappers) ahead of the first batch. */
  async prepare(request: { embeddingModelId?: unknown; mapperKeys?: unknown }): Promise<void> {
    if (typeof request.embeddingModelId !== 'string') return;
    const m = await this.model(request.embeddingModelId);
    await this.language(m.index.manifest.language);
    if (Array.isArray(request.mapperKeys) && request.mapperKeys.every((k) => typeof k === 'string'))
      await this.resolveMappers(request.embeddingModelId, request.mapperKeys as string[]);
  }

  /** POST text-scores, plus the token count the API would meter. */
  async textScores(body: unknown): Promise<{ data: Array<Record<string, unknown>>; tokenCount: number }> {
    const req = validate(TextScoresRequestSchema, body);
    const m = await this.model(req.embeddingModelId);
    const lang = await this.language(m.index.manifest.language);
    const mappers = await this.resolveMappers(req.embeddingModelId, req.mapperKeys);
    const tokenizeText = (text: string): TokenLike[] => tokenize(text, lang, { synonyms: false }).tokens;
    // The validated request, as the Worker's route passes c.req.valid('json') on.
    const companion = await this.companion(m.index, req.dimensions);
    // The same inputs as the Worker's route and the browser scorer: lexicon (seed expansion),
    // composition word lists (composition "rules") and the English companion (cross-lingual seeds).
    const { response, tokenCount } = scoreTexts(req, {
      index: m.index,
      tokenize: tokenizeText,
      mappers,
      storedDimensions: this.seeds,
      stats: m.stats,
      lexicon: languageLexicon(lang),
      composition: lang.meta.composition,
      companion,
    });
    return { data: response.data as unknown as Array<Record<string, unknown>>, tokenCount };
  }

  async wordScores(body: unknown) {
    const req = validate(WordScoresRequestSchema, body);
    const m = await this.model(req.embeddingModelId);
    const mappers = await this.resolveMappers(req.embeddingModelId, req.mapperKeys);
    const lang = await this.language(m.index.manifest.language);
    const companion = await this.companion(m.index, req.dimensions);
    return scoreWords(req, { index: m.index, mappers, storedDimensions: this.seeds, lexicon: languageLexicon(lang), companion });
  }

  /** The English model an aligned model's dimensions fall back to for unknown seeds (as the Worker does). */
  private async companion(index: EmbeddingModel, dimensions: readonly unknown[] | undefined): Promise<EmbeddingModel | null> {
    const features = index.manifest.features;
    if (!dimensions?.length || index.manifest.id === ENGLISH_COMPANION_ID || !Array.isArray(features) || !features.includes(ALIGNED_FEATURE)) return null;
    try {
      return (await this.model(ENGLISH_COMPANION_ID)).index;
    } catch {
      return null;
    }
  }

  async similarityMatrix(modelId: string, body: unknown) {
    const req = validate(SimilarityMatrixRequestSchema, body);
    return similarityMatrix((await this.model(modelId)).index, req);
  }

  async wordAvailabilities(modelId: string, body: unknown) {
    const req = validate(WordAvailabilitiesRequestSchema, body);
    return wordAvailabilities((await this.model(modelId)).index, req);
  }

  async tokenize(body: unknown) {
    const req = validate(TokenizationRequestSchema, body);
    return tokenize(req.text, await this.language(req.language));
  }
}
