/**
 * Pure-ASCII JavaScript output for the browser bundles (browser/vite.config.ts): V8 keeps a script
 * with a single non-ASCII character as a two-byte string, slower to decode and to parse before the
 * Web Worker's first line runs (docs/offline-browser.md). esbuild's `charset: 'ascii'` escapes
 * strings and identifiers but not regular expression literals; this escapes what is left.
 */
import type { Plugin } from 'vite';

/**
 * `\uXXXX` for every non-ASCII UTF-16 unit of `code`: the same meaning in strings, template
 * literals, regular expressions (a surrogate pair's two escapes are one code point with the u
 * flag), identifiers and comments; an escaped one (`\ß`, an identity escape) becomes the escape alone.
 */
export function escapeNonAscii(code: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i < code.length; i++) {
    const c = code.charCodeAt(i);
    if (c < 0x80) continue;
    let backslashes = 0;
    while (i - backslashes - 1 >= last && code.charCodeAt(i - backslashes - 1) === 92) backslashes++;
    out += code.slice(last, backslashes % 2 === 1 ? i - 1 : i) + '\\u' + c.toString(16).padStart(4, '0');
    last = i + 1;
  }
  return out + code.slice(last);
}

/** Escapes the non-ASCII characters left in every chunk (after minification). */
export function asciiOnly(): Plugin {
  return {
    name: 'ascii-only',
    enforce: 'post',
    generateBundle(_options, bundle) {
      for (const chunk of Object.values(bundle)) if (chunk.type === 'chunk') chunk.code = escapeNonAscii(chunk.code);
    },
  };
}
