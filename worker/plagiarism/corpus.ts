/**
 * The local provider's reference corpus: page list and fingerprint index in D1
 * (worker/migrations/0003_plagiarism.sql), full extracted texts in R2.
 *
 * Ingestion of a set of pages is one D1 batch (a transaction): it reads the pages' previous R2
 * keys, drops their old fingerprints, upserts the page rows (a known URL keeps its id) and
 * inserts the new fingerprints, so no check ever sees a half-replaced page. Each ingestion
 * writes its texts under fresh R2 keys before that batch and deletes the replaced objects
 * after it; a reader that still holds an old key re-reads the page row once. When an R2 write
 * or the batch fails, the texts already written are deleted again (best effort, logged).
 *
 * Page data goes into the statements as JSON array parameters (json_each), split into chunks of
 * at most MAX_PARAM_BYTES UTF-8 bytes, far below D1's 2,000,000-byte limit of one value; the
 * SQL texts are constant and short (D1: 100 KB per statement). Every chunk is a statement of
 * the same batch, so the ingestion stays all or nothing whatever the number of chunks. Rows are
 * mapped back to the input by position in the chunk (json_each key), never by comparing the
 * URL read back with the URL sent (D1 may not return a string exactly as it was bound).
 *
 * Lookups send the input's fingerprints as one JSON array parameter (json_each), so a check is
 * a single statement whatever the input length, well under D1's 100 bound parameters.
 */
import { fingerprints, splitWords } from '../../core/plagiarism';
import { sha256Hex } from '../../core/digest';
import { keepAlive, type WaitUntil } from '../../core/shared-load';
import { R2_KEYS } from '../../core/storage-keys';
import type { z } from '@hono/zod-openapi';
import { listSort, sqlOrderBy, type SortOrder } from '../http/openapi';
import type { CorpusPageSchema } from './schemas';

export interface PageInput {
  url: string;
  title: string;
  text: string;
}

/** A stored reference page (the PlagiarismPage of the admin API). */
export type PageRecord = z.infer<typeof CorpusPageSchema>;

export interface IngestedPage extends PageRecord {
  /** True when the URL was already in the corpus and this ingestion replaced it. */
  replaced: boolean;
}

export interface Candidate {
  id: number;
  url: string;
  title: string;
  r2Key: string;
  /** Fingerprints shared with the input. */
  shared: number;
}

interface PageRow {
  id: number;
  url: string;
  title: string;
  word_count: number;
  fingerprint_count: number;
  char_count: number;
  r2_key: string;
  content_sha256: string;
  created_at: string;
  updated_at: string;
}

const COLUMN_NAMES = [
  'id',
  'url',
  'title',
  'word_count',
  'fingerprint_count',
  'char_count',
  'r2_key',
  'content_sha256',
  'created_at',
  'updated_at',
];
const PAGE_COLUMNS = COLUMN_NAMES.join(', ');

/** Sort fields of the page list (columns; pages are unique by id). */
export const CORPUS_PAGE_SORT = listSort(
  {
    id: 'id',
    url: 'url',
    title: 'title',
    wordCount: 'word_count',
    characterCount: 'char_count',
    fingerprintCount: 'fingerprint_count',
    createdAt: 'created_at',
    updatedAt: 'updated_at',
  },
  'id',
  'id',
);
/** The page columns qualified with the alias p (json_each has an `id` column too). */
const P_COLUMNS = COLUMN_NAMES.map((c) => `p.${c}`).join(', ');
/** Upper bound of one JSON parameter in UTF-8 bytes, far below D1's 2,000,000-byte limit of a value. */
export const MAX_PARAM_BYTES = 400_000;
/** Fingerprints per JSON item: at most 16 bytes each (15 digits and a comma), 320,000 bytes. */
const HASHES_PER_ITEM = 20_000;
const R2_CONCURRENCY = 16;

function toRecord(r: PageRow): PageRecord {
  return {
    id: r.id,
    url: r.url,
    title: r.title,
    wordCount: r.word_count,
    fingerprintCount: r.fingerprint_count,
    characterCount: r.char_count,
    contentSha256: r.content_sha256,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** UTF-8 length of a string (a lone surrogate counts as the 3 bytes it is stored as). */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** A JSON array parameter holding items[start .. start + count - 1]. */
interface JsonChunk {
  json: string;
  start: number;
}

/**
 * Splits items into JSON arrays whose UTF-8 text stays under MAX_PARAM_BYTES (an item larger
 * than that goes alone; the callers' items are far smaller). `start` is the index of a chunk's
 * first item, so a chunk's json_each key plus `start` is the item's index in `items`.
 */
function jsonChunks(items: unknown[]): JsonChunk[] {
  const chunks: JsonChunk[] = [];
  let parts: string[] = [];
  let start = 0;
  let size = 2;
  items.forEach((item, i) => {
    const s = JSON.stringify(item);
    const bytes = utf8Bytes(s) + 1;
    if (parts.length > 0 && size + bytes > MAX_PARAM_BYTES) {
      chunks.push({ json: `[${parts.join(',')}]`, start });
      parts = [];
      start = i;
      size = 2;
    }
    parts.push(s);
    size += bytes;
  });
  if (parts.length > 0) chunks.push({ json: `[${parts.join(',')}]`, start });
  return chunks;
}

/**
 * Runs fn over items, at most `limit` at a time. After a failure no further item is started;
 * it resolves or rejects (with the first error) only when every started call has settled.
 */
async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (failure === null && next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
}

export class PlagiarismCorpus {
  /**
   * `ctx`: the request's ExecutionContext (worker/sources/index.ts waitUntilOf). R2 deletions that
   * follow a D1 commit (or clean up after a failure) are registered with its waitUntil, so they
   * still run when the client goes away meanwhile.
   */
  constructor(
    private readonly db: D1Database,
    private readonly bucket: R2Bucket,
    private readonly ctx?: WaitUntil,
  ) {}

  /**
   * Adds or replaces pages (by URL; the last of several entries with one URL wins).
   * Returns the stored records in input order of their (deduplicated) URLs.
   */
  async ingest(input: PageInput[]): Promise<IngestedPage[]> {
    const byUrl = new Map<string, PageInput>();
    for (const p of input) {
      byUrl.delete(p.url);
      byUrl.set(p.url, p);
    }
    const pages = [...byUrl.values()];
    if (pages.length === 0) return [];

    const prepared = await Promise.all(
      pages.map(async (p) => {
        const words = splitWords(p.text);
        const hashes = fingerprints(words.map((w) => w.norm));
        const urlHash = (await sha256Hex(p.url)).slice(0, 32);
        return {
          page: p,
          words: words.length,
          hashes,
          sha: await sha256Hex(p.text),
          key: R2_KEYS.plagiarismPage(urlHash, crypto.randomUUID()),
        };
      }),
    );

    // 1. Texts first, under keys no reader knows yet. On a failure, no further text is written,
    // and every key of this ingestion is deleted again once the started writes have settled.
    const keys = prepared.map((p) => p.key);
    try {
      await mapLimit(prepared, R2_CONCURRENCY, async (p) => {
        await this.bucket.put(p.key, p.page.text, { httpMetadata: { contentType: 'text/plain; charset=utf-8' } });
      });
    } catch (err) {
      await this.discard(keys, 'after a failed R2 write');
      throw err;
    }

    // 2. One transaction for the index. Every statement takes one chunk of the page rows (or
    // of the fingerprints); rows are found again by json_extract of the same JSON text, so they
    // match whatever D1 makes of a string.
    const now = new Date().toISOString();
    const rows = prepared.map((p) => ({
      url: p.page.url,
      title: p.page.title,
      words: p.words,
      fps: p.hashes.length,
      chars: p.page.text.length,
      key: p.key,
      sha: p.sha,
    }));
    const rowChunks = jsonChunks(rows);
    const statements: D1PreparedStatement[] = [];
    // Previous R2 keys of the pages, by input position.
    for (const chunk of rowChunks) {
      statements.push(
        this.db
          .prepare(
            `SELECT e.key + ?2 AS i, p.r2_key AS r2_key FROM json_each(?1) AS e
             CROSS JOIN plagiarism_pages AS p WHERE p.url = json_extract(e.value, '$.url')`,
          )
          .bind(chunk.json, chunk.start),
      );
    }
    for (const chunk of rowChunks) {
      statements.push(
        this.db
          .prepare(
            `DELETE FROM plagiarism_fingerprints WHERE page_id IN
               (SELECT id FROM plagiarism_pages WHERE url IN (SELECT json_extract(value, '$.url') FROM json_each(?1)))`,
          )
          .bind(chunk.json),
      );
    }
    for (const chunk of rowChunks) {
      statements.push(
        this.db
          .prepare(
            `INSERT INTO plagiarism_pages (url, title, word_count, fingerprint_count, char_count, r2_key, content_sha256, created_at, updated_at)
             SELECT json_extract(value, '$.url'), json_extract(value, '$.title'), json_extract(value, '$.words'),
                    json_extract(value, '$.fps'), json_extract(value, '$.chars'), json_extract(value, '$.key'),
                    json_extract(value, '$.sha'), ?2, ?2
             FROM json_each(?1) WHERE true
             ON CONFLICT (url) DO UPDATE SET title = excluded.title, word_count = excluded.word_count,
               fingerprint_count = excluded.fingerprint_count, char_count = excluded.char_count,
               r2_key = excluded.r2_key, content_sha256 = excluded.content_sha256, updated_at = excluded.updated_at`,
          )
          .bind(chunk.json, now),
      );
    }
    // Fingerprints: pages with many hashes are split so each parameter stays small.
    const fpItems: Array<{ u: string; h: number[] }> = [];
    for (const p of prepared) {
      for (let i = 0; i < p.hashes.length; i += HASHES_PER_ITEM)
        fpItems.push({ u: p.page.url, h: p.hashes.slice(i, i + HASHES_PER_ITEM) });
    }
    for (const chunk of jsonChunks(fpItems)) {
      statements.push(
        this.db
          .prepare(
            `INSERT OR IGNORE INTO plagiarism_fingerprints (hash, page_id)
             SELECT h.value, p.id FROM json_each(?1) AS e
             JOIN plagiarism_pages AS p ON p.url = json_extract(e.value, '$.u')
             JOIN json_each(e.value, '$.h') AS h`,
          )
          .bind(chunk.json),
      );
    }
    // The stored rows, by input position.
    const storedFrom = statements.length;
    for (const chunk of rowChunks) {
      statements.push(
        this.db
          .prepare(
            `SELECT e.key + ?2 AS i, ${P_COLUMNS} FROM json_each(?1) AS e
             CROSS JOIN plagiarism_pages AS p WHERE p.url = json_extract(e.value, '$.url')`,
          )
          .bind(chunk.json, chunk.start),
      );
    }

    let results: D1Result[];
    try {
      results = await this.db.batch(statements);
    } catch (err) {
      await this.discard(keys, 'after a failed D1 batch');
      throw err;
    }

    // 3. Committed: nothing below may fail the request. Replaced texts are unreachable now.
    const previous = new Map<number, string>();
    for (const r of results.slice(0, rowChunks.length)) {
      for (const row of (r.results ?? []) as Array<{ i: number; r2_key: string }>) previous.set(row.i, row.r2_key);
    }
    const stored = new Map<number, PageRow>();
    for (const r of results.slice(storedFrom)) {
      for (const row of (r.results ?? []) as Array<PageRow & { i: number }>) stored.set(row.i, row);
    }
    await this.discard([...previous.values()], 'of replaced pages');

    const out: IngestedPage[] = [];
    pages.forEach((p, i) => {
      const row = stored.get(i);
      // Cannot happen (the same transaction upserted the row); logged rather than thrown, the ingestion is committed.
      if (!row) console.error(`plagiarism corpus: page #${i} (${JSON.stringify(p.url)}) not read back after ingestion`);
      else out.push({ ...toRecord(row), replaced: previous.has(i) });
    });
    return out;
  }

  /**
   * Deletes R2 objects without failing: errors are logged (the objects stay as orphans under
   * R2_KEYS.plagiarismPage). Kept alive with the request's waitUntil, and awaited, so the answer still
   * follows the deletion.
   */
  private async discard(keys: string[], why: string): Promise<void> {
    if (keys.length === 0) return;
    const work = this.deleteObjects(keys).catch((err: unknown) => {
      console.error(
        `plagiarism corpus: could not delete ${keys.length} R2 object(s) ${why}; orphans: ${keys.join(', ')}`,
        err,
      );
    });
    keepAlive(this.ctx, work);
    await work;
  }

  private async deleteObjects(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) await this.bucket.delete(keys.slice(i, i + 1000));
  }

  /** One page of the corpus, by id ascending; optional exact-url filter. */
  async list(
    page: number,
    size: number,
    url?: string,
    sort: (typeof CORPUS_PAGE_SORT.fields)[number] = 'id',
    order: SortOrder = 'asc',
  ): Promise<{ data: PageRecord[]; total: number }> {
    const where = url === undefined ? '' : 'WHERE url = ?3';
    const orderBy = sqlOrderBy(CORPUS_PAGE_SORT, sort, order);
    const listStmt = this.db.prepare(
      `SELECT ${PAGE_COLUMNS} FROM plagiarism_pages ${where} ORDER BY ${orderBy} LIMIT ?1 OFFSET ?2`,
    );
    const countStmt = this.db.prepare(
      `SELECT COUNT(*) AS n FROM plagiarism_pages ${url === undefined ? '' : 'WHERE url = ?1'}`,
    );
    const [rows, count] = await this.db.batch([
      url === undefined ? listStmt.bind(size, (page - 1) * size) : listStmt.bind(size, (page - 1) * size, url),
      url === undefined ? countStmt : countStmt.bind(url),
    ]);
    return {
      data: (rows.results as unknown as PageRow[]).map(toRecord),
      total: (count.results[0] as { n: number }).n,
    };
  }

  async find(ref: { id: number } | { url: string }): Promise<(PageRecord & { r2Key: string }) | null> {
    const [column, value] = 'id' in ref ? ['id', ref.id] : ['url', ref.url];
    const row = await this.db
      .prepare(`SELECT ${PAGE_COLUMNS} FROM plagiarism_pages WHERE ${column} = ?1`)
      .bind(value)
      .first<PageRow>();
    return row ? { ...toRecord(row), r2Key: row.r2_key } : null;
  }

  /** Deletes a page (fingerprints and row in one transaction, then its text); false when unknown. */
  async delete(ref: { id: number } | { url: string }): Promise<boolean> {
    const page = await this.find(ref);
    if (!page) return false;
    const [, deleted] = await this.db.batch([
      this.db.prepare('DELETE FROM plagiarism_fingerprints WHERE page_id = ?1').bind(page.id),
      this.db.prepare('DELETE FROM plagiarism_pages WHERE id = ?1 RETURNING r2_key').bind(page.id),
    ]);
    const keys = (deleted.results as Array<{ r2_key: string }>).map((r) => r.r2_key);
    if (keys.length === 0) return false; // deleted concurrently
    await this.discard(keys, 'of a deleted page');
    return true;
  }

  /** Pages sharing fingerprints with the input, most shared first, at most `limit`. */
  async candidates(hashes: number[], limit: number): Promise<Candidate[]> {
    if (hashes.length === 0) return [];
    const { results } = await this.db
      .prepare(
        `SELECT p.id AS id, p.url AS url, p.title AS title, p.r2_key AS r2_key, c.shared AS shared
         FROM (SELECT page_id, COUNT(*) AS shared FROM plagiarism_fingerprints
               WHERE hash IN (SELECT value FROM json_each(?1))
               GROUP BY page_id ORDER BY shared DESC, page_id LIMIT ?2) AS c
         JOIN plagiarism_pages AS p ON p.id = c.page_id
         ORDER BY c.shared DESC, p.id`,
      )
      .bind(JSON.stringify(hashes), limit)
      .all<{ id: number; url: string; title: string; r2_key: string; shared: number }>();
    return results.map((r) => ({ id: r.id, url: r.url, title: r.title, r2Key: r.r2_key, shared: r.shared }));
  }

  /**
   * The stored text of a candidate. When a concurrent replacement removed the object, the
   * page row is read again once; null when the page is gone.
   */
  async text(candidate: Candidate): Promise<{ text: string; title: string } | null> {
    const obj = await this.bucket.get(candidate.r2Key);
    if (obj) return { text: await obj.text(), title: candidate.title };
    const row = await this.find({ id: candidate.id });
    if (!row || row.r2Key === candidate.r2Key) return null;
    const again = await this.bucket.get(row.r2Key);
    return again ? { text: await again.text(), title: row.title } : null;
  }
}
