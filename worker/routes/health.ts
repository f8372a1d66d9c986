import { createRoute, z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';

const route = createRoute({
  method: 'get',
  path: '/api/health',
  summary: 'Liveness probe (no auth)',
  responses: {
    200: { description: 'The Worker is up', content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } } },
  },
});

export function registerHealth(app: OpenAPIHono<AppEnv>): void {
  app.openapi(route, (c) => c.json({ status: 'ok' as const }, 200));
}
