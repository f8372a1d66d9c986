/**
 * Conditional GET helpers shared by the routes that answer 304 (artifact downloads, playground).
 */

/**
 * The entity tags of an If-None-Match value, in order: each as its opaque-tag (the quoted
 * string, W/ dropped), or '*'. Commas inside a quoted tag belong to the tag (RFC 9110 etagc
 * allows them); a member that is not an entity tag is skipped up to the next comma.
 */
function entityTags(value: string): string[] {
  const tags: string[] = [];
  const n = value.length;
  let i = 0;
  while (i < n) {
    while (i < n && (value[i] === ',' || value[i] === ' ' || value[i] === '\t')) i++;
    if (i >= n) break;
    let tag: string | null = null;
    if (value[i] === '*') {
      tag = '*';
      i++;
    } else {
      const open = value.startsWith('W/', i) ? i + 2 : i;
      const close = value[open] === '"' ? value.indexOf('"', open + 1) : -1;
      if (close !== -1) {
        tag = value.slice(open, close + 1);
        i = close + 1;
      }
    }
    // The member ends at the next comma; anything else before it makes the member invalid.
    const comma = value.indexOf(',', i);
    const end = comma === -1 ? n : comma;
    if (tag !== null && value.slice(i, end).trim() === '') tags.push(tag);
    i = end + 1;
  }
  return tags;
}

/** The opaque-tag of an ETag value (`"x"` or `W/"x"`; a bare value is quoted). */
function opaqueTag(etag: string): string {
  const t = etag.trim().replace(/^W\//, '');
  return t.startsWith('"') ? t : `"${t}"`;
}

/**
 * If-None-Match with RFC 9110 weak comparison (sections 13.1.2 and 8.8.3.2): true when the
 * header is `*` (callers only call this for a representation that exists) or lists an entity
 * tag whose opaque-tag equals the current one, the W/ prefix ignored on both sides.
 * A caller that gets true answers 304 Not Modified to a GET or HEAD.
 */
export function etagMatches(header: string | null | undefined, etag: string): boolean {
  if (!header) return false;
  const current = opaqueTag(etag);
  return entityTags(header).some((t) => t === '*' || t === current);
}
