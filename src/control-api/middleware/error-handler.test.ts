/** @module The error handler's mapping of body-decoding failures (contract section 2). */
import t from 'tap';
import { brotliCompressSync } from 'node:zlib';
import { buildApp } from '../../../test/support/build-app.js';

t.test('contract 2: a body whose brotli encoding is corrupt is a 400 validation_failed, never a 500', async (t) => {
  const h = buildApp(t);
  const headers = { 'content-type': 'application/json', 'content-encoding': 'br' };
  const corrupt = await h.request({ method: 'POST', url: '/v1/auth/login', headers, payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef]) });
  t.equal(corrupt.statusCode, 400);
  t.equal(corrupt.headers['content-type'], 'application/problem+json');
  t.match(JSON.parse(corrupt.body), { status: 400, code: 'validation_failed', detail: 'The request body could not be decompressed.' });
  t.notOk(h.logLines.some((l) => l.includes('unhandled error')), 'not logged as a bug');
  const wellFormed = await h.request({ method: 'POST', url: '/v1/auth/login', headers, payload: brotliCompressSync(JSON.stringify({ api_key: 'vgw_live_unknown' })) });
  t.equal(wellFormed.statusCode, 401, 'a well-formed brotli body is decoded and reaches the handler');
});
