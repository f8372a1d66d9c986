/**
 * The local provider's reference corpus: page list and fingerprint index in D1
 * (worker/migrations/0003_plagiarism.sql), full extracted texts in R2.
 *
 * Ingestion of a set of pages is one D1 batch (a transaction): it reads the pages' previous R2
 * keys, drops their old fingerprints, upserts the page rows (a known URL keeps its id) and
 * inserts the new fingerprints, so no check ever sees a half-replaced page. Each ingestion
 * writes its texts under fresh R2 keys before that batch and deletes the replaced objects
 * after it; a reader that still holds an old key re-reads the page row once.
 *
 * Lookups send the input's fingerprints as one JSON array parameter (json_each), so a check is
 * a single statement whatever the input length, well under D1's 100 bound parameters.
 */
import { fingerprints, splitWords } from '../../core/plagiarism';
import { sha256Hex } from '../digest';

export interface PageInput {
  url: string;
  title: string;
  text: string;
}

export interface PageRecord {
  id: number;
  url: string;
  title: string;
  wordCount: number;
  fingerprintCount: number;
  characterCount: number;
  contentSha256: string;
  createdAt: string;
  updatedAt: string;
}

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

const PAGE_COLUMNS = 'id, url, title, word_count, fingerprint_count, char_count, r2_key, content_sha256, created_at, updated_at';
/** Upper bound of one JSON parameter, far below D1's per-value limit. */
const MAX_PARAM_CHARS = 400_000;
const R2_CONCURRENCY = 16;

export const R2_PREFIX = 'plagiarism/pages/';

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

/** Splits items into JSON arrays whose text stays under MAX_PARAM_CHARS (an item larger than that goes alone). */
function jsonChunks(items: unknown[]): string[] {
  const chunks: string[] = [];
  let parts: string[] = [];
  let size = 2;
  for (const item of items) {
    const s = JSON.stringify(item);
    if (parts.length > 0 && size + s.length + 1 > MAX_PARAM_CHARS) {
      chunks.push(`[${parts.join(',')}]`);
      parts = [];
      size = 2;
    }
    parts.push(s);
    size += s.length + 1;
  }
  if (parts.length > 0) chunks.push(`[${parts.join(',')}]`);
  return chunks;
}

async function mapLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export class PlagiarismCorpus {
  constructor(
    private readonly db: D1Database,
    private readonly bucket: R2Bucket,
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
          key: `${R2_PREFIX}${urlHash}/${crypto.randomUUID()}.txt`,
        };
      }),
    );

    // 1. Texts first, under keys no reader knows yet.
    await mapLimit(prepared, R2_CONCURRENCY, async (p) => {
      await this.bucket.put(p.key, p.page.text, { httpMetadata: { contentType: 'text/plain; charset=utf-8' } });
    });

    // 2. One transaction for the index.
    const now = new Date().toISOString();
    const urlsJson = JSON.stringify(pages.map((p) => p.url));
    const statements: D1PreparedStatement[] = [
      this.db.prepare('SELECT url, r2_key FROM plagiarism_pages WHERE url IN (SELECT value FROM json_each(?1))').bind(urlsJson),
      this.db
        .prepare(
          'DELETE FROM plagiarism_fingerprints WHERE page_id IN (SELECT id FROM plagiarism_pages WHERE url IN (SELECT value FROM json_each(?1)))',
        )
        .bind(urlsJson),
    ];
    const rows = prepared.map((p) => ({
      url: p.page.url,
      title: p.page.title,
      words: p.words,
      fps: p.hashes.length,
      chars: p.page.text.length,
      key: p.key,
      sha: p.sha,
    }));
    for (const chunk of jsonChunks(rows)) {
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
          .bind(chunk, now),
      );
    }
    // Fingerprints: pages with many hashes are split so each parameter stays small.
    const fpItems: Array<{ u: string; h: number[] }> = [];
    const perItem = Math.floor(MAX_PARAM_CHARS / 20);
    for (const p of prepared) {
      for (let i = 0; i < p.hashes.length; i += perItem) fpItems.push({ u: p.page.url, h: p.hashes.slice(i, i + perItem) });
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
          .bind(chunk),
      );
    }
    statements.push(
      this.db.prepare(`SELECT ${PAGE_COLUMNS} FROM plagiarism_pages WHERE url IN (SELECT value FROM json_each(?1))`).bind(urlsJson),
    );

    let results: D1Result[];
    try {
      results = await this.db.batch(statements);
    } catch (err) {
      await this.deleteObjects(prepared.map((p) => p.key));
      throw err;
    }

    // 3. Replaced texts are unreachable now.
    const previous = (results[0].results as Array<{ url: string; r2_key: string }>) ?? [];
    await this.deleteObjects(previous.map((r) => r.r2_key));

    const stored = new Map((results[results.length - 1].results as unknown as PageRow[]).map((r) => [r.url, r]));
    const replacedUrls = new Set(previous.map((r) => r.url));
    return pages.map((p) => {
      const row = stored.get(p.url);
      if (!row) throw new Error(`page ${p.url} missing after ingestion`);
      return { ...toRecord(row), replaced: replacedUrls.has(p.url) };
    });
  }

  private async deleteObjects(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) await this.bucket.delete(keys.slice(i, i + 1000));
  }

  /** One page of the corpus, by id ascending; optional exact-url filter. */
  async list(page: number, size: number, url?: string): Promise<{ data: PageRecord[]; total: number }> {
    const where = url === undefined ? '' : 'WHERE url = ?3';
    const listStmt = this.db.prepare(`SELECT ${PAGE_COLUMNS} FROM plagiarism_pages ${where} ORDER BY id LIMIT ?1 OFFSET ?2`);
    const countStmt = this.db.prepare(`SELECT COUNT(*) AS n FROM plagiarism_pages ${url === undefined ? '' : 'WHERE url = ?1'}`);
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
    const row =
      'id' in ref
        ? await this.db.prepare(`SELECT ${PAGE_COLUMNS} FROM plagiarism_pages WHERE id = ?1`).bind(ref.id).first<PageRow>()
        : await this.db.prepare(`SELECT ${PAGE_COLUMNS} FROM plagiarism_pages WHERE url = ?1`).bind(ref.url).first<PageRow>();
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
    await this.deleteObjects(keys);
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
