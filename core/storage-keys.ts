/**
 * Every storage key of the service in one place: the R2 object keys (bucket binding ARTIFACTS)
 * and the KV keys (binding CACHE). The Worker reads with them and the build scripts that seed
 * R2 and KV (build/start.ts, build/import-model.ts, build/mapper/*, build/build-browser.ts) write
 * with them, so a renamed key cannot drift between the two.
 *
 * R2 layout:
 *   models/{modelId}.emb                 model artifact (core/artifact/)
 *   models/{modelId}.json                its ModelManifest as JSON (catalog reads only these)
 *   mappers/{modelId}/{bundleKey}.bin    mapper bundle (values for every vocabulary row)
 *   mappers/{modelId}/{bundleKey}.json   its MapperBundleInfo as JSON (catalog reads only these)
 *   lang/{language}.bin                  tokenizer language data (core/tokenizer)
 *   subword/{modelId}.bin                the model's sub-word table (core/subword.ts, build/subword-table.ts)
 *   model-heads/{modelId}.emb            the model's most frequent rows as an artifact (build/model-heads.ts)
 *   mapper-heads/{modelId}/{bundleKey}.bin  a mapper bundle's values of those rows (build/model-heads.ts)
 *   plagiarism/pages/{urlHash}/{uuid}.txt  text of a stored reference page (worker/plagiarism/corpus.ts)
 *   web/{path}                           the playground build (worker/pages/playground.ts)
 *   building.json                        what a local first start is still building (core/building.ts)
 */

/** R2 key prefixes (listing, and prefix checks). */
export const R2_PREFIXES = {
  models: 'models/',
  mappers: 'mappers/',
  languageData: 'lang/',
  /** Outside models/, which the catalog lists. */
  modelHeads: 'model-heads/',
  /** Outside mappers/, whose sidecars the catalog lists. */
  mapperHeads: 'mapper-heads/',
  /** Outside models/, which the catalog lists. */
  subwordTables: 'subword/',
  plagiarismPages: 'plagiarism/pages/',
  web: 'web/',
} as const;

export const R2_KEYS = {
  model: (id: string) => `${R2_PREFIXES.models}${id}.emb`,
  modelManifest: (id: string) => `${R2_PREFIXES.models}${id}.json`,
  mapper: (modelId: string, key: string) => `${R2_PREFIXES.mappers}${modelId}/${key}.bin`,
  mapperInfo: (modelId: string, key: string) => `${R2_PREFIXES.mappers}${modelId}/${key}.json`,
  languageData: (language: string) => `${R2_PREFIXES.languageData}${language}.bin`,
  modelHead: (id: string) => `${R2_PREFIXES.modelHeads}${id}.emb`,
  subwordTable: (modelId: string) => `${R2_PREFIXES.subwordTables}${modelId}.bin`,
  mapperHead: (modelId: string, key: string) => `${R2_PREFIXES.mapperHeads}${modelId}/${key}.bin`,
  plagiarismPage: (urlHash: string, id: string) => `${R2_PREFIXES.plagiarismPages}${urlHash}/${id}.txt`,
  /** A playground file; `path` is relative to the build's root ("index.html", "assets/app.js"). */
  web: (path: string) => `${R2_PREFIXES.web}${path}`,
} as const;

/** What a local first start is still building (core/building.ts); part of the cached catalog. */
export const BUILDING_KEY = 'building.json';

/** True for the R2 objects the Worker's cached catalog is made of (models/*.json, mappers/{modelId}/*.json). */
export function isCatalogKey(key: string): boolean {
  return /^models\/[^/]+\.json$/.test(key) || /^mappers\/[^/]+\/[^/]+\.json$/.test(key);
}

/**
 * KV (binding CACHE) key of the catalog generation token (worker/catalog/store.ts): whoever changes a
 * catalog sidecar in R2 (models/*.json, mappers/{modelId}/*.json) writes a new random value.
 */
export const CATALOG_GENERATION_KEY = 'catalog:generation';

export const KV_KEYS = {
  /** The parsed catalog of one generation; bump `v1` when the cached shape changes, so a deploy never reads entries of the old shape. */
  catalog: (generation: string) => `catalog:v1:${generation}`,
  /** Hex SHA-256 of an R2 object without a stored checksum, per etag (worker/artifacts/routes.ts). */
  artifactSha256: (r2Key: string, etag: string) => `artifact-sha256:${r2Key}:${etag}`,
} as const;
