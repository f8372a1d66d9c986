/**
 * A green `npm test` reads clean: lines the runtime prints for events the tests cause on purpose
 * are dropped from the test process's output, and nothing else.
 * - "jsg.Error: test restart" (with its stack line): test/worker/support/quotas.ts restartMeter
 *   aborts a workspace meter to prove that its state survives a restart; workerd reports the
 *   abort of the calls in flight as uncaught.
 * - "D1_ERROR: injected network failure": test/worker/quotas-meter.test.ts breaks the meter's D1 on
 *   purpose; workerd reports the meter's rejected flush call, which the test expects, as uncaught.
 * - "WebSocket peer disconnected": workerd's note when vitest-pool-workers closes a test file's
 *   runner connection (its own ignore list has the "aborted" form only).
 * - "Using secrets defined in .dev.vars": wrangler's note each time the pool reads the config.
 * Anything else, warnings and errors included, is printed as it comes.
 */
const EXPECTED = [
  /broken\.outputGateBroken; jsg\.Error: test restart/,
  /Uncaught \(in promise\); stack = Error: D1_ERROR: injected network failure/,
  /disconnected: WebSocket peer disconnected/,
  /^Using secrets defined in \.dev\.vars\s*$/,
];

/** Lines that continue the one before: its stack (workerd's "stack: ..." or a JavaScript trace). */
const CONTINUATION = /^(stack: |\s+at )/;

/**
 * The write without the expected lines and the stack lines that follow one (line by line, so a
 * chunk that also holds anything else keeps it).
 */
function filtered(write: typeof process.stdout.write): typeof process.stdout.write {
  let dropping = false;
  return function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
    const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString() : '';
    if (!text) return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    const kept: string[] = [];
    let dropped = false;
    for (const line of text.split('\n')) {
      if (EXPECTED.some((re) => re.test(line)) || (dropping && CONTINUATION.test(line))) {
        dropping = dropped = true;
        continue;
      }
      if (line !== '') dropping = false;
      kept.push(line);
    }
    if (!dropped) return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    const out = kept.join('\n');
    return out.trim() === '' ? true : (write as (...a: unknown[]) => boolean).call(this, out, ...rest);
  } as typeof process.stdout.write;
}

/** For vitest's onConsoleLog: false drops a test's console line that is one of the expected lines. */
export function keepConsoleLog(log: string): boolean {
  return !EXPECTED.some((re) => re.test(log));
}

/** Installs the filter on this process's stdout and stderr (once). */
export function quietExpectedRuntimeOutput(): void {
  const marker = Symbol.for('embedding-edge.quiet-output');
  const g = globalThis as Record<symbol, unknown>;
  if (g[marker]) return;
  g[marker] = true;
  process.stdout.write = filtered(process.stdout.write.bind(process.stdout));
  process.stderr.write = filtered(process.stderr.write.bind(process.stderr));
}
