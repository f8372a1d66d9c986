/**
 * Bench-only Worker entry (bench:topology): the Durable Object candidate for model hosts, measured
 * against the service bindings the deployment uses (docs/architecture.md "Model hosts"). The same
 * app and host calls (worker/hosts/host.ts hostCalls), with each host's work run by one object of
 * ModelHostObject in the host's script (build/topology.ts hostKind durable-object): the API
 * Worker's HOST_n bindings are replaced by the stubs of those objects. Never deployed.
 */
import { DurableObject } from 'cloudflare:workers';
import worker from '../../worker/index';
import { hostCalls, type HostMethod } from '../../worker/hosts/host';
import type { Env } from '../../worker/env';
import { routesFromVar } from '../../core/placement';

export { WorkspaceMeter, ModelHost } from '../../worker/index';

export class ModelHostObject extends DurableObject<Env> {
  /** A call's own context: its pins end with it (the object's state is shared by its calls). */
  private calls() {
    const state = this.ctx;
    return hostCalls(this.env, { waitUntil: (p) => state.waitUntil(p) });
  }

  run(method: HostMethod, args: unknown[]) {
    return this.calls().run(method, args);
  }

  rows(id: string, words: string[]) {
    return this.calls().rows(id, words);
  }

  memory() {
    return this.calls().memory();
  }

  statuses(ids: string[]) {
    return this.calls().statuses(ids);
  }
}

/** The API Worker with each HOST_n binding replaced by the stub of host n's object. */
export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    const bindings = env as unknown as Record<string, unknown>;
    const hosts = env.PLACEMENT ? routesFromVar(env.PLACEMENT).hosts : [];
    const wrapped: Record<string, unknown> = { ...bindings };
    for (const h of hosts) {
      const ns = bindings[`${h.binding}_OBJECT`] as DurableObjectNamespace | undefined;
      if (ns) wrapped[h.binding] = ns.get(ns.idFromName(h.name));
    }
    return worker.fetch(request, wrapped as unknown as Env, ctx);
  },
} satisfies ExportedHandler<Env>;
