/**
 * docs/SECURITY.md over real HTTP on loopback: recordings are served by the format their bytes
 * hold, as attachments with `nosniff` (Serving recordings); unknown paths are logged without their
 * query and with credential shapes masked (Logs); numbers in a query string are decimal digits
 * only (docs/API.md, Query parameters).
 */
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { isoTime } from '../../src/common/time.js';
import { buildApp, type AppHarness } from '../support/build-app.js';
import { callRecord } from '../support/call-records.js';

/** The app on a loopback port, closed at teardown. */
async function listening(t: Test, h: AppHarness): Promise<string> {
  const callback = h.api.app.callback();
  const server = createServer((req, res) => { void callback(req, res); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function wav(): Buffer {
  const file = new wavefile.WaveFile();
  file.fromScratch(1, 8000, '8', [128, 140, 116, 128]);
  return Buffer.from(file.toBuffer());
}

/** A call whose provider recording was archived with the media type its download claimed. */
async function archivedRecording(h: AppHarness, tenantId: Parameters<typeof callRecord>[0], bytes: Buffer, claimed: string): Promise<string> {
  const call = callRecord(tenantId, isoTime(h.clock.now() - 60_000), { state: 'ended', ended_at: isoTime(h.clock.now() - 1_000), end_reason: 'completed' });
  await h.store.calls.insert(call);
  const path = join(tenantId, `${call.id}.provider.bin`);
  mkdirSync(join(h.dataDir, 'recordings', tenantId), { recursive: true });
  writeFileSync(join(h.dataDir, 'recordings', path), bytes);
  await h.store.recordings.save({
    call_id: call.id, tenant_id: tenantId, source: 'provider', path, media_type: claimed, bytes: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'), origin: 'download',
  });
  return call.id;
}

t.test('docs/SECURITY.md serving recordings: the type comes from the bytes, always an attachment with nosniff', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const base = await listening(t, h);
  const html = Buffer.from('<html><script>alert(document.cookie)</script></html>');
  const cases = [
    { name: 'HTML claimed text/html', bytes: html, claimed: 'text/html', type: 'application/octet-stream', ext: 'bin' },
    { name: 'HTML claimed audio/wav', bytes: html, claimed: 'audio/wav', type: 'application/octet-stream', ext: 'bin' },
    { name: 'a WAV claimed text/html', bytes: wav(), claimed: 'text/html', type: 'audio/wav', ext: 'wav' },
    { name: 'an MP3 with ID3 claimed application/octet-stream', bytes: Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000'), claimed: 'application/octet-stream', type: 'audio/mpeg', ext: 'mp3' },
  ];
  for (const c of cases) {
    const id = await archivedRecording(h, acme.tenant.id, c.bytes, c.claimed);
    const response = await fetch(`${base}/v1/calls/${id}/recording`, { headers: acme.auth });
    t.equal(response.status, 200, c.name);
    t.equal(response.headers.get('content-type'), c.type, `${c.name}: served as ${c.type}`);
    t.equal(response.headers.get('x-content-type-options'), 'nosniff', `${c.name}: nosniff`);
    t.equal(response.headers.get('content-disposition'), `attachment; filename="${id}.${c.ext}"`, `${c.name}: an attachment named after the call`);
    t.ok(Buffer.from(await response.arrayBuffer()).equals(c.bytes), `${c.name}: the bytes as archived`);
  }
});

t.test('docs/SECURITY.md logs: an unknown path is logged without its query and with credential shapes masked', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const base = await listening(t, h);
  const hexToken = 'a3f1c2d4e5b6a7980112233445566778';
  const session = 'Zk3_q-9rT2xW8yB4nM1pL6vC0sD5fG7hJ2kA3qE9uI0';
  const paths = [
    `/v1/${acme.apiKey}/calls?api_key=${acme.sandboxKey}`,
    `/v1/calls/${acme.sandboxKey.replace(/_/g, '%5F')}/x`,
    `/v2/tokens/${hexToken}/${session}`,
  ];
  for (const path of paths) {
    const response = await fetch(`${base}${path}`, { headers: acme.auth });
    t.equal(response.status, 404, path.slice(0, 20));
  }
  const lines = h.logLines.filter((l) => l.includes('"msg":"http"'));
  for (const secret of [acme.apiKey, acme.sandboxKey, acme.apiKey.slice(9), acme.sandboxKey.slice(9), hexToken, session, 'api_key']) {
    t.notOk(lines.some((l) => l.includes(secret)), `${secret.slice(0, 12)}… is not in the access log`);
  }
  t.ok(lines.some((l) => l.includes('"route":"/v1/[redacted]/calls"')), 'the path is logged with the key masked and no query');
  t.ok(lines.some((l) => l.includes('"route":"/v2/tokens/[redacted]/[redacted]"')));
  await fetch(`${base}/v1/calls/call_0mwrf1abcdefghijklmnopq`, { headers: acme.auth });
  t.ok(h.logLines.some((l) => l.includes('"route":"/v1/calls/{id}"')), 'a matched route is logged by its template');
});

t.test('docs/API.md query parameters: numbers are decimal digits only; 0x10, 1e1, " 5", +5 are 400 validation_failed', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const base = await listening(t, h);
  for (const path of ['/v1/calls', '/v1/agents', '/v1/numbers']) {
    for (const value of ['0x10', '1e1', '%205', '%2B5', '5%20', '0b1', '1.0', '-1', '']) {
      const response = await fetch(`${base}${path}?limit=${value}`, { headers: acme.auth });
      t.equal(response.status, 400, `${path}?limit=${value}`);
      const body = await response.json() as { code: string; errors: { path: string }[] };
      t.equal(body.code, 'validation_failed');
      t.same(body.errors.map((e) => e.path), ['/query/limit'], 'names the parameter');
    }
    t.equal((await fetch(`${base}${path}?limit=1&limit=2`, { headers: acme.auth })).status, 400, `${path}: limit given twice`);
    const fine = await fetch(`${base}${path}?limit=16`, { headers: acme.auth });
    t.equal(fine.status, 200, `${path}?limit=16 is read as sixteen`);
  }
});
