/**
 * `embedding-edge score`: JSONL/CSV in, JSONL out (each input record + the scored text of
 * text-scores: dimensionScores, mapperScores, modelRankScore, goalScore, ...), in batches of
 * up to 100 texts (one text-scores request each), in input order.
 *
 * Locally the batches run in this process (core + WASM); remotely they go through the typed
 * client with `--concurrency` requests in flight, retries, and an Idempotency-Key per batch that
 * is derived from the checkpoint's run id, so a batch resent after an interruption is replayed,
 * not charged twice. With --checkpoint, progress (records consumed, output bytes) is saved after
 * each batch written; the same command resumes from there (the output file is cut back to the
 * checkpoint's length first).
 */
import fs from 'node:fs';
import crypto from 'node:crypto';
import cliProgress from 'cli-progress';
import { DEFAULT_MODEL_ID } from '../build/paths';
import { LIMITS } from '../core/limits';
import { detectFormat, openSource, rows, type Row } from './input';
import { dimensionKeyMap, dimensionKeysOption, withDimensionKeys } from './dimension-keys';
import { count, plural } from '../core/plural';
import {
  defaultModel,
  int,
  jsonOption,
  LOCAL_HELP,
  parse,
  REMOTE_HELP,
  REMOTE_OPTIONS,
  service,
  needsWorkspace,
  str,
  strs,
  UsageError,
  writeOut,
  type Local,
  type Remote,
} from './common';

export const SCORE_HELP = `
Usage: embedding-edge score [options] [INPUT]

Scores each record of INPUT (a .jsonl or .csv file; stdin when omitted or "-") with
POST text-scores and writes JSONL to stdout (or --output): the record's fields followed by the
scored text's fields exactly as text-scores returns them.

Request:
  -m, --model ID            embedding model (default ${DEFAULT_MODEL_ID})
  -d, --dimension SPEC      a dimension, repeatable; ids are 1, 2, ... in the order given:
                              'NAME=word1,word2'              manual (centroid of the words)
                              'NAME=good,great|bad,awful'     axis (positive | negative pole)
      --dimensions FILE     JSON array of Dimension objects as the API takes them (numbered
                            before the inline ones when they have no id)
      --mapper KEY          mapper variable id, repeatable (e.g. sentiment_valence)
      --goal JSON|FILE      goalConfig, e.g. '{"dimensions":[{"id":1,"weight":1}]}'
      --composition V       request field "composition" (JSON or a plain string)
      --subword-fallback    words outside the vocabulary get vectors composed of sub-word
                            pieces (request field subwordFallback: true)
      --set FIELD=VALUE     any other top-level request field (VALUE parsed as JSON when it
                            is JSON, else a string), repeatable, e.g. --set explain=true
      --request JSON|FILE   base request object the options above are merged into

Input and output:
      --dimension-keys id|name   key dimensionScores (and explanation.dimensions) by the
                            dimensions' ids as text-scores does (id, the default) or by
                            the names given to them (name; a dimension without one keeps
                            its id)
      --format jsonl|csv    input format (default: from the file name; jsonl)
      --text-field NAME     field or column holding the text (default "text")
  -o, --output FILE         write here instead of stdout
      --batch-size N        texts per request, 1-100 (default 100)
      --checkpoint FILE     save progress after each batch; rerun the same command to resume
      --strict              stop at the first bad row (exit 1) instead of reporting and skipping
      --progress / --no-progress   progress bar on stderr (default: when stderr is a terminal)
  -q, --quiet               no summary line
  --concurrency N           remote: requests in flight (default 4)
${LOCAL_HELP}
${REMOTE_HELP}

Bad rows (not JSON, not an object, no text, text too long, wrong CSV column count) are
reported on stderr as "line N: reason" and skipped. The summary line gives texts/s and, when
local, tokens/s; a second line counts the texts that look like another language than the
model's (languageMismatch in their output), with the input lines of the first 10.`;

interface Checkpoint {
  version: 1;
  runId: string;
  input: string;
  /** Input records consumed (scored or reported bad). */
  records: number;
  /** Bytes of output written for them (when writing to --output). */
  outputBytes: number;
  scored: number;
  bad: number;
  /** Texts text-scores flagged with languageMismatch, and the first MISMATCH_LINES_SHOWN of them. */
  mismatched?: number;
  mismatches?: Mismatch[];
}

/** A text flagged with languageMismatch: its input line and the language it looks like. */
interface Mismatch {
  line: number;
  detected: string;
  model: string;
}

const MISMATCH_LINES_SHOWN = 10;

/** The summary's line on the texts flagged with languageMismatch (docs/text-scores.md "Language mismatch"). */
function mismatchLine(texts: number, shown: readonly Mismatch[]): string {
  const models = [...new Set(shown.map((m) => m.model))].join(', ');
  const lines = shown.map((m) => `${m.line} (${m.detected})`).join(', ');
  const more = texts > shown.length ? ', ...' : '';
  return `${count(texts, 'text')} ${plural(texts, 'looks', 'look')} like another language than the model's (${models}): ${plural(shown.length, 'line')} ${lines}${more}\n`;
}

function readCheckpoint(file: string | undefined, input: string): Checkpoint | null {
  if (!file || !fs.existsSync(file)) return null;
  const startOver = `; give another --checkpoint file, or delete '${file}' to start over`;
  let c: Checkpoint;
  try {
    c = JSON.parse(fs.readFileSync(file, 'utf8')) as Checkpoint;
  } catch {
    throw new UsageError(`'${file}' is not a checkpoint of embedding-edge score${startOver}`);
  }
  if (c?.version !== 1 || typeof c.records !== 'number')
    throw new UsageError(`'${file}' is not a checkpoint of embedding-edge score${startOver}`);
  if (c.input !== input)
    throw new UsageError(`the checkpoint '${file}' belongs to the input '${c.input}', not '${input}'${startOver}`);
  return c;
}

function writeCheckpoint(file: string, c: Checkpoint): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(c));
  fs.renameSync(tmp, file);
}

/** `NAME=w1,w2` (manual) or `NAME=w1,w2|o1,o2` (axis); NAME optional. */
export function parseDimension(spec: string, id: number): Record<string, unknown> {
  const eq = spec.indexOf('=');
  const name = eq >= 0 ? spec.slice(0, eq).trim() : '';
  const rest = eq >= 0 ? spec.slice(eq + 1) : spec;
  const list = (s: string): string[] =>
    s
      .split(',')
      .map((w) => w.trim())
      .filter((w) => w !== '');
  const [pos, neg] = rest.split('|');
  const words = list(pos);
  if (words.length === 0)
    throw new UsageError(`--dimension '${spec}' has no seed words; write it as 'NAME=word1,word2'`);
  const dim: Record<string, unknown> =
    neg === undefined ? { id, type: 'manual', words } : { id, type: 'axis', words, oppositeWords: list(neg) };
  if (name) dim.name = name;
  return dim;
}

function parseValue(v: string): unknown {
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** The request every batch shares (texts are added per batch); unknown fields pass through. */
export function buildRequest(values: Record<string, unknown>): Record<string, unknown> {
  const base = values.request ? jsonOption(str(values.request)!, 'request') : {};
  if (typeof base !== 'object' || base === null || Array.isArray(base))
    throw new UsageError('--request must be a JSON object ({...})');
  const req: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  req.embeddingModelId = str(values.model) ?? (req.embeddingModelId as string | undefined) ?? defaultModel(values);
  const dims: Array<Record<string, unknown>> = [];
  if (values.dimensions) {
    const fromFile = jsonOption(str(values.dimensions)!, 'dimensions');
    if (!Array.isArray(fromFile))
      throw new UsageError(
        '--dimensions must be a JSON array of dimensions ([{"id":1,"type":"manual","words":[...]}])',
      );
    for (const d of fromFile as Array<Record<string, unknown>>) dims.push({ ...d, id: d.id ?? dims.length + 1 });
  }
  for (const spec of strs(values.dimension)) dims.push(parseDimension(spec, dims.length + 1));
  if (dims.length > 0) req.dimensions = [...((req.dimensions as unknown[]) ?? []), ...dims];
  const mappers = strs(values.mapper);
  if (mappers.length > 0) req.mapperKeys = [...((req.mapperKeys as string[]) ?? []), ...mappers];
  if (values.goal) req.goalConfig = jsonOption(str(values.goal)!, 'goal');
  if (values.composition !== undefined) req.composition = parseValue(str(values.composition)!);
  if (values['subword-fallback'] === true) req.subwordFallback = true;
  for (const kv of strs(values.set)) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set '${kv}' has no field name; write it as FIELD=VALUE, e.g. explain=true`);
    req[kv.slice(0, eq)] = parseValue(kv.slice(eq + 1));
  }
  delete req.texts;
  return req;
}

interface Batch {
  /** Rows to score, in order. */
  rows: Array<Extract<Row, { record: unknown }>>;
  /** Record number of the last record consumed with this batch (bad rows included). */
  lastN: number;
  bad: number;
}

interface Scored {
  batch: Batch;
  data: Array<Record<string, unknown>>;
  tokens: number;
}

export async function score(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    'score',
    argv,
    {
      model: { type: 'string', short: 'm' },
      dimension: { type: 'string', short: 'd', multiple: true },
      dimensions: { type: 'string' },
      mapper: { type: 'string', multiple: true },
      goal: { type: 'string' },
      composition: { type: 'string' },
      'subword-fallback': { type: 'boolean' },
      set: { type: 'string', multiple: true },
      request: { type: 'string' },
      'dimension-keys': { type: 'string' },
      format: { type: 'string' },
      'text-field': { type: 'string' },
      output: { type: 'string', short: 'o' },
      'batch-size': { type: 'string' },
      concurrency: { type: 'string' },
      checkpoint: { type: 'string' },
      strict: { type: 'boolean' },
      progress: { type: 'boolean' },
      'no-progress': { type: 'boolean' },
      quiet: { type: 'boolean', short: 'q' },
      'stored-dimensions': { type: 'string' },
      ...REMOTE_OPTIONS,
    },
    SCORE_HELP,
  );
  if (positionals.length > 1)
    throw new UsageError(
      `score reads one INPUT file, but got ${positionals.length}: ${positionals.map((p) => `'${p}'`).join(' ')} (quote a --dimension that has spaces)`,
      'score',
    );
  const input = positionals[0];
  const inputName = input && input !== '-' ? input : '-';
  const format = detectFormat(input, str(values.format));
  const field = str(values['text-field']) ?? 'text';
  const batchSize = int(values['batch-size'], 'batch-size', LIMITS.textsPerRequest);
  if (batchSize > LIMITS.textsPerRequest)
    throw new UsageError(`--batch-size is at most ${LIMITS.textsPerRequest} (texts per request), not ${batchSize}`);
  const concurrency = int(values.concurrency, 'concurrency', 4);
  const strict = values.strict === true;
  const quiet = values.quiet === true;
  const request = buildRequest(values);
  const keys = dimensionKeyMap(dimensionKeysOption(values['dimension-keys']), request.dimensions);
  const outFile = str(values.output);
  const checkpointFile = str(values.checkpoint);
  if (checkpointFile && inputName === '-')
    throw new UsageError('--checkpoint needs an INPUT file: a run that reads stdin cannot be resumed');

  let retries = 0;
  const svc = service(values, () => retries++);
  if (svc.kind === 'remote') needsWorkspace(svc.client);

  // --- Resume
  const resumed = readCheckpoint(checkpointFile, inputName);
  const ck: Checkpoint = resumed ?? {
    version: 1,
    runId: crypto.randomUUID(),
    input: inputName,
    records: 0,
    outputBytes: 0,
    scored: 0,
    bad: 0,
  };
  let fd: number | null = null;
  if (outFile) {
    if (resumed) {
      if (!fs.existsSync(outFile))
        throw new UsageError(
          `resuming needs the output written so far, and '${outFile}' is missing; delete '${checkpointFile}' to start over`,
        );
      fs.truncateSync(outFile, resumed.outputBytes);
      fd = fs.openSync(outFile, 'a');
    } else {
      fd = fs.openSync(outFile, 'w');
    }
  } else if (resumed) {
    process.stderr.write(
      `resuming after record ${resumed.records}: this run prints only the rest; append it to the earlier output (>>)\n`,
    );
  }
  if (resumed && !quiet)
    process.stderr.write(
      `resuming ${inputName} after record ${resumed.records} (so far ${count(resumed.scored, 'text')} scored, ${count(resumed.bad, 'bad row')})\n`,
    );

  const source = openSource(input);
  const showBar = values['no-progress'] ? false : values.progress === true || (process.stderr.isTTY === true && !quiet);
  const bar = showBar
    ? new cliProgress.SingleBar(
        {
          stream: process.stderr,
          format: [
            ...(source.size ? [' {bar} {percentage}%'] : []),
            ' {texts}',
            ' {rate} texts/s',
            ...(svc.kind === 'local' ? [' {tps} tokens/s'] : []),
            ...(source.size ? [' ETA {eta_formatted}'] : []),
          ].join(' |'),
          hideCursor: true,
          etaBuffer: 50,
          fps: 5,
          // --progress into a file or pipe: a line every 2 s.
          noTTYOutput: true,
          notTTYSchedule: 2000,
        },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(source.size ?? 1, 0, { texts: count(0, 'text'), rate: 0, tps: 0 });

  // --- Scoring (loading is not part of the rate)
  if (svc.kind === 'local') await svc.local.prepare(request);
  const started = performance.now();
  let texts = 0;
  let tokens = 0;
  let stopped: number | null = null;

  const scoreBatch = async (batch: Batch): Promise<Scored> => {
    const body = { ...request, texts: batch.rows.map((r) => r.text) };
    if (batch.rows.length === 0) return { batch, data: [], tokens: 0 };
    if (svc.kind === 'local') {
      const { data, tokenCount } = await (svc as Local).local.textScores(body);
      return { batch, data, tokens: tokenCount };
    }
    const key = `${ck.runId}:${batch.rows[0].n}-${batch.lastN}`;
    const res = await (svc as Remote).client.textScores(body as never, { idempotencyKey: key });
    return { batch, data: res.data as unknown as Array<Record<string, unknown>>, tokens: 0 };
  };

  const write = async (s: Scored): Promise<void> => {
    let out = '';
    for (let i = 0; i < s.batch.rows.length; i++)
      out += `${JSON.stringify({ ...s.batch.rows[i].record, ...withDimensionKeys(s.data[i], keys) })}\n`;
    if (out) {
      if (fd !== null) fs.writeSync(fd, out);
      else await writeOut(out);
    }
    for (let i = 0; i < s.batch.rows.length; i++) {
      const m = s.data[i].languageMismatch as { modelLanguage: string; detectedLanguage: string } | undefined;
      if (!m) continue;
      ck.mismatched = (ck.mismatched ?? 0) + 1;
      const shown = (ck.mismatches ??= []);
      if (shown.length < MISMATCH_LINES_SHOWN)
        shown.push({ line: s.batch.rows[i].line, detected: m.detectedLanguage, model: m.modelLanguage });
    }
    texts += s.batch.rows.length;
    tokens += s.tokens;
    ck.records = s.batch.lastN;
    ck.outputBytes += Buffer.byteLength(out);
    ck.scored += s.batch.rows.length;
    ck.bad += s.batch.bad;
    if (checkpointFile) writeCheckpoint(checkpointFile, ck);
    if (bar) {
      const secs = (performance.now() - started) / 1000;
      bar.update(source.size ? source.bytesRead() : 1, {
        texts: count(ck.scored, 'text'),
        rate: Math.round(texts / secs),
        tps: Math.round(tokens / secs),
      });
    }
  };

  const inFlight: Array<Promise<Scored>> = [];
  const limit = svc.kind === 'remote' ? concurrency : 1;
  let batch: Batch = { rows: [], lastN: ck.records, bad: 0 };
  const flush = async (): Promise<void> => {
    const b = batch;
    batch = { rows: [], lastN: b.lastN, bad: 0 };
    if (b.rows.length === 0 && b.bad === 0) return;
    const p = scoreBatch(b);
    p.catch(() => {}); // awaited in order below
    inFlight.push(p);
    while (inFlight.length >= limit) await write(await inFlight.shift()!);
  };

  try {
    for await (const row of rows(format, source.stream, field, ck.records)) {
      if ('error' in row) {
        bar?.stop();
        process.stderr.write(`line ${row.line}: ${row.error}\n`);
        if (strict) {
          stopped = row.line;
          break;
        }
        bar?.start(source.size ?? 1, source.bytesRead(), { texts: count(ck.scored, 'text'), rate: 0, tps: 0 });
        batch.bad++;
        batch.lastN = row.n;
        continue;
      }
      batch.rows.push(row);
      batch.lastN = row.n;
      if (batch.rows.length >= batchSize) await flush();
    }
    if (stopped === null) await flush();
    while (inFlight.length > 0) await write(await inFlight.shift()!);
  } finally {
    bar?.stop();
    if (fd !== null) fs.closeSync(fd);
    source.stream.destroy();
  }

  const secs = (performance.now() - started) / 1000;
  if (!quiet) {
    const rate = `${Math.round(texts / secs)} texts/s`;
    const tps = svc.kind === 'local' ? `, ${count(tokens, 'token')}, ${Math.round(tokens / secs)} tokens/s` : '';
    const retried = retries ? `; ${count(retries, 'retry', 'retries')}` : '';
    const memory = `peak memory ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`;
    process.stderr.write(
      `scored ${count(texts, 'text')} in ${secs.toFixed(2)} s (${rate}${tps}); ${count(ck.bad, 'bad row')}${retried}; ${memory}\n`,
    );
    if (ck.mismatched) process.stderr.write(mismatchLine(ck.mismatched, ck.mismatches ?? []));
  }
  if (stopped !== null) {
    process.stderr.write(
      `stopped at line ${stopped} (--strict)${checkpointFile ? `; fix that line and run the same command again to resume after record ${ck.records}` : ''}\n`,
    );
    return 1;
  }
  if (checkpointFile) fs.rmSync(checkpointFile, { force: true });
  return 0;
}
