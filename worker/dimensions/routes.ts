/**
 * Stored dimensions (D1): POST /api/admin/v1/dimensions creates one, GET lists them.
 * Admin scope is enforced by app.ts middleware on /api/admin/*.
 */
import { createRoute } from '@hono/zod-openapi';
import { ApiError } from '../../core/problem';
import { createDimension, DIMENSION_SORT, getDimension, listDimensions } from './store';
import { decimalInteger, errorResponses, jsonBody, listQuery, pageObject, PageSchema, security } from '../http/openapi';
import { CreateDimensionSchema, StoredDimensionSchema } from './schemas';
import { z } from '@hono/zod-openapi';
import { newRouter } from '../http/router';

const createRouteDef = createRoute({
  method: 'post',
  path: '/',
  tags: ['Admin'],
  summary: 'Create a stored dimension (seed words merged into request dimensions of type dimension)',
  security,
  request: { body: jsonBody(CreateDimensionSchema) },
  responses: {
    201: { description: 'Created', content: { 'application/json': { schema: StoredDimensionSchema } } },
    409: { description: 'The id is taken (CONFLICT)', content: { 'application/problem+json': { schema: z.any() } } },
    ...errorResponses(401, 403, 413, 422),
  },
});

const listRouteDef = createRoute({
  method: 'get',
  path: '/',
  tags: ['Admin'],
  summary: 'List stored dimensions, by id unless `sort` says otherwise',
  security,
  request: { query: listQuery(DIMENSION_SORT) },
  responses: {
    200: {
      description: 'A page of stored dimensions',
      content: { 'application/json': { schema: z.object({ page: PageSchema, data: z.array(StoredDimensionSchema) }) } },
    },
    ...errorResponses(401, 403, 422),
  },
});

const getRouteDef = createRoute({
  method: 'get',
  path: '/{id}',
  tags: ['Admin'],
  summary: 'One stored dimension (the Location of a created one)',
  security,
  request: {
    params: z.object({
      id: decimalInteger(1).openapi({ param: { name: 'id', in: 'path' }, example: 1 }),
    }),
  },
  responses: {
    200: { description: 'The stored dimension', content: { 'application/json': { schema: StoredDimensionSchema } } },
    404: { description: 'No such dimension (NOT_FOUND)', content: { 'application/problem+json': { schema: z.any() } } },
    ...errorResponses(401, 403, 422),
  },
});

export const dimensionRoutes = newRouter();

dimensionRoutes.openapi(createRouteDef, async (c) => {
  const body = c.req.valid('json');
  const created = await createDimension(c.env, body, c.get('auth').subject);
  if (!created) throw new ApiError('CONFLICT', `A dimension with id ${body.id} exists already`);
  c.header('Location', `/api/admin/v1/dimensions/${created.id}`);
  return c.json(created, 201);
});

dimensionRoutes.openapi(getRouteDef, async (c) => {
  const { id } = c.req.valid('param');
  const dimension = await getDimension(c.env, id);
  if (!dimension) throw new ApiError('NOT_FOUND', `No stored dimension ${id}`);
  return c.json(dimension, 200);
});

dimensionRoutes.openapi(listRouteDef, async (c) => {
  const { page, size, sort, order } = c.req.valid('query');
  const { total, items } = await listDimensions(c.env, page, size, sort, order);
  return c.json({ page: pageObject(page, size, total), data: items }, 200);
});
