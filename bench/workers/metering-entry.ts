/**
 * Bench-only Worker entry (bench:api's metering section, bench/api-metering.ts; served by
 * build/serve.ts --entry): the production Worker plus what the section compares a metered request
 * with, none of which a deployment contains (wrangler.toml's main is worker/index.ts).
 *
 * - `X-Bench-Unmetered: 1`, the unmetered twin: the very same request (route, body, auth,
 *   validation, scoring, response) whose charge is answered `free` in the Worker, without a call
 *   to the workspace's meter, so metered minus twin is the meter alone.
 * - `X-Bench-Meter-Probe: rpc | write`, the floor under the meter: the charge is replaced by the
 *   two parts every charge is made of. `rpc`: the same bounded call to the workspace's meter,
 *   which writes nothing (the Worker-to-object round trip); `write`: the same call making the
 *   smallest durable write the object can make (one row of a table of its own, one synchronous
 *   transaction, answered after the output gate as a charge is), touching no counter, outbox or key.
 *
 * Both replace only the meter binding the app sees: its stubs answer `charge()` themselves and
 * forward every other call (key claims, quota reads) to the real object. Any other request goes
 * to the production Worker unchanged.
 */
import worker from '../../worker/index';
import type { Env } from '../../worker/env';
import { excerpt } from '../../core/problem';
import { WorkspaceMeter as ProductionMeter } from '../../worker/quotas/meter-do';
import type { MeterChargeRequest, MeterChargeResult } from '../../worker/quotas/meter-charge';

export { ModelHost } from '../../worker/index';

type BenchProbe = 'rpc' | 'write';

/** The production meter with the probe (the class keeps its name: wrangler.toml binds WorkspaceMeter). */
export class WorkspaceMeter extends ProductionMeter {
  /** A new value per write probe, so each one dirties its row. */
  private probeWrites = 0;

  /** After the same readiness check as a charge, `rpc` answers at once, `write` makes one durable write. */
  async benchProbe(probe: BenchProbe, workspaceId: string, atMs: number): Promise<'done' | 'unknown-workspace'> {
    if (!(await this.exists(workspaceId, atMs))) return 'unknown-workspace';
    if (probe === 'write') {
      const sql = this.ctx.storage.sql;
      // The table once per object: the probe measures one row's write, not a schema check.
      if (this.probeWrites === 0)
        sql.exec('CREATE TABLE IF NOT EXISTS bench_probe (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
      this.ctx.storage.transactionSync(() => {
        sql.exec('INSERT OR REPLACE INTO bench_probe (id, n) VALUES (1, ?)', ++this.probeWrites);
      });
    }
    return 'done';
  }
}

type MeterStub = DurableObjectStub<WorkspaceMeter>;
type ChargeAnswer = (stub: MeterStub, req: MeterChargeRequest) => Promise<MeterChargeResult>;

const unmeteredTwin: ChargeAnswer = async () => ({ status: 'free' });

const probeCharge =
  (probe: BenchProbe): ChargeAnswer =>
  async (stub, req) => {
    const out = await stub.benchProbe(probe, req.workspaceId, req.atMs);
    if (out === 'unknown-workspace')
      return { status: 'refused', code: 'NOT_FOUND', detail: `Workspace '${excerpt(req.workspaceId)}' does not exist` };
    return { status: 'free' };
  };

/** The charge answer a request asks for with the bench headers; null: none (the production path). */
function chargeAnswerOf(request: Request): ChargeAnswer | null {
  if (request.headers.get('x-bench-unmetered') === '1') return unmeteredTwin;
  const probe = request.headers.get('x-bench-meter-probe');
  return probe === 'rpc' || probe === 'write' ? probeCharge(probe) : null;
}

/** The METER namespace whose stubs answer charge() with `answer` and pass every other call to the real object. */
function meterWithCharge(real: Env['METER'], answer: ChargeAnswer): Env['METER'] {
  return new Proxy(real, {
    get(target, prop) {
      if (prop === 'get') {
        return (id: DurableObjectId) => {
          const stub = target.get(id) as unknown as MeterStub;
          return new Proxy(stub, {
            get: (s, method) =>
              method === 'charge'
                ? (req: MeterChargeRequest) => answer(s, req)
                : // (A stub's method is a remote path: call it on the stub, never via .apply.)
                  (...args: unknown[]) =>
                    (s as unknown as Record<string | symbol, (...a: unknown[]) => unknown>)[method](...args),
          });
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    const answer = chargeAnswerOf(request);
    if (answer === null) return worker.fetch(request, env, ctx);
    return worker.fetch(request, { ...env, METER: meterWithCharge(env.METER, answer) }, ctx);
  },
} satisfies ExportedHandler<Env>;
