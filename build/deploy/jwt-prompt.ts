/**
 * Asks for the JWT configuration of a first deploy (docs/auth.md): a JWKS URL (RS256/ES256, the
 * production choice) or an HS256 secret, typed without echo. Without a terminal it fails at once
 * with what to do instead of waiting for input that never comes.
 */
import readline from 'node:readline';
import { Writable } from 'node:stream';

export const NO_TERMINAL =
  '[deploy] no JWT configuration is set and there is no terminal to ask for one: run ' +
  '`npx wrangler secret put JWT_JWKS_URL` (or JWT_SECRET) first, then deploy again';

function ask(question: string, hidden: boolean): Promise<string> {
  // A hidden answer goes through an output that writes nothing once the question is out: readline
  // redraws the line (backspace, resize) through its output, so only a muted one never shows it.
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stdout.write(chunk);
      done();
    },
  });
  const rl = readline.createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve) => {
    rl.question(question, (answer) => {
      rl.close();
      if (hidden) process.stdout.write('\n');
      resolve(answer.trim());
    });
    muted = hidden;
  });
}

export async function askJwt(): Promise<{ name: 'JWT_JWKS_URL' | 'JWT_SECRET'; value: string }> {
  if (!process.stdin.isTTY) throw new Error(NO_TERMINAL);
  const url = await ask('JWKS URL of your identity provider (empty: use an HS256 secret instead): ', false);
  if (url) {
    if (!/^https:\/\//.test(url)) throw new Error('[deploy] the JWKS URL must be an https:// URL');
    return { name: 'JWT_JWKS_URL', value: url };
  }
  const secret = await ask('HS256 secret (at least 32 characters, not shown): ', true);
  if (secret.length < 32) throw new Error('[deploy] the HS256 secret must have at least 32 characters');
  return { name: 'JWT_SECRET', value: secret };
}
