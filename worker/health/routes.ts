import { createRoute, z } from '@hono/zod-openapi';
import { newRouter } from '../http/router';

const route = createRoute({
  method: 'get',
  path: '/health',
  summary: 'Liveness probe (no auth)',
  responses: {
    200: {
      description: 'The Worker is up',
      content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } },
    },
  },
});

export const healthRoutes = newRouter();

healthRoutes.openapi(route, (c) => c.json({ status: 'ok' as const }, 200));
