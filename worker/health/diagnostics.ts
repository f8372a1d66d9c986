/**
 * GET /api/admin/v1/diagnostics/memory (admin scope): what this isolate holds for the models and
 * language data loaded so far, as its memory budget counts it (worker/sources/models.ts): WASM
 * linear memory (a memory per model: matrix + kernel scratch), the vocabulary/index buffers kept
 * outside WASM, the per-model caches, and the tokenizer language data. Used by `npm run bench:api`
 * and `bench:soak` (every sample at or below budgetBytes).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { modelCacheEntries, modelLoadsInFlight, registryMemory, settledRegistrySize } from '../sources/models';
import { languageCacheSize, languageLoadsInFlight, languageMemory } from '../sources/language-data';
import { errorResponses, security } from '../http/openapi';
import { newRouter } from '../http/router';

/**
 * This isolate's identity: a new isolate (a restart, an eviction) gets a new id (bench:soak counts
 * them). Drawn at the first request: Workers allow no random values in the global scope.
 */
let isolateId: string | null = null;

const route = createRoute({
  method: 'get',
  path: '/memory',
  tags: ['Admin'],
  summary: "Memory held by this isolate's loaded models and language data",
  security,
  responses: {
    200: {
      description: 'Bytes per component',
      content: {
        'application/json': {
          schema: z.object({
            isolateId: z.string().openapi({
              description: 'Random id of the isolate that answered; it changes when the runtime starts a new isolate',
            }),
            wasmMemoryBytes: z.number().int().openapi({
              description:
                "WASM linear memory of the loaded models (one memory per model: its matrix and the kernels' scratch), each counted as at least its matrix's end plus 2 MB of scratch room",
            }),
            models: z.array(
              z.object({
                id: z.string(),
                retainedBytes: z
                  .number()
                  .int()
                  .openapi({ description: 'Vocabulary, index and lookup table outside WASM memory' }),
                cacheBytes: z.number().int().openapi({
                  description: 'Normalization statistics, seed expansions and parsed mapper bundles kept for the model',
                }),
                draining: z.boolean().openapi({
                  description:
                    'Chosen for eviction while requests use it: new requests wait for it to go and load it again',
                }),
              }),
            ),
            languages: z.array(z.object({ language: z.string(), bytes: z.number().int() })),
            cacheBytes: z.number().int().openapi({ description: "Sum of the models' cacheBytes" }),
            totalBytes: z.number().int().openapi({
              description:
                "What the memory budget counts: WASM memory, the models' retained and cache bytes, language data, and the data being read or reserved for the loaded models' languages. Never above budgetBytes",
            }),
            evictions: z.number().int().openapi({
              description:
                'Models evicted (idle ones least recently used first, then drained ones) in this isolate to stay within budgetBytes',
            }),
            budgetBytes: z.number().int(),
            // Per-isolate state keyed by request data: must stay bounded under any traffic (issue 12).
            stateEntries: z
              .object({ models: z.number().int(), modelCaches: z.number().int(), languages: z.number().int() })
              .openapi({
                description: 'Settled entries (loaded or failed); loads still running are counted in loadsInFlight',
              }),
            loadsInFlight: z.number().int().openapi({
              description:
                'Model, mapper bundle and language data loads running at this moment (they leave no entry when the id is unknown)',
            }),
          }),
        },
      },
    },
    ...errorResponses(401, 403),
  },
});

export const diagnosticsRoutes = newRouter();

diagnosticsRoutes.openapi(route, async (c) => {
  const mem = registryMemory(c.env);
  const languages = languageMemory();
  const stateEntries = {
    models: settledRegistrySize(),
    modelCaches: modelCacheEntries(),
    languages: languageCacheSize(),
  };
  const loadsInFlight = modelLoadsInFlight() + languageLoadsInFlight();
  return c.json(
    {
      isolateId: (isolateId ??= crypto.randomUUID()),
      wasmMemoryBytes: mem.wasmMemoryBytes,
      models: mem.models,
      languages,
      cacheBytes: mem.models.reduce((s, m) => s + m.cacheBytes, 0),
      totalBytes: mem.totalBytes,
      evictions: mem.evictions,
      budgetBytes: mem.budgetBytes,
      stateEntries,
      loadsInFlight,
    },
    200,
  );
});
