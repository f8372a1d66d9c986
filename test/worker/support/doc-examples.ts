/**
 * Executed docs (not a test file): reads the request examples of a markdown document and compares
 * the service's answers with the documented ones. The conventions, written up at the top of
 * docs/api.md:
 *
 * - A shell block (```sh or ```bash) is an example only after a marker line `<!-- example: NAME -->`
 *   (optionally `status=NNN`, default 200). `<!-- example skip: REASON -->` marks one that is not
 *   run; the doc says why in prose. An unmarked shell block is an error, so none goes unchecked.
 * - The block holds one curl command; `$TOKEN` (a ws_demo token) and `$ADMIN` (an admin token) are
 *   the only variables. The ```json block right after it is the documented answer; a 204 has none.
 * - In the answer, numbers match to their printed digits (0.516 means 0.5155 to 0.5165; integers
 *   exactly), the string "..." matches any value, a key `"...": "..."` lets an object have fields
 *   the doc leaves out, and a last element "..." lets an array go on.
 */

export interface DocExample {
  name: string;
  /** 1-based line of the shell block's opening fence. */
  line: number;
  skip: string | null;
  status: number;
  request: DocRequest | null;
  /** The documented answer (DocNumber for numbers), or undefined when the doc shows none. */
  answer: unknown;
}

export interface DocRequest {
  method: string;
  /** Path and query of the URL. */
  path: string;
  headers: Record<string, string>;
  body: string | undefined;
}

interface Fence {
  lang: string;
  text: string;
  line: number;
  /** The last non-blank line before the opening fence. */
  before: string;
  /** Whether only blank lines separate this block from the previous one. */
  adjacent: boolean;
}

function fences(markdown: string): Fence[] {
  const lines = markdown.split('\n');
  const out: Fence[] = [];
  let before = '';
  let sinceBlock = Infinity; // non-blank lines since the last block closed
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) {
      if (lines[i].trim() !== '') {
        before = lines[i].trim();
        sinceBlock++;
      }
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    if (i >= lines.length) throw new Error(`line ${start + 1}: code block never closed`);
    out.push({ lang: open[1], text: body.join('\n'), line: start + 1, before, adjacent: sinceBlock === 0 });
    before = '';
    sinceBlock = 0;
  }
  return out;
}

const MARKER = /^<!--\s*example(\s+skip)?:\s*(.*?)\s*-->$/;

/** Every shell example of the document, in document order. */
export function docExamples(markdown: string, vars: Record<string, string>): DocExample[] {
  const blocks = fences(markdown);
  const out: DocExample[] = [];
  blocks.forEach((b, i) => {
    if (b.lang !== 'sh' && b.lang !== 'bash') return;
    const m = MARKER.exec(b.before);
    if (!m)
      throw new Error(
        `line ${b.line}: shell block without an <!-- example: NAME --> or <!-- example skip: REASON --> marker`,
      );
    const next = blocks[i + 1];
    const answerBlock = next && next.adjacent && next.lang === 'json' ? next : undefined;
    if (m[1]) {
      out.push({ name: m[2], line: b.line, skip: m[2], status: 0, request: null, answer: undefined });
      return;
    }
    const [name, ...options] = m[2].split(/\s+/);
    let status = 200;
    for (const o of options) {
      const s = /^status=(\d{3})$/.exec(o);
      if (!s) throw new Error(`line ${b.line}: unknown marker option "${o}"`);
      status = Number(s[1]);
    }
    const where = `docs line ${b.line} (${name})`;
    if (!answerBlock && status !== 204) throw new Error(`${where}: no \`\`\`json answer right after the command`);
    out.push({
      name,
      line: b.line,
      skip: null,
      status,
      request: curlRequest(b.text, vars, where),
      answer: answerBlock ? parseDocJson(answerBlock.text, `${where}, answer`) : undefined,
    });
  });
  return out;
}

// ----- the curl command -----

/** Shell words of one command: quotes, backslash line continuations, comments and $VARs. */
export function shellWords(text: string, vars: Record<string, string>, where = 'command'): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | null = null;
  const variable = (i: number): [string, number] => {
    const m = /^\$(\w+)/.exec(text.slice(i));
    if (!m) throw new Error(`${where}: only $NAME variables are supported (at "${text.slice(i, i + 12)}")`);
    if (!Object.hasOwn(vars, m[1])) throw new Error(`${where}: unknown variable $${m[1]}`);
    return [vars[m[1]], m[0].length];
  };
  const endWord = () => {
    if (word !== null) words.push(word);
    word = null;
  };
  const endCommand = () => {
    endWord();
    if (words.length) commands.push(words);
    words = [];
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\\' && text[i + 1] === '\n') {
      i++;
      continue;
    }
    if (c === '\n' || c === ';') endCommand();
    else if (c === ' ' || c === '\t') endWord();
    else if (c === '#' && word === null) while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw new Error(`${where}: unterminated '`);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i++; i < text.length && text[i] !== '"'; i++) {
        if (text[i] === '\\' && '"\\$'.includes(text[i + 1])) word += text[++i];
        else if (text[i] === '$') {
          const [value, length] = variable(i);
          word += value;
          i += length - 1;
        } else word += text[i];
      }
      if (i >= text.length) throw new Error(`${where}: unterminated "`);
    } else if (c === '$') {
      const [value, length] = variable(i);
      word = (word ?? '') + value;
      i += length - 1;
    } else if (c === '\\') word = (word ?? '') + text[++i];
    else if (c === '|' || c === '&' || c === '<' || c === '>' || c === '`')
      throw new Error(`${where}: pipes, redirections and substitutions are not supported`);
    else word = (word ?? '') + c;
  }
  endCommand();
  return commands;
}

/** The request of a block holding one curl command. */
export function curlRequest(text: string, vars: Record<string, string>, where = 'command'): DocRequest {
  const commands = shellWords(text, vars, where);
  if (commands.length !== 1 || commands[0][0] !== 'curl')
    throw new Error(`${where}: the block must hold exactly one curl command`);
  const args = commands[0].slice(1);
  let method: string | null = null;
  let url: string | null = null;
  let body: string | undefined;
  const headers: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      if (i + 1 >= args.length) throw new Error(`${where}: ${a} needs a value`);
      return args[++i];
    };
    if (a === '-s' || a === '-sS' || a === '--silent') continue;
    else if (a === '-X' || a === '--request') method = value();
    else if (a === '-H' || a === '--header') {
      const h = value();
      const colon = h.indexOf(':');
      if (colon < 1) throw new Error(`${where}: malformed header "${h}"`);
      headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
    } else if (a === '-d' || a === '--data' || a === '--data-raw' || a === '--data-binary') {
      body = value();
      if (a !== '--data-raw' && body.startsWith('@')) throw new Error(`${where}: bodies from files are not supported`);
    } else if (/^https?:\/\//.test(a) && url === null) url = a;
    else throw new Error(`${where}: unsupported curl argument "${a}"`);
  }
  if (url === null) throw new Error(`${where}: no http:// URL`);
  const u = new URL(url);
  return { method: method ?? (body === undefined ? 'GET' : 'POST'), path: u.pathname + u.search, headers, body };
}

// ----- the documented answer -----

/** A number of the documented answer with its literal, which says how many digits are printed. */
export class DocNumber {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
  /** Half a unit in the last printed decimal place; 0 for an integer literal. */
  get tolerance(): number {
    const m = /^-?\d+(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(this.text)!;
    const decimals = (m[1]?.length ?? 0) - Number(m[2] ?? 0);
    if (m[1] === undefined && m[2] === undefined) return 0;
    return 0.5 * 10 ** -decimals;
  }
}

/** JSON.parse that keeps each number's literal (as a DocNumber). */
export function parseDocJson(text: string, where = 'answer'): unknown {
  let i = 0;
  const fail = (what: string): never => {
    throw new Error(`${where}: ${what} at offset ${i}: "${text.slice(i, i + 20)}"`);
  };
  const space = () => {
    while (i < text.length && /\s/.test(text[i])) i++;
  };
  const value = (): unknown => {
    space();
    const c = text[i];
    if (c === '{') {
      const obj: Record<string, unknown> = {};
      i++;
      space();
      if (text[i] === '}') return (i++, obj);
      for (;;) {
        space();
        if (text[i] !== '"') fail('expected a key');
        const key = string();
        space();
        if (text[i++] !== ':') fail('expected ":"');
        obj[key] = value();
        space();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return (i++, obj);
        else fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      const arr: unknown[] = [];
      i++;
      space();
      if (text[i] === ']') return (i++, arr);
      for (;;) {
        arr.push(value());
        space();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return (i++, arr);
        else fail('expected "," or "]"');
      }
    }
    if (c === '"') return string();
    const lit = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i));
    if (!lit) return fail('unexpected text');
    i += lit[0].length;
    if (lit[0] === 'true') return true;
    if (lit[0] === 'false') return false;
    if (lit[0] === 'null') return null;
    return new DocNumber(Number(lit[0]), lit[0]);
  };
  const string = (): string => {
    const m = /^"(?:[^"\\\n]|\\.)*"/.exec(text.slice(i));
    if (!m) return fail('malformed string');
    i += m[0].length;
    return JSON.parse(m[0]) as string;
  };
  const out = value();
  space();
  if (i !== text.length) fail('text after the value');
  return out;
}

export const ANY = '...';

/** Where the actual answer differs from the documented one (empty when it matches), as "path: why". */
export function mismatches(doc: unknown, actual: unknown, path = '$'): string[] {
  if (doc === ANY) return [];
  const show = (v: unknown) => JSON.stringify(v)?.slice(0, 80);
  if (doc instanceof DocNumber) {
    if (typeof actual !== 'number') return [`${path}: documented ${doc.text}, got ${show(actual)}`];
    const ok = doc.tolerance === 0 ? actual === doc.value : Math.abs(actual - doc.value) <= doc.tolerance * (1 + 1e-9);
    return ok ? [] : [`${path}: documented ${doc.text}, got ${actual}`];
  }
  if (Array.isArray(doc)) {
    if (!Array.isArray(actual)) return [`${path}: documented an array, got ${show(actual)}`];
    const open = doc.length > 0 && doc[doc.length - 1] === ANY;
    const shown = open ? doc.slice(0, -1) : doc;
    if (open ? actual.length < shown.length : actual.length !== shown.length)
      return [`${path}: documented ${open ? 'at least ' : ''}${shown.length} elements, got ${actual.length}`];
    return shown.flatMap((d, k) => mismatches(d, actual[k], `${path}[${k}]`));
  }
  if (doc !== null && typeof doc === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual))
      return [`${path}: documented an object, got ${show(actual)}`];
    const d = doc as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const partial = d[ANY] === ANY;
    const out: string[] = [];
    for (const key of Object.keys(d)) {
      if (partial && key === ANY) continue;
      if (!Object.hasOwn(a, key)) out.push(`${path}.${key}: documented, missing from the answer`);
      else out.push(...mismatches(d[key], a[key], `${path}.${key}`));
    }
    if (!partial)
      for (const key of Object.keys(a))
        if (!Object.hasOwn(d, key)) out.push(`${path}.${key}: in the answer (${show(a[key])}), not documented`);
    return out;
  }
  return doc === actual ? [] : [`${path}: documented ${show(doc)}, got ${show(actual)}`];
}
