/**
 * `sort` and `order` on every list endpoint (decisions.md "Contract precision (turn 4)"): the
 * default order is the one without them, `order=desc` reverses `asc` on a field whose values
 * differ, the sort comes before the paging, and an unknown field or order, or a size above the
 * list's maximum, is 422 VALIDATION_FAILED. Expected orders are computed here from the answers.
 */
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeModel, mintToken, uploadMapper, uploadModel } from './support/api';
import { addBonus, createWorkspace, setAnchorDay, setLimits, uniqueWorkspaceId } from './support/quotas';

type Item = Record<string, unknown>;

interface ListCase {
  name: string;
  /** The list's path with the filter that keeps it to this file's entries (if any). */
  path: () => string;
  token: () => Promise<string>;
  fields: string[];
  defaultSort: string;
  /** The entity's id or key: the tie-break, ascending. */
  tie: string;
  maxSize: number;
  /** A field whose values all differ and whose order is not the default one. */
  distinct: string;
  /** An entity's identity in the answers. */
  identity: (item: Item) => unknown;
}

const adminToken = () => mintToken({ workspaceId: 'ops', scope: 'admin', sub: 'sort-admin' });
const catalogToken = () => mintToken({ workspaceId: 'ws_demo', sub: 'sort-test' });

// Unique to this file: the catalog filters keep the lists to the entries made here.
const COUNTRY = 'QT';
const quotaWs = uniqueWorkspaceId('sortq');
const ledgerWs = uniqueWorkspaceId('sortl');
const auditWs = uniqueWorkspaceId('sorta');
const pageTag = crypto.randomUUID().slice(0, 8);

const cases: ListCase[] = [
  {
    name: 'embedding models',
    path: () => `/api/v1/embedding-models?country=${COUNTRY}`,
    token: catalogToken,
    fields: ['id', 'language', 'country', 'label', 'version', 'tokenCount', 'vocabularySize', 'dimensions'],
    defaultSort: 'id',
    tie: 'id',
    maxSize: 100,
    distinct: 'language',
    identity: (m) => m.id,
  },
  {
    name: 'mappers',
    path: () => `/api/v1/mappers?country=${COUNTRY}`,
    token: catalogToken,
    fields: ['key', 'label', 'translationKey', 'language', 'country'],
    defaultSort: 'key',
    tie: 'key',
    maxSize: 100,
    distinct: 'label',
    identity: (e) => `${String(e.key)}|${String(e.language)}|${String(e.country)}`,
  },
  {
    name: 'workspace quotas',
    path: () => `/api/usage-service/v1/workspaces/${quotaWs}/quotas`,
    token: () => mintToken({ workspaceId: quotaWs }),
    fields: [
      'usageTypeKey',
      'limitAmount',
      'limitAmountDaily',
      'usedAmount',
      'usedAmountDaily',
      'availableAmount',
      'bonusAmount',
      'spilloverAmount',
    ],
    defaultSort: 'usageTypeKey',
    tie: 'usageTypeKey',
    maxSize: 200,
    distinct: 'limitAmount',
    identity: (q) => q.usageTypeKey,
  },
  {
    name: 'usage types',
    path: () => '/api/usage-service/v1/usage-types',
    token: catalogToken,
    fields: ['key', 'displayName', 'fairUsePolicyLimit'],
    defaultSort: 'key',
    tie: 'key',
    maxSize: 200,
    // images 5,000, plagiarismChecks none (null sorts first), tokens 50,000,000.
    distinct: 'fairUsePolicyLimit',
    identity: (t) => t.key,
  },
  {
    name: 'usage ledger (admin)',
    path: () => `/api/admin/v1/workspaces/${ledgerWs}/usage-ledger`,
    token: adminToken,
    fields: ['id', 'usageTypeKey', 'amount', 'requestId', 'cycleStart', 'createdAt'],
    defaultSort: 'id',
    tie: 'id',
    maxSize: 200,
    distinct: 'amount',
    identity: (e) => e.id,
  },
  {
    name: 'audit log (admin)',
    path: () => `/api/admin/v1/workspaces/${auditWs}/audit-log`,
    token: adminToken,
    fields: ['id', 'action', 'usageTypeKey', 'actor', 'createdAt'],
    defaultSort: 'id',
    tie: 'id',
    maxSize: 200,
    distinct: 'action',
    identity: (e) => e.id,
  },
  {
    name: 'stored dimensions (admin)',
    path: () => '/api/admin/v1/dimensions',
    token: adminToken,
    fields: ['id', 'name', 'language', 'createdAt'],
    defaultSort: 'id',
    tie: 'id',
    maxSize: 200,
    // The seeded dimensions: Positive, Negative, Science & technology, ...
    distinct: 'name',
    identity: (d) => d.id,
  },
  {
    name: 'plagiarism corpus pages (admin)',
    path: () => '/api/admin/v1/plagiarism/pages',
    token: adminToken,
    fields: ['id', 'url', 'title', 'wordCount', 'characterCount', 'fingerprintCount', 'createdAt', 'updatedAt'],
    defaultSort: 'id',
    tie: 'id',
    maxSize: 200,
    distinct: 'title',
    identity: (p) => p.id,
  },
];

interface Answer {
  status: number;
  type: string;
  body: { data: Item[]; page: { size: number; totalElements: number; currentPage: number } } & {
    code?: string;
    detail?: string;
  };
}

async function get(c: ListCase, query: string): Promise<Answer> {
  const path = c.path();
  const res = await SELF.fetch(`http://x${path}${path.includes('?') ? '&' : '?'}${query}`, {
    headers: { authorization: `Bearer ${await c.token()}` },
  });
  return {
    status: res.status,
    type: res.headers.get('content-type') ?? '',
    body: (await res.json()) as Answer['body'],
  };
}

async function list(c: ListCase, query: string): Promise<Item[]> {
  const a = await get(c, query);
  expect(a.status, `${c.name} ?${query}: ${JSON.stringify(a.body).slice(0, 300)}`).toBe(200);
  return a.body.data;
}

/** The order the contract gives: nulls first, numbers by value, strings by UTF-16 code units; ties by `tie` ascending, then as given. */
function compare(a: unknown, b: unknown): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function expectedOrder(items: Item[], field: string, order: 'asc' | 'desc', tie: string): Item[] {
  const dir = order === 'desc' ? -1 : 1;
  return [...items].sort((a, b) => dir * compare(a[field], b[field]) || compare(a[tie], b[tie]));
}

beforeAll(async () => {
  // Models: id order a < b < c < d, language order the other way round.
  const languages = ['zz', 'yy', 'xx', 'ww'];
  const models = languages.map((language, i) =>
    makeModel(`sort-${'abcd'[i]}`, { seed: 300 + i, country: COUNTRY, language, extra: i * 3 }),
  );
  for (const m of models) await uploadModel(m);
  // Mapper entries: key order k1 < k2 < k3, labels the other way round.
  const n = models[0].words.length;
  for (const [key, label] of [
    ['sortk1', 'Zeta'],
    ['sortk2', 'Mu'],
    ['sortk3', 'Alpha'],
  ]) {
    await uploadMapper(
      models[0],
      key,
      { v: new Float64Array(n) },
      {
        country: COUNTRY,
        language: 'zz',
        label,
      },
    );
  }

  // Quotas: limitAmount order tokens < plagiarismChecks < images (the key order is the reverse).
  await createWorkspace(quotaWs, 1, [
    { usageTypeKey: 'images', limitAmount: 300, limitAmountDaily: 30 },
    { usageTypeKey: 'plagiarismChecks', limitAmount: 200, limitAmountDaily: 20 },
    { usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 10 },
  ]);

  // Ledger rows in id order with amounts out of order.
  await createWorkspace(ledgerWs, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
  for (const [amount, request] of [
    [30, 'req-c'],
    [10, 'req-a'],
    [40, 'req-d'],
    [20, 'req-b'],
  ] as const) {
    await env.DB.prepare(
      'INSERT INTO usage_ledger (workspace_id, usage_type_key, amount, request_id, idempotency_key, cycle_start, created_at) ' +
        "VALUES (?1, 'tokens', ?2, ?3, NULL, '2031-05-01', '2031-05-02T00:00:00.000Z')",
    )
      .bind(ledgerWs, amount, request)
      .run();
  }

  // Audit entries: workspace.created, quota.limits_set, quota.bonus_added, workspace.updated.
  await createWorkspace(auditWs, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 10 }]);
  expect((await setLimits(auditWs, 'tokens', 200, 20)).status).toBe(200);
  expect((await addBonus(auditWs, 'tokens', 5)).status).toBe(200);
  expect((await setAnchorDay(auditWs, 15)).status).toBe(200);

  // Corpus pages: id order Gamma, Alpha, Beta.
  for (const [title, words] of [
    ['Gamma', 5],
    ['Alpha', 9],
    ['Beta', 7],
  ] as const) {
    const text = Array.from({ length: words }, (_, i) => `s${pageTag}${title.toLowerCase()}${i}`).join(' ');
    const res = await SELF.fetch('http://x/api/admin/v1/plagiarism/pages', {
      method: 'POST',
      headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `https://example.com/sort-${pageTag}/${title}`, title, text }),
    });
    expect(res.status, await res.clone().text()).toBe(201);
  }
});

describe.each(cases)('$name', (c) => {
  it('without sort and order: the order of today (default field ascending), the same as naming them', async () => {
    const all = await list(c, `size=${c.maxSize}`);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const expected = expectedOrder(all, c.defaultSort, 'asc', c.tie).map(c.identity);
    expect(all.map(c.identity)).toEqual(expected);
    const named = await list(c, `size=${c.maxSize}&sort=${c.defaultSort}&order=asc`);
    expect(named.map(c.identity)).toEqual(expected);
  });

  it('sort=<field>&order=desc is the reverse of asc where the values differ; asc is not the default order', async () => {
    const all = await list(c, `size=${c.maxSize}`);
    const asc = await list(c, `size=${c.maxSize}&sort=${c.distinct}&order=asc`);
    const desc = await list(c, `size=${c.maxSize}&sort=${c.distinct}&order=desc`);
    expect(new Set(asc.map((x) => x[c.distinct])).size, 'the values differ').toBe(asc.length);
    expect(asc.map(c.identity)).toEqual(expectedOrder(all, c.distinct, 'asc', c.tie).map(c.identity));
    expect(desc.map(c.identity)).toEqual(asc.map(c.identity).reverse());
    expect(asc.map(c.identity), 'the data makes the sort visible').not.toEqual(all.map(c.identity));
    // Without order: ascending.
    expect((await list(c, `size=${c.maxSize}&sort=${c.distinct}`)).map(c.identity)).toEqual(asc.map(c.identity));
  });

  it('every sort field in both orders: sorted before paging, ties by the id or key ascending', async () => {
    const all = await list(c, `size=${c.maxSize}`);
    for (const field of c.fields) {
      for (const order of ['asc', 'desc'] as const) {
        const expected = expectedOrder(all, field, order, c.tie).map(c.identity);
        const got = await list(c, `size=${c.maxSize}&sort=${field}&order=${order}`);
        expect(got.map(c.identity), `${field} ${order}`).toEqual(expected);
      }
    }
    // Page 2 of size 1 is the second entry of the whole sorted list, not of an unsorted page.
    const second = await get(c, `size=1&page=2&sort=${c.distinct}&order=desc`);
    expect(second.status).toBe(200);
    expect(second.body.data.map(c.identity)).toEqual([
      expectedOrder(all, c.distinct, 'desc', c.tie).map(c.identity)[1],
    ]);
    expect(second.body.page.totalElements).toBe(all.length);
  });

  it('an unknown sort field is 422 VALIDATION_FAILED naming the allowed fields', async () => {
    for (const field of ['nope', 'constructor', '__proto__', 'toString', '', c.fields[0].toUpperCase()]) {
      const a = await get(c, `sort=${encodeURIComponent(field)}`);
      expect(a.status, `sort=${field}`).toBe(422);
      expect(a.type).toContain('application/problem+json');
      expect(a.body.code).toBe('VALIDATION_FAILED');
      for (const allowed of c.fields) expect(a.body.detail).toContain(allowed);
    }
  });

  it('order=sideways (or any other than asc and desc) is 422 VALIDATION_FAILED', async () => {
    for (const order of ['sideways', 'ASC', 'descending', '']) {
      const a = await get(c, `sort=${c.defaultSort}&order=${order}`);
      expect(a.status, `order=${order}`).toBe(422);
      expect(a.type).toContain('application/problem+json');
      expect(a.body.code).toBe('VALIDATION_FAILED');
      expect(a.body.detail).toContain('asc or desc');
    }
  });

  it(`size keeps its maximum: ${c.maxSize} is accepted, one more is 422`, async () => {
    const max = await get(c, `size=${c.maxSize}&sort=${c.distinct}&order=desc`);
    expect(max.status).toBe(200);
    expect(max.body.page.size).toBe(c.maxSize);
    const over = await get(c, `size=${c.maxSize + 1}&sort=${c.distinct}&order=desc`);
    expect(over.status).toBe(422);
    expect(over.body.code).toBe('VALIDATION_FAILED');
  });

  it('the OpenAPI document lists sort (its fields, default) and order (asc, desc; default asc)', async () => {
    const res = await SELF.fetch('http://x/api/openapi.json');
    const doc = (await res.json()) as {
      paths: Record<string, { get: { parameters: Array<{ name: string; in: string; schema: Item }> } }>;
    };
    const path = c.path().split('?')[0];
    const route = Object.keys(doc.paths).find((p) => new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
    expect(route, path).toBeDefined();
    const params = doc.paths[route!].get.parameters.filter((p) => p.in === 'query');
    const sort = params.find((p) => p.name === 'sort');
    const order = params.find((p) => p.name === 'order');
    expect(sort?.schema).toMatchObject({ type: 'string', enum: c.fields, default: c.defaultSort });
    expect(order?.schema).toMatchObject({ type: 'string', enum: ['asc', 'desc'], default: 'asc' });
    expect(params.find((p) => p.name === 'size')?.schema).toMatchObject({ maximum: c.maxSize });
  });
});
