/**
 * Gated R2 (not a test file): the real bucket, except that chosen operations wait at a gate the
 * test opens. Tests use it to force an interleaving (a request ends while a load is held, a
 * read overlaps a write) instead of hoping that timing produces it.
 *
 * The gates live in Node (binding GATE, test/support/upstreams/gate.ts): a held operation waits on I/O
 * of its own request, never on a promise of the test's request context, which workerd need not
 * deliver to another request. For SELF requests install() swaps the ARTIFACTS binding of the
 * shared env object: the Worker's handler receives that same object (vitest-pool-workers).
 */
import { env } from 'cloudflare:test';

type Op = 'get' | 'head' | 'list' | 'put' | 'delete';

export interface Hold {
  /** Resolves once a matching operation has arrived (it waits until open()). */
  reached(): Promise<void>;
  /** True once a matching operation has arrived. */
  isReached(): boolean;
  /** Lets the waiting (and later) matching operations go on. */
  open(): Promise<void>;
}

interface Entry {
  op: Op;
  match: (subject: string) => boolean;
  name: string;
  hit: boolean;
}

const gate = async (action: 'wait' | 'reached' | 'open', name: string): Promise<void> => {
  const res = await env.GATE.fetch(`http://gate/${action}/${encodeURIComponent(name)}`);
  await res.text();
};

/** The first key of an operation: the key, the list prefix, the first key of a delete. */
function subjectOf(op: Op, args: unknown[]): string {
  if (op === 'list') return (args[0] as R2ListOptions | undefined)?.prefix ?? '';
  const k = args[0];
  return Array.isArray(k) ? String(k[0] ?? '') : String(k);
}

export class GatedBucket {
  private readonly holds: Entry[] = [];
  /** Every operation that reached the bucket, as "op subject", in order. */
  readonly log: string[] = [];
  readonly bucket: R2Bucket;

  constructor(real: R2Bucket) {
    const ops: Op[] = ['get', 'head', 'list', 'put', 'delete'];
    this.bucket = new Proxy(real, {
      get: (target, prop) => {
        if (ops.includes(prop as Op)) {
          const op = prop as Op;
          return async (...args: unknown[]) => {
            const subject = subjectOf(op, args);
            this.log.push(`${op} ${subject}`);
            for (const h of this.holds) {
              if (h.op === op && h.match(subject)) {
                h.hit = true;
                await gate('wait', h.name);
              }
            }
            return (target[op] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          };
        }
        const v = Reflect.get(target, prop);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }

  /** Holds operations `op` whose key (list: prefix) matches until the hold is opened. */
  hold(op: Op, match: string | ((subject: string) => boolean)): Hold {
    const entry: Entry = {
      op,
      match: typeof match === 'string' ? (s) => s === match : match,
      name: crypto.randomUUID(),
      hit: false,
    };
    this.holds.push(entry);
    return {
      reached: () => gate('reached', entry.name),
      isReached: () => entry.hit,
      open: () => gate('open', entry.name),
    };
  }

  /** Opens every hold. */
  async openAll(): Promise<void> {
    for (const h of this.holds) await gate('open', h.name);
  }
}

/** Puts a GatedBucket in place of env.ARTIFACTS (for SELF requests); call restore() after the test. */
export function installGatedArtifacts(): GatedBucket & { restore(): void } {
  const shared = env as unknown as { ARTIFACTS: R2Bucket };
  const real = shared.ARTIFACTS;
  const gated = new GatedBucket(real);
  shared.ARTIFACTS = gated.bucket;
  return Object.assign(gated, {
    restore: () => {
      shared.ARTIFACTS = real;
    },
  });
}
