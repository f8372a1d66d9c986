/**
 * A raw HTTP/1.1 client over one TCP connection (node:net), for what fetch hides: several requests
 * on one keep-alive socket, malformed framing, stalled or aborted bodies, and how the server ends the
 * connection (FIN after an answer, ECONNRESET, or still open).
 */
import net from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
}

export class RawConnection {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  /** The socket's error (ECONNRESET, EPIPE...), if any. */
  error: NodeJS.ErrnoException | null = null;
  /** The server sent FIN. */
  ended = false;
  closed = false;

  private constructor(readonly socket: net.Socket) {
    const wake = (): void => {
      for (const w of this.waiters.splice(0)) w();
    };
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      wake();
    });
    socket.on('end', () => {
      this.ended = true;
      wake();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      this.error ??= e;
      wake();
    });
    socket.on('close', () => {
      this.closed = true;
      wake();
    });
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, host);
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  /** Writes and waits until the bytes are handed to the kernel; a failed write leaves `error` set. */
  write(data: string | Buffer): Promise<void> {
    if (this.closed || this.socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => this.socket.write(data, () => resolve()));
  }

  /** What the connection's end looks like so far: 'open', 'FIN' or the socket's error code. */
  get state(): string {
    if (this.error) return this.error.code ?? this.error.message;
    if (this.ended || this.closed) return 'FIN';
    return 'open';
  }

  /**
   * The next complete response on the connection (Content-Length or chunked). Throws when the
   * connection ends first (naming how it ended and what arrived), or after `waitMs` without one.
   */
  async response(waitMs = 60_000): Promise<RawResponse> {
    const until = Date.now() + waitMs;
    for (;;) {
      const parsed = parseResponse(this.buf);
      if (parsed) {
        this.buf = this.buf.subarray(parsed.length);
        return parsed.response;
      }
      if (this.error || this.ended || this.closed) {
        throw new Error(
          `connection ended (${this.state}) before a complete response; received: ${JSON.stringify(this.buf.toString('latin1').slice(0, 300))}`,
        );
      }
      const left = until - Date.now();
      if (left <= 0) {
        throw new Error(
          `no complete response within ${waitMs} ms; received: ${JSON.stringify(this.buf.toString('latin1').slice(0, 300))}`,
        );
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Resolves once the server has ended the connection (FIN or error), or after `waitMs`; returns `state`. */
  async end(waitMs = 10_000): Promise<string> {
    const until = Date.now() + waitMs;
    while (!(this.error || this.ended || this.closed) && Date.now() < until) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, until - Date.now());
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.state;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function parseResponse(buf: Buffer): { response: RawResponse; length: number } | null {
  const headEnd = buf.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const lines = buf.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    const name = line.slice(0, i).trim().toLowerCase();
    const value = line.slice(i + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let at = headEnd + 4;
  let body: Buffer;
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    for (;;) {
      const lineEnd = buf.indexOf('\r\n', at);
      if (lineEnd < 0) return null;
      const size = parseInt(buf.subarray(at, lineEnd).toString('latin1'), 16);
      if (buf.length < lineEnd + 2 + size + 2) return null;
      parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      at = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
    body = Buffer.concat(parts);
  } else {
    const length = Number(headers['content-length'] ?? 0);
    if (buf.length < at + length) return null;
    body = buf.subarray(at, at + length);
    at += length;
  }
  return { response: { status, headers, body, text: body.toString('utf8') }, length: at };
}
