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

/** A write that is one of the expected lines (and the stack line that follows a dropped line). */
function filtered(write: typeof process.stdout.write): typeof process.stdout.write {
  let dropStack = false;
  return function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
    const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString() : '';
    if (dropStack && text.startsWith('stack: ')) {
      dropStack = false;
      return true;
    }
    dropStack = false;
    if (text && EXPECTED.some((re) => re.test(text))) {
      dropStack = !text.includes('\nstack: ');
      return true;
    }
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
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
