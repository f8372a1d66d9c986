/**
 * Resolves what a scoring request refers to: mapper variable ids -> loaded bundles.
 * Models: worker/models.ts; stored dimensions: worker/dimensions.ts.
 */
import { splitMapperVariableId } from '../core/mapper-bundle';
import type { ResolvedMapper } from '../core/scoring';
import { ApiError } from './problem';
import { getCatalog } from './catalog';
import { getBundle, type LoadedModel } from './models';
import type { Env } from './env';
import type { WaitUntil } from './shared-load';

/**
 * Mapper variable id = bundle key + '_' + variable; variables never contain '_' (core/mapper-bundle.ts),
 * so the bundle key is everything before the last '_'. Repeated ids are scored once.
 * Unknown: 422 MAPPER_NOT_FOUND; known only for other models (per the cached catalog,
 * worker/catalog.ts): 422 MAPPER_MODEL_MISMATCH.
 */
export async function resolveMappers(
  env: Env,
  model: LoadedModel,
  keys: readonly string[] | undefined,
  ctx?: WaitUntil,
  field = 'mapperKeys',
): Promise<ResolvedMapper[]> {
  const out: ResolvedMapper[] = [];
  const seen = new Set<string>();
  for (const [i, id] of (keys ?? []).entries()) {
    if (seen.has(id)) continue;
    seen.add(id);
    const split = splitMapperVariableId(id);
    const bundle = split ? await getBundle(env, model, split.bundleKey, ctx) : null;
    if (split && bundle && bundle.has(split.variable)) {
      out.push({ id, variable: split.variable, values: bundle });
      continue;
    }
    const elsewhere = split
      ? (await getCatalog(env, ctx)).mappers.filter((b) => b.modelId !== model.id && b.key === split.bundleKey && b.variables.includes(split.variable))
      : [];
    if (elsewhere.length > 0) {
      throw new ApiError('MAPPER_MODEL_MISMATCH', `Mapper '${id}' exists for ${elsewhere.map((b) => `'${b.modelId}'`).join(', ')}, not for embedding model '${model.id}'`, {
        errors: [{ path: `${field}.${i}`, message: 'mapper belongs to another embedding model' }],
      });
    }
    throw new ApiError('MAPPER_NOT_FOUND', `No mapper '${id}' for embedding model '${model.id}'`, {
      errors: [{ path: `${field}.${i}`, message: 'unknown mapper key' }],
    });
  }
  return out;
}

/** Server-Timing: phases measured with performance.now() (workerd advances it only across I/O). */
export class Timing {
  private readonly start = performance.now();
  private last = this.start;
  private readonly parts: string[] = [];
  mark(name: string): void {
    const now = performance.now();
    this.parts.push(`${name};dur=${(now - this.last).toFixed(2)}`);
    this.last = now;
  }
  header(): string {
    return [...this.parts, `total;dur=${(performance.now() - this.start).toFixed(2)}`].join(', ');
  }
}
