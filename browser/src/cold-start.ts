/**
 * Progressive cold start (a model that is not cached, `progressive: true`): the model's head (its
 * most frequent 50,000 rows, core/model-head.ts) is downloaded first, or taken from the page's
 * download (head-offer.ts), verified like every download and scored as a PartialIndex
 * (core/partial-index.ts) with the full model's identity while the full artifact follows in the
 * background.
 */
import { parseArtifact } from '../../core/artifact';
import { HEAD_ROWS } from '../../core/model-head';
import { EmbeddingModel } from '../../core/model';
import type { HeadManifest } from '../../core/partial-index';
import { Bundles, readHintedBundles } from './bundles';
import { fetchArtifact, NetworkUnavailable, ProblemError, type ProgressFn } from './cache';
import { catalogBundles, fetchCatalogEntry, modelPath } from './catalog';
import { getKernels } from './early-reads';
import type { HeadOffer } from './head-offer';
import { partialLoaded, type Loaded } from './loaded-models';
import { mark, phase } from './phases';
import type { CachedModelInfo, Progress } from './protocol';
import { config } from './scorer-config';
import { loadSmall } from './small-artifacts';

/**
 * The head as a model in `models`, its complete model loaded by `rest` (a plain load, which
 * replaces the entry). Null when the model has no head or the service cannot be reached (the
 * caller then loads the usual way).
 */
export async function loadHead(
  id: string,
  onProgress: ProgressFn | undefined,
  offered: Promise<HeadOffer | null>,
  rest: () => Promise<Loaded>,
): Promise<Loaded | null> {
  const headPath = `${modelPath(id)}/head`;
  const report = (phase: Progress['phase'], loaded: number, total: number): void =>
    onProgress?.({
      artifact: 'model',
      name: `${id}#head`,
      phase,
      loadedBytes: loaded,
      totalBytes: total,
      fromCache: false,
    });
  const catalogP = phase('catalog', () => fetchCatalogEntry(id));
  // The page's download of the head (head-offer.ts), started while this worker was starting, or our own.
  const headP = phase('download-head', async () => {
    const offer = await offered;
    if (offer?.kind === 'http') {
      // Verified like our own download; should it not match (damaged on the way), we download it again.
      const fromPage = await fetchArtifact(config.baseUrl, config.token, headPath, undefined, report, offer).catch(
        () => null,
      );
      if (fromPage) {
        mark('head-from-page', performance.now());
        return fromPage;
      }
    }
    return fetchArtifact(config.baseUrl, config.token, headPath, undefined, report);
  }).catch((err: unknown) => {
    if (err instanceof NetworkUnavailable || (err instanceof ProblemError && err.problem.status === 404)) return null;
    throw err;
  });
  const catalog = await catalogP.catch(async (err: unknown) => {
    await headP.catch(() => null);
    throw err;
  });
  if (!catalog) {
    await headP.catch(() => null);
    return null;
  }
  const info: CachedModelInfo = {
    id,
    version: catalog.version,
    checksum: '',
    sha256: '',
    etag: '',
    language: catalog.language,
    bytes: 0,
    cachedAt: new Date().toISOString(),
    mapperBundles: catalogBundles(catalog),
  };
  // Language data, stored seeds and the bundles the waiting requests name download (and are
  // cached) beside the head: the first answer needs them, and after the head they would share the
  // link with the full model's download. The other bundles come with the full model.
  const smallP = loadSmall(catalog.language, onProgress, true);
  const bundles = new Bundles(info, onProgress, true, true);
  readHintedBundles(bundles);
  // While the head downloads, the memory its matrix will be copied into is mapped (~20 ms of page
  // faults that would otherwise come after the download, before the first score).
  if (catalog.dimensions && catalog.vocabularySize)
    void getKernels()
      .then((k) =>
        phase('prefault', () => k.prefault(Math.min(HEAD_ROWS, catalog.vocabularySize!), catalog.dimensions!)),
      )
      .catch(() => {});
  const head = await headP;
  if (!head || head.status !== 200) {
    await smallP.catch(() => null);
    return null;
  }
  const parsed = phase('parse-verify-head', () => parseArtifact(head.bytes!));
  const full = (parsed.manifest as HeadManifest).partialOf;
  // A head of another version than the catalog's (replaced meanwhile): load the usual way.
  if (!full || full.id !== id || full.version !== catalog.version) {
    await smallP.catch(() => null);
    return null;
  }
  const k = await getKernels();
  // Views into the downloaded head, no copies (the head is dropped once the full model is in).
  const headModel = phase('build-head', () => EmbeddingModel.fromParsed(parsed, k, { retainBuffer: true }));
  await smallP;
  report('partial', head.bytes!.byteLength, head.bytes!.byteLength);
  return partialLoaded(
    id,
    headModel,
    full,
    {
      id,
      version: full.version ?? catalog.version,
      checksum: full.checksum,
      language: full.language,
      vocabularySize: full.vocabularySize,
      dimensions: headModel.dims,
      mapperBundles: info.mapperBundles,
      fromCache: false,
      online: true,
      bytes: head.bytes!.byteLength,
      partial: true,
    },
    bundles,
    // The complete model gets (downloads and caches) the full bundles.
    rest,
  );
}
