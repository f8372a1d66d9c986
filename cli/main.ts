/**
 * `embedding-edge` (npx embedding-edge ...): bulk scoring and the API's word tools from the
 * command line, locally (core + WASM in this process) or against a server (--api).
 */
import { nearMiss, UsageError } from './args';
import { report } from './common';

const HELP = `
Usage: embedding-edge <command> [options]

Commands:
  score      score texts of a JSONL or CSV file, JSONL out (text-scores)
  find       nearest words to seed words (word-scores, find-and-score mode)
  similar    similarity matrix of words, CSV out (word-similarity-matrices)
  tokenize   tokens of a text (tokenizations)
  models     list, import or build embedding models

Each command runs locally by default (no server, no quota) or against a service with
--api URL --token T. "embedding-edge <command> --help" for its options.
Docs: docs/cli.md`;

// Loaded on use: a command's --help does not load the model tooling of the others.
const COMMANDS = new Map<string, (argv: string[]) => Promise<number>>([
  ['score', async (argv) => (await import('./score')).score(argv)],
  ['find', async (argv) => (await import('./commands')).find(argv)],
  ['similar', async (argv) => (await import('./commands')).similar(argv)],
  ['tokenize', async (argv) => (await import('./commands')).tokenizeCommand(argv)],
  ['models', async (argv) => (await import('./commands')).models(argv)],
]);

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${HELP.trim()}\n`);
    return command ? 0 : 2;
  }
  const run = COMMANDS.get(command);
  if (!run) {
    const guess = nearMiss(command, [...COMMANDS.keys()]);
    const known = [...COMMANDS.keys()].join(', ');
    const message = `unknown command '${command}'${guess ? ` (did you mean '${guess}'?)` : ''}; the commands are ${known}`;
    return report(new UsageError(message, ''));
  }
  try {
    return await run(rest);
  } catch (err) {
    return report(err);
  }
}

// An early close of stdout (e.g. `| head`) ends the run quietly.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.exitCode = report(err);
  },
);
