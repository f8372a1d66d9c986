/** A feature's sub-app (mounted by worker/app.ts with app.route(base, subApp)): validation failures of its zod-openapi routes become 422 VALIDATION_FAILED. */
import { OpenAPIHono, type Hook } from '@hono/zod-openapi';
import { validationFailed } from '../../core/problem';
import type { AppEnv } from '../env';

export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) throw validationFailed(result.error.issues);
};

export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}
