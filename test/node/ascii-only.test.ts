/**
 * build/ascii-only.ts: the browser bundles are escaped to pure ASCII after minification; the
 * escaped code must mean exactly the same. Checked on small cases (strings, templates, regular
 * expressions with and without the u flag, astral characters, identity escapes) and on the real
 * tokenizer (core/tokenizer, whose regexes and tables carry most of the bundle's non-ASCII),
 * bundled and minified by esbuild like the worker, escaped, and run against the original.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import { escapeNonAscii } from '../../build/ascii-only';
import { ensureLanguageData, languageFile } from '../../build/lang-data';
import { parseLanguageData, SUPPORTED_LANGUAGES, type Language } from '../../core/tokenizer/index';

const isAscii = (s: string): boolean => [...s].every((c) => c.charCodeAt(0) < 0x80);

describe('escapeNonAscii', () => {
  const cases: Array<[string, unknown]> = [
    ['"Straße œuvre l’été"', 'Straße œuvre l’été'],
    ['`zwölf ${1 + 1} ß`', 'zwölf 2 ß'],
    ['/[ßæœøđłı]/.test("xø")', true],
    ['/[ぁ-ん]/.test("の") && !/[ぁ-ん]/.test("ア")', true],
    ['/^[a-zA-Zａ-ｚＡ-Ｚ]+$/u.test("ａｂＣ")', true],
    ['"x😀y".replace(/😀/u, "-")', 'x-y'],
    ['"x😀y".replace(/😀/, "-")', 'x-y'],
    ['[..."a😀b".matchAll(/./gu)].length', 3],
    ['/\\ß/.test("ß")', true],
    ['"\\ß"', 'ß'],
    ['"\\\\ß"', '\\ß'],
    ['/[\\ä-\\ü]/.test("ö")', true],
    ['"«»„“”".length', 5],
    ['/* Zwölf */ "ok"', 'ok'],
  ];
  for (const [code, expected] of cases)
    it(`keeps the meaning of ${code}`, () => {
      const escaped = escapeNonAscii(code);
      expect(isAscii(escaped)).toBe(true);
      expect(new Function(`return (${escaped});`)()).toEqual(expected);
      expect(new Function(`return (${code});`)()).toEqual(expected);
    });

  it('leaves ASCII code unchanged', () => {
    const code = 'const a = /[a-z]\\u00e9/u, b = "\\\\u00e9";';
    expect(escapeNonAscii(code)).toBe(code);
  });
});

describe('the tokenizer, minified and escaped like the worker bundle', () => {
  let dir: string;
  beforeAll(async () => {
    await ensureLanguageData();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ascii-only-'));
  });

  it('tokenizes every language exactly as the original', async () => {
    const out = await build({
      entryPoints: [path.resolve('core/tokenizer/index.ts')],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'neutral',
      charset: 'utf8',
      write: false,
    });
    const minified = out.outputFiles[0]!.text;
    expect(isAscii(minified)).toBe(false);
    const escaped = escapeNonAscii(minified);
    expect(isAscii(escaped)).toBe(true);
    const files = { minified, escaped };
    const mods: Record<string, typeof import('../../core/tokenizer/index')> = {};
    for (const [name, code] of Object.entries(files)) {
      const file = path.join(dir, `${name}.mjs`);
      fs.writeFileSync(file, code);
      mods[name] = (await import(pathToFileURL(file).href)) as typeof import('../../core/tokenizer/index');
    }
    const texts: Record<Language, string> = {
      en: "The café's naïve owner won't sell 12 croissants — “really”? Isn't it wonderful… rock'n'roll, 1,000 €.",
      de: 'Die Straße war größer und schöner, höher als die Häuser; zwölf Öfen, Äpfel und Übermut. „Gern“ – sagte er.',
      fr: "L'été dernier, l’œuvre était très belle : « où ça ? » dit-il, déçu. Cœur, garçon, naïveté… 1 000 €.",
      ja: '東京で二十三日にカタカナとひらがなを学びました。ｱｲｳｴｵは半角です！ 価格は１２３４円、「本当？」',
    };
    expect(SUPPORTED_LANGUAGES.length).toBeGreaterThan(0);
    for (const l of SUPPORTED_LANGUAGES) {
      const bytes = fs.readFileSync(languageFile(l));
      const text = texts[l] ?? texts.en;
      const original = mods.minified!.tokenize(text, mods.minified!.parseLanguageData(bytes));
      const viaEscaped = mods.escaped!.tokenize(text, mods.escaped!.parseLanguageData(bytes));
      expect(viaEscaped).toEqual(original);
      // And both equal the source's own tokenizer.
      expect(original.tokens.map((t) => t.token)).toEqual(
        (await import('../../core/tokenizer/index'))
          .tokenize(text, parseLanguageData(bytes))
          .tokens.map((t) => t.token),
      );
      expect(original.tokens.length).toBeGreaterThan(5);
    }
  });
});
