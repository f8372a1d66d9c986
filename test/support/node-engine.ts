/**
 * The engine as the CLI runs it (core/engine.ts over cli/local.ts FileSource, in Node): the
 * reference the EngineSource suite compares answers that must be identical in every runtime
 * with (test/support/engine-source-suite.ts, sub-word fallback). The workerd runner reaches it
 * through the NODE_ENGINE service binding (vitest.config.ts), the others call it directly.
 */
import type { Engine } from '../../core/engine';

/** The engine calls the reference answers (text-scores answers its response alone). */
export type ReferenceCall = 'textScores' | 'wordScores' | 'similarityMatrix' | 'wordAvailabilities';

let engine: Engine | null = null;

/** The CLI engine's answer to a call, as JSON carries it. */
export async function nodeEngineAnswer(call: ReferenceCall, args: unknown[]): Promise<unknown> {
  // Imported on first use: vitest.config.ts loads this module for every run.
  if (!engine) {
    const [{ FileSource }, { createEngine }] = await Promise.all([
      import('../../cli/local'),
      import('../../core/engine'),
    ]);
    engine = createEngine(new FileSource({ build: false }));
  }
  const answer =
    call === 'textScores'
      ? (await engine.textScores(args[0])).response
      : call === 'wordScores'
        ? await engine.wordScores(args[0])
        : call === 'similarityMatrix'
          ? await engine.similarityMatrix(args[0] as string, args[1])
          : await engine.wordAvailabilities(args[0] as string, args[1]);
  return JSON.parse(JSON.stringify(answer));
}

/** The NODE_ENGINE service binding: POST {call, args} -> the answer as JSON. */
export async function nodeEngineService(request: Request): Promise<Response> {
  const { call, args } = (await request.json()) as { call: ReferenceCall; args: unknown[] };
  return Response.json(await nodeEngineAnswer(call, args));
}
