/**
 * Gates for forcing interleavings in workerd tests (binding GATE, vitest.config.ts). Runs in Node,
 * so a request that waits at a gate waits on real I/O of its own, not on a promise of another
 * request context (which workerd may never deliver).
 *
 *   GET http://gate/wait/{name}    answers once the gate is open (marks it reached)
 *   GET http://gate/reached/{name} answers once something waits (or waited) at the gate
 *   GET http://gate/open/{name}    opens the gate
 */
interface Gate {
  reached: boolean;
  open: boolean;
  onOpen: Array<() => void>;
  onReach: Array<() => void>;
}

const gates = new Map<string, Gate>();

function gateOf(name: string): Gate {
  let g = gates.get(name);
  if (!g) {
    g = { reached: false, open: false, onOpen: [], onReach: [] };
    gates.set(name, g);
  }
  return g;
}

export async function gateService(request: Request): Promise<Response> {
  const [, action, ...rest] = new URL(request.url).pathname.split('/');
  const g = gateOf(decodeURIComponent(rest.join('/')));
  if (action === 'wait') {
    g.reached = true;
    for (const f of g.onReach.splice(0)) f();
    if (!g.open) await new Promise<void>((r) => g.onOpen.push(r));
  } else if (action === 'reached') {
    if (!g.reached) await new Promise<void>((r) => g.onReach.push(r));
  } else if (action === 'open') {
    g.open = true;
    for (const f of g.onOpen.splice(0)) f();
  } else return new Response('unknown action', { status: 404 });
  return new Response('ok');
}
