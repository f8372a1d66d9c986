/**
 * Asks for the JWT configuration of a first deploy (docs/auth.md): a JWKS URL (RS256/ES256, the
 * production choice) or an HS256 secret, typed without echo. Without a terminal it fails at once
 * with what to do instead of waiting for input that never comes.
 */
import readline from 'node:readline';

export const NO_TERMINAL =
  '[deploy] no JWT configuration is set and there is no terminal to ask for one: run ' +
  '`npx wrangler secret put JWT_JWKS_URL` (or JWT_SECRET) first, then deploy again';

function ask(question: string, hidden: boolean): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  if (hidden) {
    // Echo nothing of the answer (the prompt itself is written before muting).
    const write = (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput.bind(rl);
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
      if (s.includes(question)) write(s);
    };
  }
  return new Promise((resolve) =>
    rl.question(question, (answer) => {
      rl.close();
      if (hidden) process.stdout.write('\n');
      resolve(answer.trim());
    }),
  );
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
