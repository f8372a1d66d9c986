/**
 * HTML -> { title, visible text } for corpus ingestion, with the Workers HTMLRewriter
 * (streaming, no DOM). Script, style, template and similar content is dropped; block-level
 * elements become line breaks so words of adjacent blocks never run together; character
 * references are decoded.
 */
import { decodeHTML } from 'entities';

const HIDDEN = 'script, style, noscript, template, svg, math, iframe, object, canvas, textarea, select';
const BLOCKS =
  'address, article, aside, blockquote, br, dd, div, dl, dt, fieldset, figcaption, figure, footer, form, ' +
  'h1, h2, h3, h4, h5, h6, header, hr, li, main, nav, ol, option, p, pre, section, table, tbody, td, tfoot, th, thead, tr, ul';

export interface ExtractedHtml {
  title: string;
  text: string;
}

const VOID = new Set(['br', 'hr', 'img', 'input', 'meta', 'link', 'area', 'base', 'col', 'embed', 'source', 'track', 'wbr']);

/** Whether an end tag will follow (void and self-closing elements have none). */
function hasEndTag(el: Element): boolean {
  const flags = el as Element & { selfClosing?: boolean; canHaveContent?: boolean };
  if (flags.selfClosing === true || flags.canHaveContent === false) return false;
  return !VOID.has(el.tagName.toLowerCase());
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
  let titleRaw = '';
  let titleSeen = false;
  let inTitle = false;
  let hidden = 0;

  const rewriter = new HTMLRewriter()
    .on(HIDDEN, {
      element(el) {
        if (!hasEndTag(el)) return;
        hidden++;
        el.onEndTag(() => {
          hidden--;
        });
      },
    })
    .on('title', {
      element(el) {
        if (titleSeen || hidden > 0) return;
        titleSeen = true;
        inTitle = true;
        el.onEndTag(() => {
          inTitle = false;
        });
      },
    })
    .on(BLOCKS, {
      element(el) {
        parts.push('\n');
        if (hasEndTag(el)) {
          el.onEndTag(() => {
            parts.push('\n');
          });
        }
      },
    })
    .onDocument({
      text(chunk) {
        if (inTitle) titleRaw += chunk.text;
        else if (hidden === 0) parts.push(chunk.text);
      },
    });

  await rewriter.transform(new Response(html, { headers: { 'content-type': 'text/html; charset=utf-8' } })).arrayBuffer();
  return {
    title: decodeHTML(titleRaw).replace(/\s+/gu, ' ').trim(),
    text: tidy(decodeHTML(parts.join(''))),
  };
}
