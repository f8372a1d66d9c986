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
import type { Env } from '../env';
import { hostsMemory } from '../hosts/router';
import { isolateGate } from '../hosts/gate';

/**
 * This isolate's identity: a new isolate (a restart, an eviction) gets a new id (bench:soak counts
 * them). Drawn at the first request: Workers allow no random values in the global scope.
 */
let isolateId: string | null = null;

const IsolateMemorySchema = z.object({
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
        description: 'Chosen for eviction while requests use it: new requests wait for it to go and load it again',
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
  // Per-isolate state keyed by request data: must stay bounded under any traffic.
  stateEntries: z
    .object({ models: z.number().int(), modelCaches: z.number().int(), languages: z.number().int() })
    .openapi({
      description: 'Settled entries (loaded or failed); loads still running are counted in loadsInFlight',
    }),
  loadsInFlight: z.number().int().openapi({
    description:
      'Model, mapper bundle and language data loads running at this moment (they leave no entry when the id is unknown)',
  }),
  gate: z
    .object({
      queuedUnits: z.number().openapi({ description: 'Work units admitted and not finished at this moment' }),
      admitted: z.number().int().openapi({ description: 'Requests admitted to model work by this isolate' }),
      refused: z.number().int().openapi({ description: 'Requests refused with 503 HOST_BUSY by this isolate' }),
    })
    .openapi({ description: "The isolate's admission of model work (worker/hosts/gate.ts)" }),
});

type IsolateMemory = z.infer<typeof IsolateMemorySchema>;

const HostMemorySchema = z.object({
  name: z
    .string()
    .openapi({ description: 'The model host (build/generated/placement.json), bound to the API Worker as `binding`' }),
  binding: z.string(),
  placedModels: z.array(z.string()).openapi({ description: 'The models placed on the host' }),
  memory: IsolateMemorySchema.nullable().openapi({
    description:
      "What the host's isolate that answered holds, as its memory budget counts it; null when it did not answer",
  }),
  error: z.string().optional().openapi({ description: 'Why the host did not answer' }),
});

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
          schema: IsolateMemorySchema.extend({
            hosts: z.array(HostMemorySchema).openapi({
              description:
                'Each model host of the placement (empty when this Worker scores in-process): the memory of the isolate that answered',
            }),
          }),
        },
      },
    },
    ...errorResponses(401, 403),
  },
});

export const diagnosticsRoutes = newRouter();

/** What this isolate's models and language data hold (the body of a host's answer too: worker/hosts/host.ts). */
export function isolateMemory(env: Env): IsolateMemory {
  const mem = registryMemory(env);
  return {
    isolateId: (isolateId ??= crypto.randomUUID()),
    wasmMemoryBytes: mem.wasmMemoryBytes,
    models: mem.models,
    languages: languageMemory(),
    cacheBytes: mem.models.reduce((s, m) => s + m.cacheBytes, 0),
    totalBytes: mem.totalBytes,
    evictions: mem.evictions,
    budgetBytes: mem.budgetBytes,
    stateEntries: {
      models: settledRegistrySize(),
      modelCaches: modelCacheEntries(),
      languages: languageCacheSize(),
    },
    loadsInFlight: modelLoadsInFlight() + languageLoadsInFlight(),
    gate: { queuedUnits: isolateGate.queuedUnits, admitted: isolateGate.admitted, refused: isolateGate.refused },
  };
}

diagnosticsRoutes.openapi(route, async (c) => {
  return c.json({ ...isolateMemory(c.env), hosts: await hostsMemory(c.env) }, 200);
});
