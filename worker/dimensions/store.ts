/**
 * Stored dimensions (D1 table `dimensions`, worker/migrations/0002_dimensions.sql): seed words
 * merged into request dimensions of type `dimension`. Rows are insert-only, so found rows are
 * cached per isolate; unknown ids are looked up again on every request.
 */
import type { StoredDimensionSeeds } from '../../core/scoring';
import type { Env } from '../env';
import type { z } from '@hono/zod-openapi';
import { listSort, sqlOrderBy, type SortOrder } from '../http/openapi';
import { FIRST_CREATED_DIMENSION_ID, MAX_DIMENSION_ID, type StoredDimensionSchema } from './schemas';

export type StoredDimension = z.infer<typeof StoredDimensionSchema>;

interface Row {
  id: number;
  name: string;
  language: string;
  description: string;
  words: string;
  created_at: string;
}

const cache = new Map<number, StoredDimension>();

/** The columns of a Row. */
const COLUMNS = 'id, name, language, description, words, created_at';

function fromRow(r: Row): StoredDimension {
  let words: string[] = [];
  try {
    const parsed = JSON.parse(r.words) as unknown;
    if (Array.isArray(parsed)) words = parsed.filter((w): w is string => typeof w === 'string');
  } catch {
    // CHECK constraint keeps this valid; tolerate anyway.
  }
  return { id: r.id, name: r.name, language: r.language, description: r.description, words, createdAt: r.created_at };
}

/** Stored seeds of these dimension ids (missing ids are simply absent). */
export async function storedSeeds(env: Env, ids: readonly number[]): Promise<StoredDimensionSeeds> {
  const out = new Map<number, { words: string[] }>();
  const missing: number[] = [];
  for (const id of ids) {
    const hit = cache.get(id);
    if (hit) out.set(id, hit);
    else missing.push(id);
  }
  // D1 binds at most 100 parameters per statement.
  for (let i = 0; i < missing.length; i += 90) {
    const chunk = missing.slice(i, i + 90);
    const res = await env.DB.prepare(
      `SELECT ${COLUMNS} FROM dimensions WHERE id IN (${chunk.map(() => '?').join(',')})`,
    )
      .bind(...chunk)
      .all<Row>();
    for (const r of res.results) {
      const d = fromRow(r);
      cache.set(d.id, d);
      out.set(d.id, d);
    }
  }
  return out;
}

/** Every stored dimension, by id (the offline seeds download). */
export async function allDimensions(env: Env): Promise<StoredDimension[]> {
  const res = await env.DB.prepare(`SELECT ${COLUMNS} FROM dimensions ORDER BY id`).all<Row>();
  return res.results.map(fromRow);
}

/** One stored dimension, or null. */
export async function getDimension(env: Env, id: number): Promise<StoredDimension | null> {
  const row = await env.DB.prepare(`SELECT ${COLUMNS} FROM dimensions WHERE id = ?`).bind(id).first<Row>();
  return row ? fromRow(row) : null;
}

/** Sort fields of the dimension list (columns; dimensions are unique by id). */
export const DIMENSION_SORT = listSort(
  { id: 'id', name: 'name', language: 'language', createdAt: 'created_at' },
  'id',
  'id',
);

export async function listDimensions(
  env: Env,
  page: number,
  size: number,
  sort: (typeof DIMENSION_SORT.fields)[number] = 'id',
  order: SortOrder = 'asc',
): Promise<{ total: number; items: StoredDimension[] }> {
  const total = (await env.DB.prepare('SELECT COUNT(*) AS n FROM dimensions').first<{ n: number }>())?.n ?? 0;
  const orderBy = sqlOrderBy(DIMENSION_SORT, sort, order);
  const res = await env.DB.prepare(`SELECT ${COLUMNS} FROM dimensions ORDER BY ${orderBy} LIMIT ? OFFSET ?`)
    .bind(size, (page - 1) * size)
    .all<Row>();
  return { total, items: res.results.map(fromRow) };
}

/** Inserts a dimension; null when the id is taken. Without an id, the lowest free id in FIRST_CREATED_DIMENSION_ID..MAX_DIMENSION_ID. */
export async function createDimension(
  env: Env,
  input: { id?: number; name: string; language: string; description?: string; words: string[] },
  createdBy: string | null,
): Promise<StoredDimension | null> {
  const words = JSON.stringify(input.words);
  const row = await env.DB.prepare(
    `INSERT INTO dimensions (id, name, language, description, words, created_by)
     VALUES (COALESCE(?1, (SELECT MIN(c.id + 1) FROM (SELECT ?7 - 1 AS id UNION ALL SELECT id FROM dimensions WHERE id >= ?7 - 1) c
                          WHERE c.id < ?8 AND NOT EXISTS (SELECT 1 FROM dimensions d WHERE d.id = c.id + 1))), ?2, ?3, ?4, ?5, ?6)
     ON CONFLICT (id) DO NOTHING
     RETURNING ${COLUMNS}`,
  )
    .bind(
      input.id ?? null,
      input.name,
      input.language,
      input.description ?? '',
      words,
      createdBy,
      FIRST_CREATED_DIMENSION_ID,
      MAX_DIMENSION_ID,
    )
    .first<Row>();
  return row ? fromRow(row) : null;
}
