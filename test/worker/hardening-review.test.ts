/**
 * Issue 31 (hostile-client review), findings 8, 9 and 11 to 14:
 * #8 short fields are bounded and a problem quotes at most a few dozen characters of what the
 *    client sent (and lists at most 100 field errors);
 * #9 an Idempotency-Key on a free route (autocomplete) is ignored: nothing is stored;
 * #11 a token whose segments are not canonical base64url (padding, other alphabet, unused bits
 *    set) is 401;
 * #12 a token whose `sub` is not a well-formed, control-free string of 1 to 255 characters is 401,
 *    so no such actor reaches the audit log;
 * #13 page, size and path ids are plain decimal integers (0x10, 1e2, +1, " 1" are 422);
 * #14 an unknown workspace is 404 NOT_FOUND on the free workspace route as on the metered ones,
 *    and a workspace known to exist costs the free route no storage call.
 */
import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../../worker/index';
import { makeModel, mintToken, uploadEnglish, uploadModel, type SyntheticModel } from './support/api';
import {
  adminToken,
  call,
  createWorkspace,
  meterOf,
  problemOf,
  readAudit,
  uniqueWorkspaceId,
  workspaceToken,
} from './support/quotas';

/** "A few dozen characters": the most of one client value a problem may quote. */
const QUOTED_MAX = 64;

let m: SyntheticModel;

beforeAll(async () => {
  await uploadEnglish();
  m = makeModel('review-en', { seed: 31 });
  await uploadModel(m);
});

/** One request straight through the Worker's fetch handler (this isolate's module state), with the given bindings. */
async function direct(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
  bindings: unknown = env,
): Promise<Response> {
  const exec = createExecutionContext();
  const res = await worker.fetch(new Request(`http://x${path}`, init), bindings as never, exec);
  await waitOnExecutionContext(exec);
  return res;
}

/** The longest run of `ch` in `text`. */
function longestRun(text: string, ch: string): number {
  let best = 0;
  let run = 0;
  for (const c of text) {
    run = c === ch ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

async function post(path: string, token: string, body: unknown, headers: Record<string, string> = {}) {
  return call('POST', path, { token, body: typeof body === 'string' ? body : JSON.stringify(body), headers });
}

describe('#8 bounded fields and bounded echoes', () => {
  it('a 1.9 MB language is a short 422 that quotes at most a few dozen of its characters', async () => {
    const ws = 'ws_demo';
    const token = await workspaceToken(ws);
    const res = await post(`/api/v1/workspaces/${ws}/tokenizations`, token, {
      language: 'x'.repeat(1_900_000),
      text: 'a',
    });
    expect(res.status).toBe(422);
    const text = await res.text();
    expect(text.length).toBeLessThan(2000);
    expect(longestRun(text, 'x')).toBeLessThanOrEqual(QUOTED_MAX);
    expect(JSON.parse(text).code).toBe('VALIDATION_FAILED');
    expect(JSON.parse(text).errors[0].path).toBe('language');
    // Within the bound: still UNSUPPORTED_LANGUAGE, quoting the value.
    const short = await post(`/api/v1/workspaces/${ws}/tokenizations`, token, { language: 'xx', text: 'a' });
    expect(short.status).toBe(422);
    expect((await problemOf(short)).code).toBe('UNSUPPORTED_LANGUAGE');
  });

  it('unknown member names, long ids and long paths are quoted cut; field errors are at most 100', async () => {
    const token = await workspaceToken('ws_demo');
    // word-translations is strict: an unknown member is named in the message.
    const body = `{"words":["a"],"${'k'.repeat(1_900_000)}":1}`;
    const strict = await post(`/api/v1/embedding-models/${m.id}/word-translations`, token, body);
    expect(strict.status).toBe(422);
    const strictText = await strict.text();
    expect(strictText.length).toBeLessThan(2000);
    expect(longestRun(strictText, 'k')).toBeLessThanOrEqual(QUOTED_MAX);

    // targetModelId is a model id: the identifier pattern and length.
    const target = await post(`/api/v1/embedding-models/${m.id}/word-translations`, token, {
      words: ['a'],
      targetModelId: 'q'.repeat(150),
    });
    expect(target.status).toBe(422);
    expect((await problemOf(target.clone())).code).toBe('VALIDATION_FAILED');
    expect(longestRun(await target.text(), 'q')).toBeLessThanOrEqual(QUOTED_MAX);

    // 10,000 wrong list elements: 100 field errors, not 10,000.
    const many = await post(`/api/v1/workspaces/ws_demo/word-scores`, token, {
      seedWords: Array.from({ length: 10_000 }, () => 1),
      embeddingModelId: m.id,
    });
    expect(many.status).toBe(422);
    const manyBody = (await many.json()) as { errors: unknown[]; detail: string };
    expect(manyBody.errors).toHaveLength(100);
    expect(manyBody.detail).toContain('10000');

    // A long unknown path and a long workspace segment.
    const longPath = await call('GET', `/api/v1/${'p'.repeat(10_000)}`, { token });
    expect(longPath.status).toBe(404);
    expect(longestRun(await longPath.text(), 'p')).toBeLessThanOrEqual(QUOTED_MAX);
    const otherWs = await post(`/api/v1/workspaces/${'w'.repeat(5_000)}/tokenizations`, token, {
      language: 'en',
      text: 'a',
    });
    expect(otherWs.status).toBe(403);
    expect(longestRun(await otherWs.text(), 'w')).toBeLessThanOrEqual(QUOTED_MAX);
  });

  it('admin: page refs and the url filter are quoted cut or bounded', async () => {
    const admin = await adminToken();
    const ref = `https://r.example/${'r'.repeat(2000)}`;
    const missing = await call('GET', `/api/admin/v1/plagiarism/pages/${encodeURIComponent(ref)}`, { token: admin });
    expect(missing.status).toBe(404);
    expect(longestRun(await missing.text(), 'r')).toBeLessThanOrEqual(QUOTED_MAX);
    const filter = await call('GET', `/api/admin/v1/plagiarism/pages?url=${'u'.repeat(5000)}`, { token: admin });
    expect(filter.status).toBe(422);
    expect((await problemOf(filter)).code).toBe('VALIDATION_FAILED');
  });
});

describe('#9 Idempotency-Key on a free route', () => {
  it('autocomplete ignores the key: nothing is stored, another body with the key is answered', async () => {
    const ws = uniqueWorkspaceId('free');
    await createWorkspace(ws, 1, []); // allowance 0 for every usage type
    const token = await workspaceToken(ws);
    const path = `/api/v1/workspaces/${ws}/autocomplete-suggestions`;
    const first = await post(path, token, { word: 'app', embeddingModelId: m.id }, { 'idempotency-key': 'k1' });
    expect(first.status).toBe(200);
    const other = await post(path, token, { word: 'ban', embeddingModelId: m.id }, { 'idempotency-key': 'k1' });
    expect(other.status).toBe(200);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(((await other.json()) as { suggestions: string[] }).suggestions.every((s) => s.startsWith('ban'))).toBe(
      true,
    );
    const again = await post(path, token, { word: 'app', embeddingModelId: m.id }, { 'idempotency-key': 'k1' });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    // Ignored means ignored: a key that would be malformed on a metered route is no error here.
    const odd = await post(path, token, { word: 'app', embeddingModelId: m.id }, { 'idempotency-key': ' x' });
    expect(odd.status).toBe(200);
    const rows = await runInDurableObject(meterOf(ws), (_, state) =>
      Number(state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM request_keys').one().n),
    );
    expect(rows).toBe(0);
  });
});

describe('#11 canonical base64url in every token segment', () => {
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  /** The segment with its last character's unused low bit flipped (same bytes when decoded leniently). */
  const flipUnusedBit = (segment: string): string => {
    const last = ALPHABET.indexOf(segment[segment.length - 1]);
    return segment.slice(0, -1) + ALPHABET[last ^ 1];
  };

  it('padding, the base64 alphabet and set unused bits are refused; the canonical token is accepted', async () => {
    const secret = new TextEncoder().encode(env.JWT_SECRET);
    const now = Math.floor(Date.now() / 1000);
    // Header and payload whose byte lengths leave unused bits in their last character.
    const mint = (pad: number) =>
      new SignJWT({ workspaceId: 'ws_demo', pad: 'p'.repeat(pad) })
        .setProtectedHeader({ alg: 'HS256', kid: 'k' })
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(secret);
    const wanted = (t: string) => {
      const [h, p, s] = t.split('.');
      return h.length % 4 !== 0 && p.length % 4 !== 0 && s.length % 4 !== 0 && /[-_]/.test(s);
    };
    let pad = 0;
    let tok = await mint(pad);
    while (!wanted(tok)) {
      if (++pad > 200) throw new Error('no token with the wanted segment lengths');
      tok = await mint(pad);
    }
    const [h, p, s] = tok.split('.');
    const get = (t: string) => call('GET', '/api/v1/embedding-models', { token: t });
    expect((await get(tok)).status).toBe(200);
    const forms = {
      'padding after the signature': `${tok}=`,
      'two padding characters': `${tok}==`,
      'padded payload': `${h}.${p}${'='.repeat(4 - (p.length % 4))}.${s}`,
      'unused bits of the signature': `${h}.${p}.${flipUnusedBit(s)}`,
      'unused bits of the payload': `${h}.${flipUnusedBit(p)}.${s}`,
      'unused bits of the header': `${flipUnusedBit(h)}.${p}.${s}`,
      'base64 alphabet': `${h}.${p}.${s.replace(/-/g, '+').replace(/_/g, '/')}`,
      'a length of 4n + 1': `${h}.${p}.${s}${'A'.repeat((5 - (s.length % 4)) % 4)}`,
    };
    for (const [what, form] of Object.entries(forms)) {
      expect(form, what).not.toBe(tok);
      const res = await get(form);
      expect(res.status, what).toBe(401);
      expect((await problemOf(res)).code, what).toBe('UNAUTHORIZED');
    }
  });
});

describe('#12 the token subject', () => {
  it('a sub that is not well-formed, has control characters, is empty, too long or no string is 401; none is stored', async () => {
    const ws = uniqueWorkspaceId('sub');
    await createWorkspace(ws, 1, []);
    const rename = (token: string, name: string) =>
      call('PATCH', `/api/admin/v1/workspaces/${ws}`, { token, body: { name } });
    const bad: unknown[] = [
      '\ud800',
      'a\ud800b',
      'a\u0000b',
      'tab\there',
      'del\u007f',
      'c1\u0085',
      '',
      's'.repeat(256),
      42,
    ];
    for (const sub of bad) {
      const res = await rename(await mintToken({ workspaceId: 'ops', scope: 'admin', sub }), 'renamed');
      expect(res.status, JSON.stringify(sub)).toBe(401);
      expect((await problemOf(res)).code).toBe('UNAUTHORIZED');
    }
    const good = `admin-ü-😀-${'s'.repeat(240)}`;
    expect(good.length).toBeLessThanOrEqual(255);
    expect((await rename(await mintToken({ workspaceId: 'ops', scope: 'admin', sub: good }), 'ok')).status).toBe(200);
    const actors = (await readAudit(ws)).map((e) => e.actor);
    expect(actors).toContain(good);
    expect(actors.filter((a) => a !== good && a !== 'test-admin')).toEqual([]);
  });
});

describe('#13 plain decimal integers in lists and paths', () => {
  it('every page, size and dimension id: 0x10, 1e2, +1, " 1", "1 ", 1.0, "" and others are 422; 1 is 200', async () => {
    const ws = uniqueWorkspaceId('num');
    await createWorkspace(ws, 1, []);
    const user = await workspaceToken(ws);
    const admin = await adminToken();
    const targets: Array<[string, string, (v: string) => string]> = [
      ['page', user, (v) => `/api/v1/embedding-models?page=${v}`],
      ['size', user, (v) => `/api/v1/embedding-models?size=${v}`],
      ['size', user, (v) => `/api/v1/mappers?size=${v}`],
      ['page', admin, (v) => `/api/admin/v1/dimensions?page=${v}`],
      ['size', admin, (v) => `/api/admin/v1/dimensions?size=${v}`],
      ['id', admin, (v) => `/api/admin/v1/dimensions/${v}`],
      ['page', admin, (v) => `/api/admin/v1/plagiarism/pages?page=${v}`],
      ['size', admin, (v) => `/api/admin/v1/plagiarism/pages?size=${v}`],
      ['page', user, (v) => `/api/usage-service/v1/workspaces/${ws}/quotas?page=${v}`],
      ['size', user, (v) => `/api/usage-service/v1/workspaces/${ws}/quotas?size=${v}`],
      ['size', user, (v) => `/api/usage-service/v1/usage-types?size=${v}`],
      ['page', admin, (v) => `/api/admin/v1/workspaces/${ws}/usage-ledger?page=${v}`],
      ['size', admin, (v) => `/api/admin/v1/workspaces/${ws}/audit-log?size=${v}`],
    ];
    const badValues = [
      '0x1',
      '0x10',
      '1e0',
      '1e2',
      '+1',
      ' 1',
      '1 ',
      '1.0',
      '0b1',
      '0o1',
      '1_0',
      '١',
      '-0',
      'Infinity',
    ];
    const encoded = [...badValues.map(encodeURIComponent), '+1' /* a form-encoded space */, '%091'];
    for (const [name, token, url] of targets) {
      const ok = await call('GET', url('1'), { token });
      expect(ok.status, url('1')).toBe(200);
      if (name !== 'id') {
        const absent = await call('GET', url('1').replace(/[?&](page|size)=1/, ''), { token });
        expect(absent.status, 'absent').toBe(200);
        const empty = await call('GET', url(''), { token });
        expect(empty.status, url('')).toBe(422);
      }
      for (const v of encoded) {
        const res = await call('GET', url(v), { token });
        expect(res.status, url(v)).toBe(422);
        expect((await problemOf(res)).code).toBe('VALIDATION_FAILED');
      }
    }
  });
});

describe('#14 unknown workspace on the free route', () => {
  it('autocomplete on an unknown workspace is 404 NOT_FOUND like text-scores; nothing is remembered', async () => {
    const ws = uniqueWorkspaceId('ghost');
    const token = await workspaceToken(ws);
    const send = (route: string, body: unknown) =>
      direct(`/api/v1/workspaces/${ws}/${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const metered = await send('text-scores', { texts: ['apple'], embeddingModelId: m.id });
    const free = await send('autocomplete-suggestions', { word: 'app', embeddingModelId: m.id });
    expect(metered.status).toBe(404);
    const meteredCode = (await problemOf(metered)).code;
    expect(free.status).toBe(404);
    expect((await problemOf(free)).code).toBe(meteredCode);
    // An unknown workspace is not remembered as unknown: once created, it is served.
    await createWorkspace(ws, 1, []);
    expect((await send('autocomplete-suggestions', { word: 'app', embeddingModelId: m.id })).status).toBe(200);
  });

  it('autocomplete on a known workspace costs one meter call (its admission) and no D1 call', async () => {
    const ws = uniqueWorkspaceId('known');
    await createWorkspace(ws, 1, []);
    const token = await workspaceToken(ws);
    const send = (bindings: unknown) =>
      direct(
        `/api/v1/workspaces/${ws}/autocomplete-suggestions`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ word: 'app', embeddingModelId: m.id }),
        },
        bindings,
      );
    expect((await send(env)).status).toBe(200);
    const refuse = () => {
      throw new Error('storage must not be called');
    };
    const noD1 = { ...env, DB: { prepare: refuse, batch: refuse, exec: refuse, dump: refuse, withSession: refuse } };
    const res = await send(noD1);
    expect(res.status, await res.clone().text()).toBe(200);
    // Admission asks the meter every time (existence, and the workspace's rate): without it, 503.
    const noStorage = {
      ...noD1,
      METER: { idFromName: refuse, get: refuse, newUniqueId: refuse, idFromString: refuse },
    };
    expect((await send(noStorage)).status).toBe(503);
    // The same bindings on an unknown workspace reach the meter: the check is not skipped.
    const ghost = uniqueWorkspaceId('ghost2');
    const unknown = await direct(
      `/api/v1/workspaces/${ghost}/autocomplete-suggestions`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${await workspaceToken(ghost)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ word: 'app', embeddingModelId: m.id }),
      },
      noStorage,
    );
    expect(unknown.status).toBe(503);
  });
});
