/**
 * HTML -> { title, visible text } for corpus ingestion, with the tokenizer of htmlparser2
 * (a streaming state machine: linear in the input, no tree and no stack of open elements, so
 * deeply nested or unclosed markup such as '<div>' x 50,000 costs the same as flat text).
 * Script, style, template and similar content is dropped; block-level elements become line
 * breaks so words of adjacent blocks never run together; character references are decoded by
 * the tokenizer (also in the raw-text title). The title is capped like an explicit one.
 */
import { Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
import { LIMITS } from '../../core/limits';

/** Most characters of a page title (the ingestion schema's limit for an explicit title). */
const TITLE_MAX_CHARS = LIMITS.plagiarismTitleCharacters;

const HIDDEN = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'math',
  'iframe',
  'object',
  'canvas',
  'textarea',
  'select',
]);
const BLOCKS = new Set(
  (
    'address article aside blockquote br dd div dl dt fieldset figcaption figure footer form ' +
    'h1 h2 h3 h4 h5 h6 header hr li main nav ol option p pre section table tbody td tfoot th thead tr ul'
  ).split(' '),
);
const VOID = new Set([
  'br',
  'hr',
  'img',
  'input',
  'meta',
  'link',
  'area',
  'base',
  'col',
  'embed',
  'source',
  'track',
  'wbr',
]);

export interface ExtractedHtml {
  title: string;
  text: string;
}

function tidy(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[^\S\n]+/gu, ' ').trim())
    .filter((line, i, lines) => line !== '' || (i > 0 && lines[i - 1] !== ''))
    .join('\n')
    .trim();
}

export async function extractHtml(html: string): Promise<ExtractedHtml> {
  const parts: string[] = [];
  let title = '';
  let titleSeen = false;
  let inTitle = false;
  // Open hidden elements per name (a counter each, not a stack: unbalanced markup stays O(1) per tag).
  const hiddenOpen = new Map<string, number>();
  let hidden = 0;
  let tag = '';

  const open = (selfClosing: boolean) => {
    if (HIDDEN.has(tag) && !selfClosing) {
      hiddenOpen.set(tag, (hiddenOpen.get(tag) ?? 0) + 1);
      hidden++;
    }
    if (tag === 'title' && !selfClosing && !titleSeen && hidden === 0) {
      titleSeen = true;
      inTitle = true;
    }
    if (BLOCKS.has(tag)) parts.push('\n');
  };
  const close = (name: string) => {
    const n = hiddenOpen.get(name);
    if (n) {
      hiddenOpen.set(name, n - 1);
      hidden--;
    }
    if (name === 'title') inTitle = false;
    if (BLOCKS.has(name) && !VOID.has(name)) parts.push('\n');
  };
  const text = (t: string) => {
    if (inTitle) {
      // Only what can survive the cap is kept (white space collapses, so allow some slack).
      if (title.length < 4 * TITLE_MAX_CHARS) title += t;
    } else if (hidden === 0) parts.push(t);
  };
  const noop = () => {};
  const callbacks: TokenizerCallbacks = {
    onopentagname: (s, e) => {
      tag = html.slice(s, e).toLowerCase();
    },
    onopentagend: () => open(VOID.has(tag)),
    onselfclosingtag: () => open(true),
    onclosetag: (s, e) => close(html.slice(s, e).toLowerCase()),
    ontext: (s, e) => text(html.slice(s, e)),
    // Code points that are not Unicode scalar values become U+FFFD (stored text stays well-formed).
    ontextentity: (cp) => text(cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ? '\ufffd' : String.fromCodePoint(cp)),
    onattribdata: noop,
    onattribentity: noop,
    onattribend: noop,
    onattribname: noop,
    oncdata: noop,
    oncomment: noop,
    ondeclaration: noop,
    onend: noop,
    onprocessinginstruction: noop,
  };
  const tokenizer = new Tokenizer({ decodeEntities: true }, callbacks);
  tokenizer.write(html);
  tokenizer.end();
  return {
    title: title.replace(/\s+/gu, ' ').trim().slice(0, TITLE_MAX_CHARS),
    text: tidy(parts.join('')),
  };
}
