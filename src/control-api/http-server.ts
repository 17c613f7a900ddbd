/**
 * @module The control API's HTTP server. Requests Node rejects before Koa sees them (a header
 * section over the limit: 431; bytes that are not HTTP: 400) still get problem+json with a
 * request id (docs/API.md, "Errors"), not Node's bare status line.
 */
import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { PROBLEM_CONTENT_TYPE } from './problem.js';

function clientErrorResponse(err: Error & { code?: string }): string {
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const status = tooLarge ? 431 : 400;
  const requestId = randomUUID();
  const body = JSON.stringify({
    type: 'about:blank', title: STATUS_CODES[status], status,
    code: tooLarge ? 'headers_too_large' : 'bad_request',
    detail: tooLarge ? 'The request line and headers are too large.' : 'The request is not valid HTTP.',
    request_id: requestId,
  });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`, `Content-Type: ${PROBLEM_CONTENT_TYPE}`, `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`, 'Connection: close', '', body,
  ].join('\r\n');
}

export function createApiServer(handle: (req: IncomingMessage, res: ServerResponse) => void): Server {
  const server = createServer(handle);
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // A reset or timed-out socket has no one left to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) { socket.destroy(); return; }
    socket.end(clientErrorResponse(err));
  });
  return server;
}
