/** @module The error handler's mapping of body-decoding and storage failures (docs/API.md, Errors). */
import t from 'tap';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { buildApp } from '../../../test/support/build-app.js';
import { STORAGE_RETRY_AFTER_S } from './error-handler.js';

t.test('docs/API.md "Errors": a body whose brotli encoding is corrupt is a 400 validation_failed, never a 500', async (t) => {
  const h = await buildApp(t);
  const headers = { 'content-type': 'application/json', 'content-encoding': 'br' };
  const corrupt = await h.request({ method: 'POST', url: '/v1/auth/login', headers, payload: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef]) });
  t.equal(corrupt.statusCode, 400);
  t.equal(corrupt.headers['content-type'], 'application/problem+json');
  t.match(JSON.parse(corrupt.body), { status: 400, code: 'validation_failed', detail: 'The request body could not be decompressed.' });
  t.notOk(h.logLines.some((l) => l.includes('unhandled error')), 'not logged as a bug');
  const wellFormed = await h.request({ method: 'POST', url: '/v1/auth/login', headers, payload: brotliCompressSync(JSON.stringify({ api_key: 'vgw_live_unknown' })) });
  t.equal(wellFormed.statusCode, 401, 'a well-formed brotli body is decoded and reaches the handler');
});

t.test('docs/RELIABILITY.md, storage failures: a write refused by a locked database is 503 `unavailable` with Retry-After, never a 500, and the retry works', async (t) => {
  const dbFile = join(t.testdir({}), 'gateway.db');
  const h = await buildApp(t, { dbFile });
  const { apiKey } = await h.createTenant();
  const other = new Database(dbFile);
  t.teardown(() => other.close());
  other.exec('BEGIN EXCLUSIVE');
  // Logging in writes a session row.
  const refused = await h.request({ method: 'POST', url: '/v1/auth/login', payload: { api_key: apiKey } });
  t.equal(refused.statusCode, 503);
  t.equal(refused.headers['content-type'], 'application/problem+json');
  t.equal(refused.headers['retry-after'], String(STORAGE_RETRY_AFTER_S));
  t.match(JSON.parse(refused.body), { status: 503, code: 'unavailable' });
  t.notMatch(refused.body, /SQLITE|locked/i, 'no internals in the body');
  t.notOk(h.logLines.some((l) => l.includes('unhandled error')), 'not logged as a bug');
  other.exec('COMMIT');
  const retried = await h.request({ method: 'POST', url: '/v1/auth/login', payload: { api_key: apiKey } });
  t.equal(retried.statusCode, 204, 'the same request succeeds once the lock is gone');
});
