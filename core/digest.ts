/** Hex digests: artifact downloads (Worker and browser), the plagiarism corpus, idempotency keys. */
export const toHex = (buf: ArrayBuffer): string => {
  const b = new Uint8Array(buf);
  let s = '';
  for (let i = 0; i < b.length; i++) s += b[i].toString(16).padStart(2, '0');
  return s;
};

/** Hex SHA-256 of bytes, or of a string's UTF-8 bytes. */
export async function sha256Hex(data: string | BufferSource): Promise<string> {
  return toHex(await crypto.subtle.digest('SHA-256', typeof data === 'string' ? new TextEncoder().encode(data) : data));
}
