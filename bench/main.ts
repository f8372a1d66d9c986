/**
 * A bench file run directly (`npx tsx bench/<name>.ts`) rather than imported by
 * `npm run bench`: runs it and prints its figures as the last line, one JSON object.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function runIfMain(moduleUrl: string, run: () => Promise<unknown>): void {
  if (!process.argv[1] || path.resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  run()
    .then((figures) => console.log(JSON.stringify(figures)))
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
