/**
 * Streaming input of `score`: JSONL (one JSON object per line) or CSV (header row, csv-parse),
 * one record at a time, so memory stays flat whatever the file size. A record that cannot be
 * used is yielded as a bad row with its line number and the reason, never thrown.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import { LIMITS } from '../core/limits';
import { UsageError } from './args';

export type InputFormat = 'jsonl' | 'csv';

export type Row =
  /** `n`: 1-based record number (what a checkpoint counts); `line`: line in the file. */
  | { n: number; line: number; record: Record<string, unknown>; text: string }
  | { n: number; line: number; error: string };

export interface Source {
  stream: Readable;
  /** Total bytes when known (a file), for the progress bar. */
  size: number | null;
  /** Bytes read so far. */
  bytesRead(): number;
}

export function openSource(file: string | undefined): Source {
  if (!file || file === '-') {
    // Counted through a Transform: a 'data' listener on stdin itself would start the flow
    // before the reader is attached and lose what arrives meanwhile.
    let read = 0;
    const counted = process.stdin.pipe(
      new Transform({
        transform(chunk: Buffer, _enc, done) {
          read += chunk.length;
          done(null, chunk);
        },
      }),
    );
    return { stream: counted, size: null, bytesRead: () => read };
  }
  // Checked before the stream opens it: an open that fails would be an unhandled stream error.
  const stat = fs.statSync(file);
  if (stat.isDirectory()) throw new UsageError(`'${file}' is a folder; give a .jsonl or .csv file`);
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  return { stream, size: stat.size, bytesRead: () => stream.bytesRead };
}

export function detectFormat(file: string | undefined, explicit?: string): InputFormat {
  if (explicit) {
    if (explicit !== 'jsonl' && explicit !== 'csv')
      throw new UsageError(`--format must be jsonl or csv, not '${explicit}'`);
    return explicit;
  }
  return file && /\.csv$/i.test(file) ? 'csv' : 'jsonl';
}

/** The record's text, or why the record cannot be scored. */
function textOf(record: Record<string, unknown>, field: string): string | { error: string } {
  const text = record[field];
  if (text === undefined) return { error: `no "${field}" field` };
  if (typeof text !== 'string')
    return { error: `"${field}" is ${text === null ? 'null' : typeof text}, expected a string` };
  if (text.length > LIMITS.charactersPerText)
    return { error: `"${field}" has ${text.length} characters, at most ${LIMITS.charactersPerText} are allowed` };
  return text;
}

/**
 * Rows of a JSONL stream. `skip` records are passed over without being parsed (resume).
 * Blank lines are not records.
 */
export async function* jsonlRows(stream: Readable, field: string, skip = 0): AsyncGenerator<Row> {
  const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  let n = 0;
  for await (const raw of rl) {
    line++;
    if (raw.trim() === '') continue;
    n++;
    if (n <= skip) continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      yield { n, line, error: `not valid JSON (${(err as Error).message})` };
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      yield {
        n,
        line,
        error: `expected a JSON object, got ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`,
      };
      continue;
    }
    const record = value as Record<string, unknown>;
    const text = textOf(record, field);
    if (typeof text === 'string') yield { n, line, record, text };
    else yield { n, line, error: text.error };
  }
}

/** Rows of a CSV stream with a header row; other columns are passed through as strings. */
export async function* csvRows(stream: Readable, field: string, skip = 0): AsyncGenerator<Row> {
  const bad: Array<{ line: number; error: string }> = [];
  const parser = stream.pipe(
    parseCsv({
      columns: true,
      bom: true,
      skip_empty_lines: true,
      info: true,
      skip_records_with_error: true,
      on_skip: (err) => {
        // Records with an error are skipped by csv-parse and reported here, in order.
        if (err)
          bad.push({
            line: Number(err.lines),
            error: err.message.replace(/^Invalid Record Length: /, 'wrong number of columns: '),
          });
        return undefined;
      },
    }),
  );
  let n = 0;
  const flushBad = function* (upTo: number): Generator<Row> {
    while (bad.length > 0 && bad[0].line <= upTo) {
      const b = bad.shift()!;
      n++;
      if (n > skip) yield { n, line: b.line, error: b.error };
    }
  };
  for await (const item of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    yield* flushBad(item.info.lines);
    n++;
    if (n <= skip) continue;
    const text = textOf(item.record, field);
    if (typeof text === 'string') yield { n, line: item.info.lines, record: item.record, text };
    else yield { n, line: item.info.lines, error: text.error };
  }
  yield* flushBad(Infinity);
}

export function rows(format: InputFormat, stream: Readable, field: string, skip = 0): AsyncGenerator<Row> {
  return format === 'csv' ? csvRows(stream, field, skip) : jsonlRows(stream, field, skip);
}
