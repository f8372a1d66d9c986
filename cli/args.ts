/**
 * Command-line options read with node:util parseArgs, and usage errors worded for people: parseArgs'
 * own messages name its internals ("argument is ambiguous", "positional argument") and the one for
 * an unknown option ends in an unbalanced quote, so a failed parse is described again from its
 * tokens: which option or argument is wrong, the option meant when it is a near miss (leven), and
 * the --help that lists the right ones.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { closestMatch } from 'leven';

export type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * A mistake in the command line (exit 2). `command` ('score', 'models list'; '' for embedding-edge
 * itself): its --help is named after the message.
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

/** The line printed after a usage error of `command` ('' for the command itself). */
export const helpHint = (command: string): string =>
  `Run 'embedding-edge${command ? ` ${command}` : ''} --help' to see the ${command ? 'options' : 'commands'}.`;

/** The closest of `names` to `given` when it is a likely typo of it (at most 2 edits), else undefined. */
export function nearMiss(given: string, names: readonly string[]): string | undefined {
  return closestMatch(given, names, { maxDistance: 2 });
}

/**
 * Parses `argv` (strict: unknown options and, unless allowed, arguments are errors). A failure is a
 * UsageError of `command` saying what is wrong in the user's words.
 */
export function parseOptions<T extends Options>(command: string, argv: string[], options: T, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError(describe(argv, options, allowPositionals, command) ?? (err as Error).message, command);
  }
}

/** The first mistake in `argv`, found in its tokens (a lenient parse that does not throw). */
function describe(argv: string[], options: Options, allowPositionals: boolean, command: string): string | undefined {
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  const known = new Map(Object.entries(options));
  for (const t of tokens) {
    if (t.kind === 'positional') {
      if (!allowPositionals) return `'embedding-edge ${command}' takes no arguments, but got '${t.value}'`;
      continue;
    }
    if (t.kind !== 'option') continue;
    const option = known.get(t.name);
    if (!option) {
      const guess = t.rawName.startsWith('--') ? nearMiss(t.name, [...known.keys()]) : undefined;
      return `unknown option '${t.rawName}'${guess ? ` (did you mean '--${guess}'?)` : ''}`;
    }
    if (option.type === 'boolean' && t.value !== undefined)
      return `'${t.rawName}' is a switch and takes no value, but got '${t.rawName}=${t.value}'`;
    if (option.type === 'string') {
      if (t.value === undefined) return `'${t.rawName}' needs a value after it`;
      // parseArgs refuses `--model -x`: "-x" may be a forgotten value or the next option.
      // "--model --quiet": a forgotten value before the next option, no "=" form to suggest.
      if (!t.inlineValue && /^--?[^-]/.test(t.value) && known.has(t.value.replace(/^--?/, '').split('=')[0]!))
        return `'${t.rawName}' needs a value after it, but is followed by the option '${t.value}'`;
      if (!t.inlineValue && t.value.startsWith('-'))
        return `'${t.rawName}' needs a value after it, but is followed by '${t.value}' (for a value that starts with '-', write ${t.rawName.startsWith('--') ? `${t.rawName}=${t.value}` : `--${t.name}=${t.value}`})`;
    }
  }
  return undefined;
}
