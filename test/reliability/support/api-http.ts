/**
 * @module Raw HTTP/1.1 requests to the API over a keep-alive connection pool: exact bytes, any
 * header, any method, so hostile inputs reach the server as written (fetch would refuse some).
 */
import { Agent, request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';

export interface HttpRequest {
  method: string;
  /** Path and query, already encoded as they go on the wire. */
  path: string;
  headers?: OutgoingHttpHeaders;
  body?: string | Buffer;
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

const agent = new Agent({ keepAlive: true, maxSockets: 8 });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * One request; resolves with the whole answer, rejects only when the connection itself fails.
 * An event stream (`text/event-stream`) never ends: it resolves with its first chunk, and the
 * connection is closed.
 */
export function send(base: string, r: HttpRequest): Promise<HttpAnswer> {
  const url = new URL(base);
  const body = r.body === undefined ? undefined : Buffer.isBuffer(r.body) ? r.body : Buffer.from(r.body, 'utf8');
  const headers: OutgoingHttpHeaders = { ...r.headers };
  if (body !== undefined && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined) headers['content-length'] = body.length;
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method: r.method, path: r.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      const streaming = String(res.headers['content-type'] ?? '').startsWith('text/event-stream');
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (!streaming) return;
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: undefined });
        req.destroy();
      });
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parseJson(text) });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
