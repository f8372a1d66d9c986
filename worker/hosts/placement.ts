/**
 * The placement the API Worker and the hosts route by: the PLACEMENT var (core/placement.ts
 * placementVar, set by build/topology.ts), parsed once per isolate. Without it, or for a model it
 * does not place (one imported after the last placement), the Worker scores in-process under its
 * own memory budget, as a one-Worker deployment does.
 */
import { routesFromVar } from '../../core/placement';
import type { Env } from '../env';
import type { HostStub } from './host';

/** Maps: model ids and languages are looked up with request strings. */
export type Routes = ReturnType<typeof routesFromVar>;

const NONE: Routes = { hosts: [], models: new Map(), languages: new Map(), sharded: new Map(), companions: new Map() };
let parsed: { from: string; routes: Routes } | null = null;

export function routesOf(env: Env): Routes {
  const text = env.PLACEMENT;
  if (!text) return NONE;
  if (parsed?.from === text) return parsed.routes;
  const routes = routesFromVar(text);
  parsed = { from: text, routes };
  return routes;
}

/** The stub of the host bound as `binding`, or null when this Worker has no such binding (it is that host). */
export function hostStub(env: Env, binding: string | undefined): HostStub | null {
  if (!binding || binding === env.HOST_BINDING) return null;
  const stub = (env as unknown as Record<string, unknown>)[binding];
  return stub ? (stub as HostStub) : null;
}
