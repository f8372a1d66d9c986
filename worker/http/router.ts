/** A feature's sub-app (mounted by worker/app.ts with app.route(base, subApp)): validation failures of its zod-openapi routes become 422 VALIDATION_FAILED. */
import { OpenAPIHono, type Hook } from '@hono/zod-openapi';
import { ApiError, validationFailed } from '../../core/problem';
import type { AppEnv } from '../env';

export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (result.success) return;
  const error = validationFailed(result.error.issues);
  // A query has few parameters: the detail names each refused one (an unknown sort field lists the allowed ones).
  if (result.target === 'query' && error.errors)
    throw new ApiError(
      'VALIDATION_FAILED',
      `Invalid query parameters: ${error.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`,
      { errors: error.errors },
    );
  throw error;
};

export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}
