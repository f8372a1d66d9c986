/**
 * The `embedding-edge` CLI as a user runs it (node bin/embedding-edge.js in a child process),
 * locally on the default model (DEFAULT_MODEL_ID, built by the global setup):
 *   - golden files per command (test/gold/cli/; UPDATE_GOLDEN=1 rewrites them after an
 *     intended change of scores or formats);
 *   - score's output lines equal to the input record + the scored text that the core's
 *     text-scores computation returns for the same request;
 *   - bad rows reported with line number and reason, skipped, or stopping the run (--strict);
 *   - resume from a checkpoint after a --strict stop and after the process was killed;
 *   - --dimension-keys name: the same output keyed by the dimensions' names;
 *   - the wording: singular and plural in the summary lines, the exact usage and error messages.
 * Parity with the served API (wrangler dev) is in test/e2e/cli-parity.test.ts.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../build/wrangler';
import { DEFAULT_MODEL_ID } from '../../build/paths';
import { LocalService } from '../../cli/local';
import { count } from '../../core/plural';
import { needs } from '../support/optional-data';

const BIN = path.join(ROOT, 'bin', 'embedding-edge.js');
const GOLD = path.join(ROOT, 'test', 'gold', 'cli');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-test-'));

afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }));

function cli(args: string[], stdin?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    input: stdin ?? '',
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function golden(name: string, actual: string): void {
  const file = path.join(GOLD, name);
  if (process.env.UPDATE_GOLDEN === '1' || !fs.existsSync(file)) fs.writeFileSync(file, actual);
  expect(actual, `${name} differs from the golden file (UPDATE_GOLDEN=1 rewrites it after an intended change)`).toBe(
    fs.readFileSync(file, 'utf8'),
  );
}

const SCORE_ARGS = [
  '--mapper',
  'sentiment_valence',
  '--dimension',
  'food=pizza,pasta,bread,burger',
  '--dimension',
  'service=waiter,staff',
  '--no-progress',
];
const jsonl = (s: string): Array<Record<string, unknown>> =>
  s
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('score', () => {
  it('JSONL: each line is the input record + the scored text of text-scores (golden, and equal to the core computation)', async () => {
    const r = cli(['score', ...SCORE_ARGS, path.join(GOLD, 'reviews.jsonl')]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/scored 6 texts in [\d.]+ s \(\d+ texts\/s, \d+ tokens, \d+ tokens\/s\); 0 bad rows/);
    golden('score.jsonl', r.stdout);

    const input = jsonl(fs.readFileSync(path.join(GOLD, 'reviews.jsonl'), 'utf8'));
    const local = new LocalService();
    const api = await local.textScores({
      texts: input.map((x) => x.text),
      embeddingModelId: DEFAULT_MODEL_ID,
      mapperKeys: ['sentiment_valence'],
      dimensions: [
        { id: 1, type: 'manual', name: 'food', words: ['pizza', 'pasta', 'bread', 'burger'] },
        { id: 2, type: 'manual', name: 'service', words: ['waiter', 'staff'] },
      ],
    });
    const expected = input.map((rec, i) => ({ ...rec, ...(JSON.parse(JSON.stringify(api.data[i])) as object) }));
    expect(jsonl(r.stdout)).toEqual(expected);
    const first = jsonl(r.stdout)[0];
    expect(Object.keys(first.dimensionScores as object)).toEqual(['1', '2']);
    expect(Object.keys(first.mapperScores as object)).toEqual(['sentiment_valence']);
  });

  it('CSV input (quoted fields), stdin, goal config and extra request fields passed through', () => {
    const csv = fs.readFileSync(path.join(GOLD, 'reviews.csv'), 'utf8');
    const r = cli(
      [
        'score',
        ...SCORE_ARGS,
        '--format',
        'csv',
        '--goal',
        '{"dimensions":[{"id":1,"weight":1}],"mappers":[{"id":"sentiment_valence","weight":2}]}',
        '--set',
        'futureField=true',
        '-',
      ],
      csv,
    );
    expect(r.status, r.stderr).toBe(0);
    golden('score-csv.jsonl', r.stdout);
    const rows = jsonl(r.stdout);
    expect(rows.map((x) => x.text)).toEqual([
      'The pizza was great and the waiter was friendly.',
      'Terrible service, cold food, never again!',
      "I didn't like the pasta but the bread was wonderful.",
      'She said "awful", I said "fine".',
    ]);
    expect(rows[0].stars).toBe('5');
    expect(typeof rows[0].goalScore).toBe('number');
    expect((rows[0].goalScoreFactors as unknown[]).length).toBe(2);
  });

  it('bad rows: reported with line number and reason, skipped; --strict stops at the first', () => {
    const lines = [
      '{"text":"good food"}',
      'not json',
      '',
      '["an","array"]',
      '{"title":"no text"}',
      '{"text":42}',
      `{"text":"${'a'.repeat(100_001)}"}`,
      '{"text":"bad service"}',
    ];
    const file = path.join(TMP, 'bad.jsonl');
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const r = cli(['score', '--no-progress', file]);
    expect(r.status, r.stderr).toBe(0);
    expect(jsonl(r.stdout).map((x) => x.text)).toEqual(['good food', 'bad service']);
    const reported = r.stderr.split('\n').filter((l) => l.startsWith('line '));
    expect(reported).toEqual([
      expect.stringMatching(/^line 2: not valid JSON \(/),
      'line 4: expected a JSON object, got an array',
      'line 5: no "text" field',
      'line 6: "text" is number, expected a string',
      'line 7: "text" has 100001 characters, at most 100000 are allowed',
    ]);
    expect(r.stderr).toContain('; 5 bad rows');

    const strict = cli(['score', '--no-progress', '--strict', file]);
    expect(strict.status).toBe(1);
    expect(strict.stdout).toBe('');
    expect(strict.stderr).toContain('line 2: not valid JSON');
    expect(strict.stderr).toContain('stopped at line 2 (--strict)');
    expect(strict.stderr).not.toContain('line 4:');

    const csv = path.join(TMP, 'bad.csv');
    fs.writeFileSync(csv, 'id,text\n1,fine\n2,too,many\n3,also fine\n');
    const c = cli(['score', '--no-progress', csv]);
    expect(c.status, c.stderr).toBe(0);
    expect(jsonl(c.stdout).map((x) => x.id)).toEqual(['1', '3']);
    expect(c.stderr).toMatch(/line 3: wrong number of columns/);
  });

  it('languageMismatch: in the output as text-scores returns it; the summary counts the flagged texts with their lines, across a resume', () => {
    const texts = [
      'The food was great and the staff were friendly.',
      'Le repas était très bon et le service est rapide.',
      'Super!',
      'Das Essen war sehr gut und der Service ist schnell.',
      '料理はとても美味しくて、サービスも早かったです。',
    ];
    const lines = texts.map((text, i) => JSON.stringify({ id: i + 1, text }));
    const file = path.join(TMP, 'languages.jsonl');
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const r = cli(['score', '--no-progress', file]);
    expect(r.status, r.stderr).toBe(0);
    const rows = jsonl(r.stdout);
    expect(rows.map((x) => x.languageMismatch)).toEqual([
      undefined,
      { modelLanguage: 'en', detectedLanguage: 'fr', evidence: 'stop-words' },
      undefined,
      { modelLanguage: 'en', detectedLanguage: 'de', evidence: 'stop-words' },
      { modelLanguage: 'en', detectedLanguage: 'ja', evidence: 'script' },
    ]);
    const summary = "3 texts look like another language than the model's (en): lines 2 (fr), 4 (de), 5 (ja)\n";
    expect(r.stderr.endsWith(summary), r.stderr).toBe(true);
    expect(cli(['score', '--no-progress', '-q', file]).stderr).toBe('');

    // Stopped at a broken line 3 after the first batch, then resumed: the summary counts both runs' texts.
    fs.writeFileSync(file, `${[lines[0], lines[1], '{"id":3,', ...lines.slice(3)].join('\n')}\n`);
    const ck = path.join(TMP, 'languages.ckpt');
    const out = path.join(TMP, 'languages.out.jsonl');
    const args = ['score', '--no-progress', '--strict', '--batch-size', '2', '--checkpoint', ck, '-o', out, file];
    const first = cli(args);
    expect(first.status).toBe(1);
    expect(first.stderr).toContain("1 text looks like another language than the model's (en): line 2 (fr)\n");
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const second = cli(args);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toContain(`resuming ${file} after record 2 (so far 2 texts scored, 0 bad rows)\n`);
    expect(second.stderr).toMatch(/scored 3 texts/);
    expect(second.stderr.endsWith(summary), second.stderr).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toBe(r.stdout);
  });

  it('request errors are the API problems: unknown mapper, unknown model, bad usage', () => {
    const input = path.join(GOLD, 'reviews.jsonl');
    const mapper = cli(['score', '--mapper', 'nope_x', input]);
    expect(mapper.status).toBe(1);
    expect(mapper.stderr).toContain(
      `error: 422 MAPPER_NOT_FOUND: No mapper 'nope_x' for embedding model '${DEFAULT_MODEL_ID}'`,
    );
    expect(mapper.stderr).toContain('mapperKeys.0: unknown mapper key');
    const model = cli(['score', '--model', 'xx-none', input]);
    expect(model.status).toBe(1);
    expect(model.stderr).toContain("error: 404 EMBEDDING_MODEL_NOT_FOUND: No embedding model 'xx-none'");
    const usage = cli(['score', '--batch-size', '500', input]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('--batch-size is at most 100');
  });
});

describe('resume', () => {
  const base = (n: number): string =>
    Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        i,
        text: `Review ${i}: the ${['pizza', 'service', 'bread', 'staff'][i % 4]} was ${['great', 'awful', 'fine'][i % 3]}.`,
      }),
    ).join('\n') + '\n';

  it('after a --strict stop: the fixed file is resumed from the checkpoint; the output equals an uninterrupted run', () => {
    const good = base(250);
    const full = path.join(TMP, 'full.jsonl');
    fs.writeFileSync(path.join(TMP, 'good.jsonl'), good);
    const whole = cli(['score', ...SCORE_ARGS, '--batch-size', '50', '-o', full, path.join(TMP, 'good.jsonl')]);
    expect(whole.status, whole.stderr).toBe(0);

    const lines = good.split('\n');
    const broken = [...lines];
    broken[179] = '{"i":179,"text":'; // line 180 cut off
    const file = path.join(TMP, 'resume.jsonl');
    fs.writeFileSync(file, broken.join('\n'));
    const out = path.join(TMP, 'resume.out.jsonl');
    const ck = path.join(TMP, 'resume.ckpt');
    const first = cli(['score', ...SCORE_ARGS, '--batch-size', '50', '--strict', '--checkpoint', ck, '-o', out, file]);
    expect(first.status).toBe(1);
    expect(first.stderr).toContain('line 180: not valid JSON');
    expect(JSON.parse(fs.readFileSync(ck, 'utf8'))).toMatchObject({ records: 150, scored: 150, bad: 0 });
    expect(fs.readFileSync(out, 'utf8').split('\n')).toHaveLength(151);

    fs.writeFileSync(file, good);
    const second = cli(['score', ...SCORE_ARGS, '--batch-size', '50', '--strict', '--checkpoint', ck, '-o', out, file]);
    expect(second.status, second.stderr).toBe(0);
    expect(second.stderr).toContain('resuming');
    expect(second.stderr).toMatch(/scored 100 texts/);
    expect(fs.readFileSync(out, 'utf8')).toBe(fs.readFileSync(full, 'utf8'));
    expect(fs.existsSync(ck)).toBe(false);
  });

  it('after the process was killed mid-run: rerunning the same command completes the output exactly', async () => {
    const n = 4000;
    const file = path.join(TMP, 'kill.jsonl');
    fs.writeFileSync(file, base(n));
    const out = path.join(TMP, 'kill.out.jsonl');
    const ck = path.join(TMP, 'kill.ckpt');
    const args = [BIN, 'score', ...SCORE_ARGS, '--batch-size', '10', '--checkpoint', ck, '-o', out, file];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Kill it once a few batches are written (whenever that is; any point must resume exactly).
    for (;;) {
      if (fs.existsSync(ck)) {
        const c = JSON.parse(fs.readFileSync(ck, 'utf8')) as { records: number };
        if (c.records >= 50) break;
      }
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await exited;
    const killedAt = fs.existsSync(ck) ? (JSON.parse(fs.readFileSync(ck, 'utf8')) as { records: number }).records : n;
    expect(killedAt).toBeGreaterThanOrEqual(50);
    const resumed = cli(['score', ...SCORE_ARGS, '--batch-size', '10', '--checkpoint', ck, '-o', out, file]);
    expect(resumed.status, resumed.stderr).toBe(0);
    const whole = path.join(TMP, 'kill.full.jsonl');
    expect(cli(['score', ...SCORE_ARGS, '--batch-size', '10', '-o', whole, file]).status).toBe(0);
    const got = fs.readFileSync(out, 'utf8');
    expect(got.split('\n')).toHaveLength(n + 1);
    expect(got).toBe(fs.readFileSync(whole, 'utf8'));
  });
});

describe('find, similar, tokenize, models', () => {
  it('find: nearest words as word-scores data lines (golden)', () => {
    const r = cli(['find', '--limit', '8', 'delicious', 'tasty']);
    expect(r.status, r.stderr).toBe(0);
    golden('find.jsonl', r.stdout);
    const words = jsonl(r.stdout);
    expect(words).toHaveLength(8);
    expect(words.map((w) => w.word)).not.toContain('tasty');
    const seeds = words.map((w) => w.seedScore as number);
    expect([...seeds].sort((a, b) => b - a)).toEqual(seeds);
  });

  it('similar: the matrix as CSV, unknown words dropped (golden)', () => {
    const r = cli(['similar', 'cat', 'dog', 'car', 'qqqzzzxx']);
    expect(r.status, r.stderr).toBe(0);
    golden('similar.csv', r.stdout);
    const rows = r.stdout.trim().split('\n');
    expect(rows[0]).toBe('word,cat,dog,car');
    expect(rows[1].split(',')[1]).toBe('1');
  });

  it('similar --subword-fallback and score --subword-fallback compose the words outside the vocabulary', () => {
    const r = cli(['similar', '--subword-fallback', 'beautiful', 'beautifull', 'qqqzzzxx']);
    expect(r.status, r.stderr).toBe(0);
    const rows = r.stdout.trim().split('\n');
    expect(rows[0]).toBe('word,beautiful,beautifull,qqqzzzxx');
    expect(Number(rows[1].split(',')[2])).toBeGreaterThan(Number(rows[1].split(',')[3]));
    const input = '{"text":"beautifull"}\n';
    const dimension = ['-d', 'pretty=beautiful,lovely', '-q'];
    const off = jsonl(cli(['score', ...dimension], input).stdout);
    const on = jsonl(cli(['score', ...dimension, '--subword-fallback'], input).stdout);
    expect(off[0].dimensionScores).toEqual({});
    expect((on[0].dimensionScores as Record<string, number>)['1']).toBeGreaterThan(0);
  });

  it('tokenize: the tokenizations response (golden); stdin text', () => {
    const r = cli(['tokenize', '--language', 'en', "The children don't like rainy days."]);
    expect(r.status, r.stderr).toBe(0);
    golden('tokenize.json', r.stdout);
    const s = cli(['tokenize', '--jsonl', '-l', 'fr'], "L'homme mange.");
    expect(jsonl(s.stdout).map((t) => t.string)).toEqual(["L'", 'homme', 'mange']);
    const bad = cli(['tokenize', '-l', 'xx', 'hello']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('422 UNSUPPORTED_LANGUAGE');
  });

  it('models list: the default model and its mapper bundles (golden line)', () => {
    const r = cli(['models', 'list']);
    expect(r.status, r.stderr).toBe(0);
    const line = r.stdout.split('\n').find((l) => l.includes('"id":"en-glove-6b-100d"'));
    expect(line).toBeDefined();
    if (needs('models list golden line with the pattern bundle', 'pattern-mapper'))
      golden('models-list.jsonl', `${line}\n`);
    else {
      // Without the Debian-built pattern bundle the line is the golden one minus that bundle.
      const gold = JSON.parse(fs.readFileSync(path.join(GOLD, 'models-list.jsonl'), 'utf8'));
      gold.mapperBundles = gold.mapperBundles.filter((k: string) => k !== 'pattern');
      expect(JSON.parse(line!)).toEqual(gold);
    }
    expect(JSON.parse(line!).mapperBundles).toContain('sentiment');
  });

  it('every command has --help; unknown commands and options are usage errors (exit 2)', () => {
    for (const cmd of ['score', 'find', 'similar', 'tokenize']) {
      const r = cli([cmd, '--help']);
      expect(r.status).toBe(0);
      expect(r.stdout).toContain(`Usage: embedding-edge ${cmd}`);
    }
    expect(cli(['models', '--help']).stdout).toContain('models list');
    expect(cli(['models', 'list', '--help']).stdout).toContain('Usage: embedding-edge models');
    expect(cli(['models', 'import', '--help']).stdout).toContain('--language');
    expect(cli(['--help']).stdout).toContain('Commands:');
    expect(cli(['frobnicate']).status).toBe(2);
    const unknown = cli(['score', '--frob']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe(
      "error: unknown option '--frob'\nRun 'embedding-edge score --help' to see the options.\n",
    );
  });
});

describe('--dimension-keys name', () => {
  const input = path.join(GOLD, 'reviews.jsonl');
  const NAMES = { '1': 'food', '2': 'service' };
  const byName = (scores: unknown): Record<string, unknown> =>
    Object.fromEntries(Object.entries(scores as object).map(([id, v]) => [NAMES[id as '1' | '2'], v]));

  it('score: the lines of the default run with dimensionScores and explanation.dimensions keyed by the names', () => {
    const args = ['score', ...SCORE_ARGS, '--set', 'explain=true', input];
    const ids = cli(args);
    const names = cli([...args, '--dimension-keys', 'name']);
    expect(ids.status, ids.stderr).toBe(0);
    expect(names.status, names.stderr).toBe(0);
    const expected = jsonl(ids.stdout).map((line) => {
      const explanation = line.explanation as { dimensions: object; mappers: object } | undefined;
      return {
        ...line,
        dimensionScores: byName(line.dimensionScores),
        ...(explanation ? { explanation: { ...explanation, dimensions: byName(explanation.dimensions) } } : {}),
      };
    });
    expect(jsonl(names.stdout)).toEqual(expected);
    const first = jsonl(names.stdout)[0];
    expect(Object.keys(first.dimensionScores as object)).toEqual(['food', 'service']);
    expect(Object.keys((first.explanation as { dimensions: object }).dimensions)).toEqual(['food', 'service']);
    // The default (and --dimension-keys id) keeps the interface's keys.
    expect(Object.keys(jsonl(ids.stdout)[0].dimensionScores as object)).toEqual(['1', '2']);
    expect(cli([...args, '--dimension-keys', 'id']).stdout).toBe(ids.stdout);
  });

  it('find: the words and the averages keyed by the names', () => {
    const args = [
      'find',
      '-n',
      '5',
      '-d',
      'food=pizza,pasta',
      '-d',
      'mood=good,great|bad,awful',
      '--averages',
      'delicious',
    ];
    const ids = jsonl(cli(args).stdout);
    const names = jsonl(cli([...args, '--dimension-keys', 'name']).stdout);
    expect(names).toHaveLength(6);
    const rename = (scores: unknown) =>
      Object.fromEntries(Object.entries(scores as object).map(([id, v]) => [{ '1': 'food', '2': 'mood' }[id], v]));
    expect(names.slice(0, 5)).toEqual(
      ids.slice(0, 5).map((w) => ({ ...w, dimensionScores: rename(w.dimensionScores) })),
    );
    const averages = (ids[5] as { averages: Record<string, unknown> }).averages;
    expect(names[5]).toEqual({ averages: { ...averages, dimensionScores: rename(averages.dimensionScores) } });
    expect(Object.keys((names[5].averages as { dimensionScores: object }).dimensionScores)).toEqual(['food', 'mood']);
  });

  it('an unnamed dimension keeps its id; a name is an own key whatever it spells; keys that collide are refused before anything is written', () => {
    const r = cli(
      ['score', '-q', '-d', '__proto__=pizza,pasta', '-d', 'waiter,staff', '--dimension-keys', 'name'],
      '{"text":"The pizza was great."}\n',
    );
    expect(r.status, r.stderr).toBe(0);
    const scores = jsonl(r.stdout)[0].dimensionScores as Record<string, number>;
    // (JSON objects list integer-like keys first.)
    expect(Object.keys(scores)).toEqual(['2', '__proto__']);
    expect(Object.hasOwn(scores, '__proto__') && typeof scores.__proto__).toBe('number');

    const out = path.join(TMP, 'collide.jsonl');
    for (const [dims, message] of [
      [['food=pizza', 'food=bread'], "dimensions 1 and 2 would both be keyed 'food'"],
      [['waiter', '1=pizza'], "dimensions 1 and 2 would both be keyed '1'"],
    ] as const) {
      const c = cli(['score', ...dims.flatMap((d) => ['-d', d]), '--dimension-keys', 'name', '-o', out, input]);
      expect(c.status).toBe(2);
      expect(c.stderr).toBe(`error: --dimension-keys name: ${message}; give each dimension its own name\n`);
      expect(fs.existsSync(out)).toBe(false);
    }
  });
});

describe('wording', () => {
  it('summary lines count in the singular and the plural', () => {
    const one = cli(['score', '--no-progress', '-d', 'food=pizza'], '{"text":"pizza"}\nnot json\n');
    expect(one.status, one.stderr).toBe(0);
    expect(one.stderr).toMatch(
      /^line 2: not valid JSON \(.*\)\nscored 1 text in [\d.]+ s \(\d+ texts\/s, 1 token, \d+ tokens\/s\); 1 bad row; peak memory \d+ MB\n$/,
    );
    const two = cli(['score', '--no-progress', '-d', 'food=pizza'], '{"text":"pizza pasta"}\n{"text":"bread"}\n');
    expect(two.stderr).toMatch(
      /^scored 2 texts in [\d.]+ s \(\d+ texts\/s, 3 tokens, \d+ tokens\/s\); 0 bad rows; peak memory/,
    );
    const none = cli(['score', '--no-progress'], '');
    expect(none.stderr).toMatch(/^scored 0 texts in [\d.]+ s \(\d+ texts\/s, 0 tokens, \d+ tokens\/s\); 0 bad rows;/);
    // Retries happen only against a service; the helper that counts them is the one above.
    expect([0, 1, 2].map((n) => count(n, 'retry', 'retries'))).toEqual(['0 retries', '1 retry', '2 retries']);
  });

  it('usage errors: what is wrong and which --help to read, exit 2 (exact text)', () => {
    const cases: Array<[string[], string]> = [
      [
        ['score', '--dimesion', 'food=pizza'],
        "error: unknown option '--dimesion' (did you mean '--dimension'?)\nRun 'embedding-edge score --help' to see the options.\n",
      ],
      [['score', '-x'], "error: unknown option '-x'\nRun 'embedding-edge score --help' to see the options.\n"],
      [
        ['find', '--model'],
        "error: '--model' needs a value after it\nRun 'embedding-edge find --help' to see the options.\n",
      ],
      [
        ['score', '--model', '-x'],
        "error: '--model' needs a value after it, but is followed by '-x' (for a value that starts with '-', write --model=-x)\nRun 'embedding-edge score --help' to see the options.\n",
      ],
      [
        ['score', '--model', '--quiet'],
        "error: '--model' needs a value after it, but is followed by the option '--quiet'\nRun 'embedding-edge score --help' to see the options.\n",
      ],
      [
        ['score', '--quiet=yes'],
        "error: '--quiet' is a switch and takes no value, but got '--quiet=yes'\nRun 'embedding-edge score --help' to see the options.\n",
      ],
      [
        ['scroe'],
        "error: unknown command 'scroe' (did you mean 'score'?); the commands are score, find, similar, tokenize, models\nRun 'embedding-edge --help' to see the commands.\n",
      ],
      [
        ['models', 'list', 'all'],
        "error: 'embedding-edge models list' takes no arguments, but got 'all'\nRun 'embedding-edge models list --help' to see the options.\n",
      ],
      [
        ['models', 'remove'],
        "error: unknown models command 'remove'; the models commands are list, import and build\nRun 'embedding-edge models --help' to see the options.\n",
      ],
      [
        ['models', 'import', '--frob'],
        "error: unknown option '--frob'\nRun 'embedding-edge models import --help' to see the options.\n",
      ],
      [
        ['models', 'import', 'vectors.vec', '--id', 'x'],
        "error: an import needs --language, --country\nRun 'embedding-edge models import --help' to see the options.\n",
      ],
      [
        ['find'],
        "error: find needs at least one seed word, e.g. embedding-edge find tasty\nRun 'embedding-edge find --help' to see the options.\n",
      ],
      [
        ['score', 'a.jsonl', 'b.jsonl'],
        "error: score reads one INPUT file, but got 2: 'a.jsonl' 'b.jsonl' (quote a --dimension that has spaces)\nRun 'embedding-edge score --help' to see the options.\n",
      ],
      [['score', '--batch-size', 'ten'], "error: --batch-size must be a whole number of at least 1, not 'ten'\n"],
      [['score', '--batch-size', '500'], 'error: --batch-size is at most 100 (texts per request), not 500\n'],
      [['score', '--dimension-keys', 'names'], "error: --dimension-keys must be 'id' or 'name', not 'names'\n"],
      [
        ['score', '--dimension', 'food='],
        "error: --dimension 'food=' has no seed words; write it as 'NAME=word1,word2'\n",
      ],
      [
        ['score', '--set', 'explain'],
        "error: --set 'explain' has no field name; write it as FIELD=VALUE, e.g. explain=true\n",
      ],
      [
        ['score', '--goal', 'goal.json'],
        "error: --goal takes JSON (starting with '{' or '[') or a file name, and there is no file 'goal.json'\n",
      ],
      [
        ['score', '--goal', '{dimensions:1}'],
        "error: --goal: this is not valid JSON (Expected property name or '}' in JSON at position 1)\n",
      ],
      [['score', '--format', 'xml'], "error: --format must be jsonl or csv, not 'xml'\n"],
      [
        ['score', '--checkpoint', 'run.ckpt'],
        'error: --checkpoint needs an INPUT file: a run that reads stdin cannot be resumed\n',
      ],
      [['score', 'test'], "error: 'test' is a folder; give a .jsonl or .csv file\n"],
      [
        ['score', '--api', 'http://127.0.0.1:1'],
        'error: --api needs a token: add --token T or set $EMBEDDING_EDGE_TOKEN\n',
      ],
    ];
    const junk = path.join(TMP, 'junk.ckpt');
    fs.writeFileSync(junk, 'not a checkpoint');
    const other = path.join(TMP, 'other.ckpt');
    fs.writeFileSync(other, JSON.stringify({ version: 1, runId: 'r', input: 'other.jsonl', records: 3 }));
    const reviews = path.join(GOLD, 'reviews.jsonl');
    cases.push(
      [
        ['score', '--checkpoint', junk, reviews],
        `error: '${junk}' is not a checkpoint of embedding-edge score; give another --checkpoint file, or delete '${junk}' to start over\n`,
      ],
      [
        ['score', '--checkpoint', other, reviews],
        `error: the checkpoint '${other}' belongs to the input 'other.jsonl', not '${reviews}'; give another --checkpoint file, or delete '${other}' to start over\n`,
      ],
    );
    for (const [args, message] of cases) {
      const r = cli(args);
      expect(r.stderr, args.join(' ')).toBe(message);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(message.split("'").length % 2, `balanced quotes: ${message}`).toBe(1);
    }
  });

  it('other errors say what failed: a missing file, a service that cannot be reached (exit 1)', async () => {
    const missing = cli(['score', path.join(TMP, 'nope.jsonl')]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(`error: file not found: '${path.join(TMP, 'nope.jsonl')}'\n`);

    // A port that was just free: nothing listens there.
    const port = await new Promise<number>((resolve) => {
      const server = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const api = ['--api', `http://127.0.0.1:${port}`, '--token', 'x', '--workspace', 'ws', '--no-progress'];
    const once = cli(['score', ...api, '--retries', '0'], '{"text":"hi"}\n');
    expect(once.status).toBe(1);
    expect(once.stderr).toBe(
      `error: NETWORK_ERROR: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})\nCould not reach the service: check the --api URL and the network connection.\n`,
    );
    const twice = cli(['similar', ...api.slice(0, -1), '--retries', '1', 'cat']);
    expect(twice.stderr).toBe(
      `error: NETWORK_ERROR: fetch failed (connect ECONNREFUSED 127.0.0.1:${port}); 2 attempts\nCould not reach the service: check the --api URL and the network connection.\n`,
    );
  });
});
