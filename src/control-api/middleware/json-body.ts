/**
 * @module The JSON request body, decoded strictly as UTF-8 (RFC 8259 section 8.1: JSON exchanged
 * between systems is UTF-8). koa-body decodes with replacement characters, which would accept
 * invalid bytes and store them altered; so it reads the body as latin1 (one character per byte,
 * lossless), and this middleware recovers the bytes, decodes them with a fatal decoder and parses.
 */
import type { Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { problems } from '../problem.js';
import type { ApiState } from '../api-state.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });
/**
 * An all-ASCII body reads the same in latin1 and UTF-8, so koa-body's parse already holds what
 * was sent and needs no second pass: large bodies, nearly always ASCII, cost no extra copies.
 */
const NON_ASCII = /[\u0080-\uffff]/;

/** `keepRaw`: leave the decoded text in `ctx.request.rawBody` (webhook signatures are over it). */
export function jsonBody(limit: number, keepRaw: boolean): Middleware<ApiState> {
  const parse = koaBody({
    json: true, jsonStrict: !keepRaw, includeUnparsed: true, encoding: 'latin1', jsonLimit: limit, text: false, urlencoded: false, multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
    // koa-body would answer errors itself; rethrow so the error handler writes problem+json.
    onError: (err) => { throw err; },
  });
  return async (ctx, next) => { await parse(ctx, async () => {
    const latin1 = (ctx.request as { rawBody?: unknown }).rawBody;
    if (typeof latin1 === 'string' && NON_ASCII.test(latin1)) {
      let text: string;
      try {
        text = strictUtf8.decode(Buffer.from(latin1, 'latin1'));
      } catch {
        throw problems.validation([{ path: '', message: 'the body is not valid UTF-8' }], 'The request body is not valid UTF-8.');
      }
      // Parsed once more from the decoded text, so strings hold the characters that were sent.
      (ctx.request as { body?: unknown }).body = text === '' ? {} : JSON.parse(text) as unknown;
      (ctx.request as { rawBody?: string }).rawBody = keepRaw ? text : undefined;
    } else if (!keepRaw) {
      (ctx.request as { rawBody?: string }).rawBody = undefined;
    }
    await next();
  }); };
}
