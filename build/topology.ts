/**
 * The workers of one deployment as Miniflare runs them (build/serve.ts): the API Worker, one model
 * host per host of the placement (core/placement.ts; the same bundle, entrypoint ModelHost, its
 * HOST_BINDING set), each bound to the others by service bindings, and all with the D1/R2/KV
 * bindings of wrangler.toml, so they share one local storage as they share the account's in
 * production. The Durable Object (the workspace meters) lives in the API Worker only.
 */
import type { WorkerOptions } from 'miniflare';
import { placementVar, type Placement } from '../core/placement';

export const API_WORKER = 'embedding-edge';
export const hostWorkerName = (hostName: string): string => `${API_WORKER}-${hostName}`;
/** The API Worker without hosts (every model in-process), for parity tests and benches. */
export const SINGLE_WORKER = `${API_WORKER}-single`;

/**
 * service: the hosts are Worker scripts reached by service bindings with RPC (the deployment's
 * choice, docs/architecture.md). durable-object: the candidate measured against it by
 * bench:topology, a ModelHostObject per host in the host's script (bench/workers/topology-do-entry.ts).
 */
export type HostKind = 'service' | 'durable-object';

export interface TopologyOptions {
  /** wrangler.toml's worker options (bindings, compatibility), without its module rules. */
  base: WorkerOptions;
  modules: WorkerOptions['modules'];
  modulesRoot: string;
  /** null: the one-Worker deployment (no hosts). */
  placement: Placement | null;
  /** Vars set on every worker (e.g. HOST_TIMEOUT_MS, MODEL_MEMORY_BUDGET_BYTES). */
  vars?: Record<string, string>;
  /** Also serve SINGLE_WORKER directly on this port (sharing the API Worker's meters and storage). */
  singlePort?: number;
  /**
   * Also serve the API Worker directly on this port, past Miniflare's entry worker (which adds
   * about 0.3-1 ms a request): benches compare it with SINGLE_WORKER's direct port on equal terms.
   */
  directPort?: number;
  hostKind?: HostKind;
}

export function topologyWorkers(o: TopologyOptions): WorkerOptions[] {
  const vars = { ...(o.base.bindings as Record<string, string> | undefined), ...o.vars };
  const common = { ...o.base, modules: o.modules, modulesRoot: o.modulesRoot } as WorkerOptions;
  const hosts = o.placement?.hosts ?? [];
  const placement = o.placement ? { PLACEMENT: placementVar(o.placement) } : {};
  const hostBindings = (except?: string) =>
    Object.fromEntries(
      hosts
        .filter((h) => h.binding !== except)
        .map((h) => [h.binding, { name: hostWorkerName(h.name), entrypoint: 'ModelHost' }]),
    );
  // The Durable Object candidate: the API Worker reaches host n's object through HOST_n_OBJECT.
  const objects = o.hostKind === 'durable-object';
  const hostObject = (h: { binding: string; name: string }) => ({
    className: 'ModelHostObject',
    scriptName: hostWorkerName(h.name),
  });
  const api: WorkerOptions = {
    ...common,
    name: API_WORKER, // Durable Object state under do/embedding-edge-WorkspaceMeter, as wrangler dev keeps it
    bindings: { ...vars, ...placement },
    serviceBindings: { ...common.serviceBindings, ...hostBindings() },
    ...(o.directPort === undefined ? {} : { unsafeDirectSockets: [{ host: '127.0.0.1', port: o.directPort }] }),
    ...(objects
      ? {
          durableObjects: {
            ...common.durableObjects,
            ...Object.fromEntries(hosts.map((h) => [`${h.binding}_OBJECT`, hostObject(h)])),
          },
        }
      : {}),
  } as WorkerOptions;
  const hostWorkers = hosts.map(
    (h) =>
      ({
        ...common,
        name: hostWorkerName(h.name),
        durableObjects: objects ? { [`${h.binding}_OBJECT`]: { className: 'ModelHostObject' } } : {},
        // A host keeps the budget it was placed by, unless one is set (--var MODEL_MEMORY_BUDGET_BYTES=N).
        bindings: {
          ...placement,
          MODEL_MEMORY_BUDGET_BYTES: String(o.placement!.budgetBytes),
          ...vars,
          HOST_BINDING: h.binding,
        },
        serviceBindings: { ...common.serviceBindings, ...hostBindings(h.binding) },
      }) as WorkerOptions,
  );
  const single: WorkerOptions[] =
    o.singlePort === undefined
      ? []
      : [
          {
            ...common,
            name: SINGLE_WORKER,
            bindings: vars,
            durableObjects: { METER: { className: 'WorkspaceMeter', scriptName: API_WORKER, useSQLite: true } },
            unsafeDirectSockets: [{ host: '127.0.0.1', port: o.singlePort }],
          } as WorkerOptions,
        ];
  return [api, ...hostWorkers, ...single];
}

/**
 * The wrangler configurations of a deployment with model hosts, from wrangler.toml and the
 * placement: the API Worker (wrangler.toml with PLACEMENT and a service binding per host) and one
 * Worker per host (the same main module, the entrypoint ModelHost reached through the bindings,
 * no workers.dev route, no Durable Object, no cron). Paths in them are relative to ROOT.
 */
export function deployConfigs(
  raw: Record<string, unknown>,
  placement: Placement,
): Record<string, Record<string, unknown>> {
  const vars = { ...(raw.vars as Record<string, string> | undefined), PLACEMENT: placementVar(placement) };
  const services = (except?: string) =>
    placement.hosts
      .filter((h) => h.binding !== except)
      .map((h) => ({ binding: h.binding, service: hostWorkerName(h.name), entrypoint: 'ModelHost' }));
  const out: Record<string, Record<string, unknown>> = {
    [API_WORKER]: { ...raw, vars, services: [...((raw.services as unknown[]) ?? []), ...services()] },
  };
  for (const h of placement.hosts) {
    // A host has no route, Durable Object or cron of its own: only the API Worker reaches it.
    const {
      durable_objects: _objects,
      migrations: _migrations,
      triggers: _triggers,
      routes: _routes,
      route: _route,
      ...rest
    } = raw;
    out[hostWorkerName(h.name)] = {
      ...rest,
      name: hostWorkerName(h.name),
      workers_dev: false,
      // A host keeps the budget it was placed by, unless wrangler.toml sets one (as locally).
      vars: { MODEL_MEMORY_BUDGET_BYTES: String(placement.budgetBytes), ...vars, HOST_BINDING: h.binding },
      services: services(h.binding),
    };
  }
  return out;
}
