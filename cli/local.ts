/**
 * The CLI's local service: the API's engine (core/engine.ts) in this Node process, with the same
 * kernels.wasm as the Worker (no server, no quota). Its source reads models, language data and
 * mapper bundles from build/generated/ (built through build/cli-steps.ts when missing); the engine
 * validates with the Worker's zod schemas and refuses with the same problems, so a request
 * answers with the JSON the API would send.
 * Stored dimensions (type `dimension`) live in the service's D1: locally they come from a JSON
 * file in the shape of GET /api/v1/artifacts/dimensions (--stored-dimensions), else none exist.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildEngineArtifacts } from '../build/cli-steps';
import { loadKernels, readArrayBuffer } from '../build/load-model';
import {
  DEFAULT_MODEL_ID,
  KERNELS_WASM,
  languageFile,
  MAPPERS_DIR,
  modelFile,
  MODELS_DIR,
  subwordTableFile,
} from '../build/paths';
import { createEngine, LoadedModel, sharedKernels, type EngineSource } from '../core/engine';
import { EmbeddingModel } from '../core/model';
import { ApiError, requireLanguage } from '../core/problem';
import { sharedLoad } from '../core/shared-load';
import type { StoredDimensionSeeds, StoredSeed } from '../core/scoring';
import { parseLanguageData, type Language, type LanguageData } from '../core/tokenizer';
import type { ModelManifest } from '../core/types';

/** A model id as a file name: the API's id pattern keeps ids to these characters. */
function safeId(id: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) && !id.includes('..');
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

export interface LocalOptions {
  /** JSON file of stored dimension seeds ({ data: [{ id, name, words }] }). */
  storedDimensions?: string;
  /** Build missing artifacts (build/cli-steps.ts; default true). */
  build?: boolean;
}

/** Stored seeds from a file in the shape of GET /api/v1/artifacts/dimensions (or its data array). */
function readSeeds(file: string | undefined): StoredDimensionSeeds {
  const seeds = new Map<number, StoredSeed>();
  if (!file) return seeds;
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as
    | { data?: Array<{ id: number; name?: string; words: string[] }> }
    | Array<{ id: number; name?: string; words: string[] }>;
  for (const d of Array.isArray(parsed) ? parsed : (parsed.data ?? []))
    seeds.set(d.id, { words: d.words, name: d.name });
  return seeds;
}

/** The engine source of the CLI: files under build/generated/, each read once per process. */
export class FileSource implements EngineSource {
  private readonly models = new Map<string, Promise<LoadedModel>>();
  private readonly languages = new Map<string, Promise<LanguageData>>();
  private readonly seeds: StoredDimensionSeeds;
  private built = false;

  constructor(private readonly options: LocalOptions) {
    this.seeds = readSeeds(options.storedDimensions);
  }

  /** The engine's artifacts built once, when one the call needs is missing. */
  private async ensure(): Promise<void> {
    if (this.built || this.options.build === false) return;
    this.built = true;
    await buildEngineArtifacts();
  }

  model(id: string): Promise<LoadedModel> {
    return sharedLoad(this.models, id, undefined, async () => {
      if (!safeId(id)) throw new ApiError('EMBEDDING_MODEL_NOT_FOUND', `No embedding model '${id}'`);
      const file = modelFile(id);
      if (!fs.existsSync(file) && id === DEFAULT_MODEL_ID) await this.ensure();
      if (!fs.existsSync(file)) {
        throw new ApiError(
          'EMBEDDING_MODEL_NOT_FOUND',
          `No embedding model '${id}' in ${path.relative(process.cwd(), MODELS_DIR) || MODELS_DIR} (import one with: embedding-edge models import)`,
        );
      }
      if (!fs.existsSync(KERNELS_WASM)) await this.ensure();
      const kernels = sharedKernels(loadKernels);
      return new LoadedModel(id, EmbeddingModel.fromArrayBuffer(readArrayBuffer(file), kernels));
    });
  }

  languageData(language: Language): Promise<LanguageData> {
    return sharedLoad(this.languages, language, undefined, async () => {
      if (!fs.existsSync(languageFile(language))) await this.ensure();
      if (!fs.existsSync(languageFile(language)))
        throw new ApiError(
          'LANGUAGE_DATA_UNAVAILABLE',
          `Tokenizer data for language '${language}' is missing (${languageFile(language)})`,
        );
      return parseLanguageData(readArrayBuffer(languageFile(language)));
    });
  }

  async mapperBundleBytes(model: LoadedModel, bundleKey: string): Promise<ArrayBuffer | null> {
    if (!fs.existsSync(path.join(MAPPERS_DIR, model.id)) && model.id === DEFAULT_MODEL_ID) await this.ensure();
    const file = path.join(MAPPERS_DIR, model.id, `${bundleKey}.bin`);
    return /^[A-Za-z0-9][A-Za-z0-9-]*$/.test(bundleKey) && fs.existsSync(file) ? readArrayBuffer(file) : null;
  }

  /** build/generated/subword/{id}.bin (build/subword-table.ts), null when the model has none. */
  async subwordTableBytes(model: LoadedModel): Promise<ArrayBuffer | null> {
    const file = subwordTableFile(model.id);
    if (!fs.existsSync(file) && model.id === DEFAULT_MODEL_ID) await this.ensure();
    return fs.existsSync(file) ? readArrayBuffer(file) : null;
  }

  subwordKernels() {
    return sharedKernels(loadKernels);
  }

  async storedSeeds(ids: readonly number[]): Promise<StoredDimensionSeeds> {
    const out = new Map<number, StoredSeed>();
    for (const id of ids) {
      const seeds = this.seeds.get(id);
      if (seeds) out.set(id, seeds);
    }
    return out;
  }
}

export class LocalService {
  private readonly engine;

  constructor(options: LocalOptions = {}) {
    this.engine = createEngine(new FileSource(options));
  }

  /** Loads what a text-scores request needs (model, language data, mappers) ahead of the first batch. */
  async prepare(request: { embeddingModelId?: unknown; mapperKeys?: unknown }): Promise<void> {
    if (typeof request.embeddingModelId !== 'string') return;
    const m = await this.engine.model(request.embeddingModelId);
    await this.engine.languageData(requireLanguage(m.manifest.language));
    if (Array.isArray(request.mapperKeys) && request.mapperKeys.every((k) => typeof k === 'string'))
      await this.engine.resolveMappers(m, request.mapperKeys as string[]);
  }

  /** POST text-scores, plus the token count the API would meter. */
  async textScores(body: unknown): Promise<{ data: Array<Record<string, unknown>>; tokenCount: number }> {
    const { response, tokenCount } = await this.engine.textScores(body);
    return { data: response.data as unknown as Array<Record<string, unknown>>, tokenCount };
  }

  wordScores(body: unknown) {
    return this.engine.wordScores(body);
  }

  similarityMatrix(modelId: string, body: unknown) {
    return this.engine.similarityMatrix(modelId, body);
  }

  wordAvailabilities(modelId: string, body: unknown) {
    return this.engine.wordAvailabilities(modelId, body);
  }

  tokenize(body: unknown) {
    return this.engine.tokenize(body);
  }
}
