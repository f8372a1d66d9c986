/**
 * The CLI's smaller commands: find (nearest words), similar (similarity matrix as CSV),
 * tokenize, models (list, import, build). Each works locally or with --api.
 */
import fs from 'node:fs';
import { DEFAULT_MODEL_ID } from '../build/paths';
import { buildEngineArtifacts, importModelCommand } from '../build/cli-steps';
import {
  defaultModel,
  int,
  LOCAL_HELP,
  needsWorkspace,
  parse,
  REMOTE_HELP,
  REMOTE_OPTIONS,
  service,
  str,
  strs,
  UsageError,
  writeOut,
} from './common';
import { dimensionKeyMap, dimensionKeysOption, withDimensionKeys } from './dimension-keys';
import { localBundleKeys, localManifests } from './local';
import { parseDimension } from './score';
import { OFFSET_UNITS, type OffsetUnit } from '../core/offsets';

/** Words from the positionals, or one per line from stdin when the only positional is "-". */
function words(positionals: string[]): string[] {
  if (positionals.length === 1 && positionals[0] === '-') {
    return fs
      .readFileSync(0, 'utf8')
      .split(/\r?\n/)
      .map((w) => w.trim())
      .filter((w) => w !== '');
  }
  return positionals;
}

export const FIND_HELP = `
Usage: embedding-edge find [options] SEED...

The words of the model closest to the centroid of the SEED words (word-scores in
find-and-score mode), one JSON object per line, closest first, as word-scores returns them.

  -m, --model ID            embedding model (default ${DEFAULT_MODEL_ID})
  -n, --limit N             how many words (default 100, at most 1000)
      --wordrank-limit N    only the N most frequent words are candidates (-1: all)
  -d, --dimension SPEC      also score a dimension ('NAME=word1,word2'), repeatable
      --mapper KEY          also score a mapper variable, repeatable
      --averages            print the averages object as the last line
      --dimension-keys id|name   key dimensionScores by the dimensions' ids as word-scores
                            does (id, the default) or by their names (name)
${LOCAL_HELP}
${REMOTE_HELP}`;

export async function find(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    'find',
    argv,
    {
      model: { type: 'string', short: 'm' },
      limit: { type: 'string', short: 'n' },
      'wordrank-limit': { type: 'string' },
      dimension: { type: 'string', short: 'd', multiple: true },
      mapper: { type: 'string', multiple: true },
      averages: { type: 'boolean' },
      'dimension-keys': { type: 'string' },
      'stored-dimensions': { type: 'string' },
      ...REMOTE_OPTIONS,
    },
    FIND_HELP,
  );
  const seeds = words(positionals);
  if (seeds.length === 0)
    throw new UsageError('find needs at least one seed word, e.g. embedding-edge find tasty', 'find');
  const body: Record<string, unknown> = { seedWords: seeds, embeddingModelId: defaultModel(values) };
  if (values.limit !== undefined) body.limit = int(values.limit, 'limit', 100);
  if (values['wordrank-limit'] !== undefined)
    body.wordrankLimit = int(values['wordrank-limit'], 'wordrank-limit', -1, -1);
  const dims = strs(values.dimension).map((s, i) => parseDimension(s, i + 1));
  if (dims.length > 0) body.dimensions = dims;
  const keys = dimensionKeyMap(dimensionKeysOption(values['dimension-keys']), dims);
  if (strs(values.mapper).length > 0) body.mapperKeys = strs(values.mapper);
  const svc = service(values);
  let res: { data: Array<Record<string, unknown>>; averages: Record<string, unknown> };
  if (svc.kind === 'local') res = await svc.local.wordScores(body);
  else {
    needsWorkspace(svc.client);
    res = await svc.client.wordScores(body as never);
  }
  let out = res.data.map((w) => `${JSON.stringify(withDimensionKeys(w, keys))}\n`).join('');
  if (values.averages) out += `${JSON.stringify({ averages: withDimensionKeys(res.averages, keys) })}\n`;
  await writeOut(out);
  return 0;
}

export const SIMILAR_HELP = `
Usage: embedding-edge similar [options] WORD...

Pairwise cosine similarity of the WORDs (word-similarity-matrices) as CSV: a header row
"word,<w1>,<w2>,..." and one row per word. Words missing from the vocabulary are dropped,
as the API does. "-" reads the words from stdin, one per line.

  -m, --model ID            embedding model (default ${DEFAULT_MODEL_ID})
      --subword-fallback    compose the words missing from the vocabulary of sub-word pieces
                            (request field subwordFallback) instead of dropping them
${LOCAL_HELP}
${REMOTE_HELP}`;

/** RFC 4180 field. */
function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export async function similar(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    'similar',
    argv,
    {
      model: { type: 'string', short: 'm' },
      'subword-fallback': { type: 'boolean' },
      'stored-dimensions': { type: 'string' },
      ...REMOTE_OPTIONS,
    },
    SIMILAR_HELP,
  );
  const list = words(positionals);
  if (list.length === 0)
    throw new UsageError('similar needs at least one word, e.g. embedding-edge similar cat dog', 'similar');
  const model = defaultModel(values);
  const body = values['subword-fallback'] === true ? { words: list, subwordFallback: true } : { words: list };
  const svc = service(values);
  const res =
    svc.kind === 'local'
      ? await svc.local.similarityMatrix(model, body)
      : await svc.client.similarityMatrix(model, body);
  const lines = [['word', ...res.words].map(csvField).join(',')];
  res.words.forEach((w, i) => lines.push([csvField(w), ...res.matrix[i].map(String)].join(',')));
  await writeOut(`${lines.join('\n')}\n`);
  return 0;
}

export const TOKENIZE_HELP = `
Usage: embedding-edge tokenize [options] [TEXT...]

Tokenizes TEXT (the arguments joined by spaces; stdin when none) as POST tokenizations does
and prints the response: {"tokenCount", "tokens": [{string, token, indexStart, indexEnd,
isStop, synonyms}]}.

  -l, --language LL         en, de, fr or ja (default en)
      --offset-unit UNIT    codePoint (default: characters, as Python indexes), utf16
                            (JavaScript string indices) or utf8 (bytes)
      --jsonl               one token per line instead of the response object
${REMOTE_HELP}`;

export async function tokenizeCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parse(
    'tokenize',
    argv,
    {
      language: { type: 'string', short: 'l' },
      'offset-unit': { type: 'string' },
      jsonl: { type: 'boolean' },
      ...REMOTE_OPTIONS,
    },
    TOKENIZE_HELP,
  );
  const text = positionals.length > 0 ? positionals.join(' ') : fs.readFileSync(0, 'utf8');
  const offsetUnit = str(values['offset-unit']);
  if (offsetUnit !== undefined && !(OFFSET_UNITS as readonly string[]).includes(offsetUnit))
    throw new UsageError(`--offset-unit must be one of ${OFFSET_UNITS.join(', ')}`, 'tokenize');
  const body = {
    language: str(values.language) ?? 'en',
    text,
    ...(offsetUnit ? { offsetUnit: offsetUnit as OffsetUnit } : {}),
  };
  const svc = service(values);
  let res: { tokenCount: number; tokens: unknown[] };
  if (svc.kind === 'local') res = await svc.local.tokenize(body);
  else {
    needsWorkspace(svc.client);
    res = await svc.client.tokenize(body);
  }
  await writeOut(values.jsonl ? res.tokens.map((t) => `${JSON.stringify(t)}\n`).join('') : `${JSON.stringify(res)}\n`);
  return 0;
}

export const MODELS_HELP = `
Usage: embedding-edge models <list|import|build> [options]

  models list [--api URL --token T]
      The embedding models, one JSON object per line. Locally: the models in
      build/generated/models with their mapper bundles; remotely: GET /api/v1/embedding-models.
  models import FILE --id ID --language LL --country CC [options]
      Imports word vectors (GloVe, word2vec/fastText text or binary, wink JSON) into
      build/generated/models/ID.emb (and local R2 unless --no-upload); see
      "embedding-edge models import --help".
  models build
      Builds what is missing in build/generated: kernels, the default model, its mapper
      bundles, the tokenizer language data.`;

export async function models(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'import') {
    if (rest.includes('--help') || rest.includes('-h'))
      process.stdout.write('embedding-edge models import: the same as `npm run model:import`.\n\n');
    await importModelCommand(rest);
    return 0;
  }
  if (sub === 'build') {
    parse('models build', rest, {}, MODELS_HELP, false);
    const artifacts = await buildEngineArtifacts();
    await writeOut(artifacts.map((a) => `${JSON.stringify({ key: a.key, file: a.file })}\n`).join(''));
    return 0;
  }
  if (sub === 'list') {
    const { values } = parse('models list', rest, { ...REMOTE_OPTIONS }, MODELS_HELP, false);
    const svc = service(values);
    if (svc.kind === 'local') {
      const out = localManifests().map((m) => {
        const { labels: _labels, ...rest } = m as typeof m & { labels?: unknown };
        return `${JSON.stringify({ ...rest, mapperBundles: localBundleKeys(m.id) })}\n`;
      });
      await writeOut(out.join(''));
      return 0;
    }
    for (let page = 1; ; page++) {
      const res = await svc.client.listModels({ page, size: 100 });
      await writeOut(res.data.map((m) => `${JSON.stringify(m)}\n`).join(''));
      if (page >= res.page.totalPages) break;
    }
    return 0;
  }
  if (sub === undefined || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(`${MODELS_HELP.trim()}\n`);
    return sub === undefined ? 2 : 0;
  }
  throw new UsageError(`unknown models command '${sub}'; the models commands are list, import and build`, 'models');
}
