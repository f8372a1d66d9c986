/**
 * Subrequests per request of each endpoint family, counted from the code path (a static table, not
 * measured: Miniflare does not count subrequests). Every R2, KV, D1 and Durable Object call and
 * every service binding call of the request is counted, on the API Worker and on the model hosts
 * it reaches (summed: conservative). A Durable Object's own storage or D1 calls are its own
 * invocation's and are not counted.
 *
 * typical: cold isolates (every load and lookup happens), an Idempotency-Key sent, no failure.
 * worst:   also a JWKS fetch, every repeatable meter call retried to its last attempt, a model
 *          whose last load failed, an unknown mapper after every known bundle (a cold catalog
 *          read), and for plagiarism checks every candidate's text replaced concurrently.
 * The check fails when the typical count exceeds the plan's limit and warns on the worst one.
 * test/node/limits-check.test.ts checks the code constants this table repeats.
 */
import { LIMITS } from '../../core/limits';
import { R2_PREFIXES } from '../../core/storage-keys';
import type { Placement } from '../../core/placement';
import { SUBREQUESTS, WORKERS_LIMITS_URL, type Plan } from './figures';
import { row, type LimitRow } from './table';

/** worker/quotas/meter-client.ts ATTEMPTS_WHEN_RETRYABLE: a repeatable meter call's attempts. */
export const METER_ATTEMPTS = 3;
/** worker/plagiarism/local.ts MAX_CANDIDATES: source texts read per check. */
export const PLAGIARISM_CANDIDATES = 25;
/** worker/plagiarism/provider.ts HTTP_DEFAULTS.retries: retries of the http provider's upstream call. */
export const PLAGIARISM_HTTP_RETRIES = 2;
/** worker/dimensions/store.ts: stored seeds are read in D1 statements of 90 ids. */
export const SEED_IDS_PER_STATEMENT = 90;
/** worker/catalog/store.ts listKeys: R2 list pages of 1,000 keys. */
const LIST_PAGE = 1000;

interface Step {
  what: string;
  typical: number;
  worst: number;
}

/** What the counts depend on in this deployment. */
export interface SubrequestContext {
  /** Most mapper bundles one model has (a request may ask a variable of each). */
  bundlesPerModel: number;
  /** R2 keys the catalog lists under models/ and mappers/, and the sidecars it reads. */
  modelKeys: number;
  mapperKeys: number;
  catalogSidecars: number;
  /** Whether a model is aligned to English (its dimensions fetch the English companion's rows). */
  alignedModels: boolean;
  /** Whether the placement row-shards a model (its part calls are not in this table). */
  sharded: boolean;
}

/** The context of a deployment: its R2 keys (what the deploy uploads) and its placement. */
export function subrequestContext(
  r2Keys: readonly string[],
  placement: Placement,
  manifests: ReadonlyArray<{ features?: readonly string[] }>,
): SubrequestContext {
  const bundles = new Map<string, number>();
  for (const k of r2Keys) {
    const m = /^mappers\/([^/]+)\/[^/]+\.bin$/.exec(k);
    if (m) bundles.set(m[1]!, (bundles.get(m[1]!) ?? 0) + 1);
  }
  return {
    bundlesPerModel: Math.max(0, ...bundles.values()),
    modelKeys: r2Keys.filter((k) => k.startsWith(R2_PREFIXES.models)).length,
    mapperKeys: r2Keys.filter((k) => k.startsWith(R2_PREFIXES.mappers)).length,
    catalogSidecars: r2Keys.filter((k) => /^models\/[^/]+\.json$/.test(k) || /^mappers\/[^/]+\/[^/]+\.json$/.test(k))
      .length,
    alignedModels: manifests.some((m) => m.features?.includes('aligned-en')),
    sharded: Object.keys(placement.sharded ?? {}).length > 0,
  };
}

const step = (what: string, typical: number, worst = typical): Step => ({ what, typical, worst });

/** The steps of each endpoint family, with the file each count comes from. */
export function subrequestSteps(ctx: SubrequestContext): Record<string, Step[]> {
  const a = METER_ATTEMPTS;
  const jwks = step('JWKS fetch (worker/auth.ts, cold keys)', 0, 1);
  const idempotency = [
    step('meter claimKey (worker/idempotency.ts)', 1, a),
    step('meter completeKey or releaseKey', 1, a),
  ];
  const charge = step('meter charge (worker/quotas/charge.ts)', 1, a);
  // Admission before any work (worker/admission/): one meter call (never repeated; the isolate's
  // copy may answer instead), the catalog for the request's checks (cached in the isolate; cold:
  // KV's generation and entry), and per mapper bundle the cached catalog does not list, an R2 HEAD.
  const admission = step('meter admit (worker/admission/admit.ts)', 1);
  const checks = step(
    'catalog for the request checks (worker/admission/request-checks.ts; cold: KV generation + entry)',
    0,
    2,
  );
  const unlisted = step(
    'R2 HEAD of a mapper bundle the cached catalog does not list (worker/admission/request-checks.ts)',
    0,
    LIMITS.mapperKeysPerRequest,
  );
  const host = step('service binding RPC to the model host (worker/hosts/router.ts)', 1);
  // worker/sources/models.ts: manifest GET, language size HEAD, artifact HEAD, artifact GET; after a failed load one more HEAD.
  const model = step('model load: manifest GET, language HEAD, artifact HEAD + GET (worker/sources/models.ts)', 4, 5);
  const language = step('language data GET (worker/sources/language-data.ts)', 1);
  const catalog =
    2 +
    Math.max(1, Math.ceil(ctx.modelKeys / LIST_PAGE)) +
    Math.max(1, Math.ceil(ctx.mapperKeys / LIST_PAGE)) +
    ctx.catalogSidecars +
    1;
  const bundles = step(
    `mapper bundle GETs (worker/sources/index.ts; ${ctx.bundlesPerModel} bundles; worst: an unknown one and a cold catalog read, ${catalog} calls)`,
    ctx.bundlesPerModel,
    ctx.bundlesPerModel + 1 + catalog,
  );
  const seeds = step(
    `stored seeds D1 SELECTs (worker/dimensions/store.ts; ${LIMITS.dimensionsPerRequest} dimension ids)`,
    Math.ceil(LIMITS.dimensionsPerRequest / SEED_IDS_PER_STATEMENT),
  );
  const companion = ctx.alignedModels
    ? [step("English companion's rows: RPC to its host and its cold model load (worker/hosts/host.ts)", 1 + 4, 1 + 5)]
    : [];
  const metered = [jwks, ...idempotency, admission, charge];
  // The stored seeds are read for the checks (worker/admission/request-checks.ts) and by the engine.
  const scoring = [checks, unlisted, seeds, host, model, seeds, bundles, ...companion];
  const candidates = PLAGIARISM_CANDIDATES;
  return {
    'text-scores': [...metered, ...scoring, language],
    'word-scores find-and-score': [...metered, ...scoring, step('language data GET (a dimension with expand)', 1)],
    'word-scores whitelist': [...metered, ...scoring, step('language data GET (a dimension with expand)', 1)],
    tokenizations: [...metered, host, step('language data HEAD + GET (worker/sources/language-data.ts)', 2)],
    'autocomplete-suggestions': [jwks, checks, admission, host, model],
    'word-availabilities': [jwks, checks, admission, host, model],
    'word-similarity-matrices': [jwks, checks, admission, host, model],
    'plagiarism-checks (local)': [
      ...metered,
      step('D1 candidates SELECT (worker/plagiarism/corpus.ts)', 1),
      step(
        `R2 GET of ${candidates} candidate texts (worker/plagiarism/local.ts; worst: each replaced, D1 re-read + R2 GET)`,
        candidates,
        3 * candidates,
      ),
    ],
    'plagiarism-checks (http)': [
      ...metered,
      step(
        `upstream fetch (worker/plagiarism/http.ts; ${PLAGIARISM_HTTP_RETRIES} retries by default)`,
        1,
        1 + PLAGIARISM_HTTP_RETRIES,
      ),
    ],
  };
}

const sum = (steps: Step[], k: 'typical' | 'worst'): number => steps.reduce((n, s) => n + s[k], 0);

/** One row per family: the typical count against the plan's limit (hard), the worst in the note (warned). */
export function subrequestRows(ctx: SubrequestContext, plan: Plan): LimitRow[] {
  const limit = SUBREQUESTS[plan];
  const rows = Object.entries(subrequestSteps(ctx)).map(([family, steps]) => {
    const typical = sum(steps, 'typical');
    const worst = sum(steps, 'worst');
    const r = row({
      check: 'subrequests',
      subject: family,
      value: typical,
      unit: 'count',
      measured: false,
      limit,
      source: `${WORKERS_LIMITS_URL}#subrequests`,
      hard: true,
      note: `static count from the code path (not measured): typical ${typical}, worst ${worst}: ${steps
        .filter((s) => s.worst > 0)
        .map((s) => (s.typical === s.worst ? `${s.typical} ${s.what}` : `${s.typical}-${s.worst} ${s.what}`))
        .join('; ')}`,
    });
    return r.status === 'ok' && worst > limit ? { ...r, status: 'warn' as const } : r;
  });
  if (ctx.sharded)
    rows.push(
      row({
        check: 'subrequests',
        subject: 'row-sharded models',
        value: 0,
        unit: 'count',
        measured: false,
        limit,
        source: `${WORKERS_LIMITS_URL}#subrequests`,
        hard: false,
        status: 'warn',
        note: 'the placement row-shards a model: its part calls (worker/hosts/sharded.ts) are not counted above',
      }),
    );
  return rows;
}
