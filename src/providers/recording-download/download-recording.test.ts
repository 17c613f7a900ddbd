import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { FakeClock } from '../../common/clock.js';
import { startHttpsFixture, type HttpsFixture } from '../../../test/support/https-fixture.js';
import type { ResolvedAddress } from '../../common/outbound-policy.js';
import { downloadRecording, type DownloadOptions } from './download-recording.js';

const AUDIO = Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 37) & 255));
/** Names the fake DNS answers, as a provider's storage might be resolved (or poisoned). */
const DNS: Record<string, ResolvedAddress[]> = {
  'media.recordings.test': [{ address: '127.0.0.1', family: 4 }],
  'cdn.recordings.test': [{ address: '127.0.0.1', family: 4 }],
  'loop.recordings.test': [{ address: '127.0.0.1', family: 4 }],
  'meta.recordings.test': [{ address: '169.254.169.254', family: 4 }],
  'private.recordings.test': [{ address: '10.1.2.3', family: 4 }],
  'mapped.recordings.test': [{ address: '::ffff:10.0.0.1', family: 6 }],
  'mixed.recordings.test': [{ address: '8.8.8.8', family: 4 }, { address: '10.0.0.1', family: 4 }],
  'media.other.test': [{ address: '127.0.0.1', family: 4 }],
};
/** The test server stands in for the provider: these names may reach it on 127.0.0.1, nothing else. */
const STAND_INS = new Set(['media.recordings.test', 'cdn.recordings.test', 'media.other.test']);

interface Harness {
  fx: HttpsFixture;
  lookups: string[];
  clock: FakeClock;
  slowStarted: Promise<void>;
  options(over?: Partial<DownloadOptions>): DownloadOptions;
}

function route(res: ServerResponse, path: string, onSlow: () => void): void {
  const url = new URL(path, 'https://x');
  if (url.pathname === '/ok') {
    res.writeHead(200, { 'content-type': 'audio/wav; codecs=1', 'content-length': AUDIO.length }).end(AUDIO);
  } else if (url.pathname === '/redirect') {
    res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '' }).end();
  } else if (url.pathname === '/loop') {
    res.writeHead(302, { location: '/loop' }).end();
  } else if (url.pathname === '/big') {
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    const chunk = Buffer.alloc(16 * 1024, 1);
    for (let i = 0; i < 64; i++) res.write(chunk);
    res.end();
  } else if (url.pathname === '/big-declared') {
    res.writeHead(200, { 'content-length': 500 * 1024 * 1024 });
    res.write('x');
  } else if (url.pathname === '/slow') {
    res.writeHead(200, { 'content-length': 1000 });
    res.write(Buffer.alloc(10));
    onSlow();
  } else {
    res.writeHead(404).end();
  }
}

async function harness(t: Test): Promise<Harness> {
  const lookups: string[] = [];
  let onSlow = (): void => undefined;
  const slowStarted = new Promise<void>((resolve) => { onSlow = resolve; });
  const fx = await startHttpsFixture(t, (req, res) => route(res, req.url ?? '/', onSlow));
  const clock = new FakeClock();
  const options = (over: Partial<DownloadOptions> = {}): DownloadOptions => ({
    allowedHosts: ['*.recordings.test', 'media.other.test', '127.0.0.1', '169.254.169.254', '::ffff:a00:1'],
    maxBytes: 64 * 1024,
    timeoutMs: 10_000,
    maxRedirects: 3,
    clock,
    ca: fx.ca,
    resolver: (host) => {
      lookups.push(host);
      const answer = DNS[host];
      return answer ? Promise.resolve(answer) : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    },
    unsafeAllowAddressForTests: (host, address) => STAND_INS.has(host) && address === '127.0.0.1',
    ...over,
  });
  return { fx, lookups, clock, slowStarted, options };
}

t.test('docs/WEBHOOKS.md "Post-call webhooks": an allow-listed HTTPS recording is downloaded with its checksum, the name resolved once', async (t) => {
  const h = await harness(t);
  const r = await downloadRecording(h.fx.url('/ok'), h.options());
  if (!r.ok) return t.fail(`${r.reason}: ${r.detail}`);
  t.ok(r.bytes.equals(AUDIO));
  t.equal(r.sha256, createHash('sha256').update(AUDIO).digest('hex'));
  t.equal(r.mediaType, 'audio/wav');
  t.same(h.lookups, ['media.recordings.test'], 'one resolution; the connection used its answer');
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": a redirect to another allowed host is resolved and checked again', async (t) => {
  const h = await harness(t);
  const r = await downloadRecording(h.fx.url(`/redirect?to=${encodeURIComponent(h.fx.url('/ok', 'cdn.recordings.test'))}`), h.options());
  t.equal(r.ok, true);
  t.same(h.lookups, ['media.recordings.test', 'cdn.recordings.test']);
  if (r.ok) t.equal(r.finalUrl, h.fx.url('/ok', 'cdn.recordings.test'));
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": redirects to loopback, metadata, private and IPv4-mapped addresses are refused', async (t) => {
  const h = await harness(t);
  const targets = [
    `https://127.0.0.1:${h.fx.port}/ok`,
    h.fx.url('/ok', 'loop.recordings.test'),
    'https://169.254.169.254/latest/meta-data/',
    h.fx.url('/ok', 'meta.recordings.test'),
    h.fx.url('/ok', 'private.recordings.test'),
    h.fx.url('/ok', 'mapped.recordings.test'),
    'https://[::ffff:10.0.0.1]/ok',
  ];
  for (const to of targets) {
    const before = h.fx.requests.length;
    const r = await downloadRecording(h.fx.url(`/redirect?to=${encodeURIComponent(to)}`), h.options());
    t.same(r.ok ? 'downloaded' : r.reason, 'address_refused', to);
    t.equal(h.fx.requests.length, before + 1, `${to}: only the redirecting request reached a server`);
  }
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": URLs naming refused addresses directly are refused before any connection', async (t) => {
  const h = await harness(t);
  for (const url of ['https://127.0.0.1/x', 'https://169.254.169.254/x', h.fx.url('/ok', 'private.recordings.test'), 'https://[::ffff:10.0.0.1]/x', h.fx.url('/ok', 'mapped.recordings.test')]) {
    const r = await downloadRecording(url, h.options());
    t.same(r.ok ? 'downloaded' : r.reason, 'address_refused', url);
  }
  t.equal(h.fx.requests.length, 0);
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": a DNS answer mixing a public and a private address is refused', async (t) => {
  const h = await harness(t);
  const r = await downloadRecording(h.fx.url('/ok', 'mixed.recordings.test'), h.options());
  t.same(r, { ok: false, reason: 'address_refused', detail: '10.0.0.1' });
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": hosts off the allow-list and non-HTTPS schemes are refused, directly and by redirect', async (t) => {
  const h = await harness(t);
  const cases: [string, string][] = [
    [`https://evil.example:${h.fx.port}/ok`, 'host_not_allowed'],
    [h.fx.url('/ok', 'recordings.test'), 'host_not_allowed'],
    [h.fx.url('/ok').replace('https:', 'http:'), 'not_https'],
    ['ftp://media.recordings.test/ok', 'not_https'],
    [h.fx.url('/redirect?to=' + encodeURIComponent(`https://evil.example:${h.fx.port}/ok`)), 'host_not_allowed'],
    [h.fx.url('/redirect?to=' + encodeURIComponent(`http://media.recordings.test:${h.fx.port}/ok`)), 'not_https'],
    [`https://user:pw@media.recordings.test:${h.fx.port}/ok`, 'bad_url'],
    ['not a url', 'bad_url'],
  ];
  for (const [url, reason] of cases) {
    const r = await downloadRecording(url, h.options());
    t.same(r.ok ? 'downloaded' : r.reason, reason, url);
  }
  t.notOk(h.lookups.includes('evil.example'), 'an off-list name is never even resolved');
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": bodies over the byte cap are aborted, streamed or declared', async (t) => {
  const h = await harness(t);
  const streamed = await downloadRecording(h.fx.url('/big'), h.options());
  t.same(streamed.ok ? 'downloaded' : streamed.reason, 'too_large');
  const declared = await downloadRecording(h.fx.url('/big-declared'), h.options());
  t.same(declared.ok ? 'downloaded' : declared.reason, 'too_large');
  const fits = await downloadRecording(h.fx.url('/big'), h.options({ maxBytes: 1024 * 1024 }));
  t.equal(fits.ok && fits.bytes.length, 1024 * 1024);
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": a body that stalls is aborted at the overall time cap', async (t) => {
  const h = await harness(t);
  const pending = downloadRecording(h.fx.url('/slow'), h.options({ timeoutMs: 5_000 }));
  await h.slowStarted;
  h.clock.advance(5_000);
  const r = await pending;
  t.same(r.ok ? 'downloaded' : r.reason, 'timeout');
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": a resolver that never answers is cut off by the time cap', async (t) => {
  const h = await harness(t);
  const pending = downloadRecording(h.fx.url('/ok'), h.options({ resolver: () => new Promise(() => undefined) }));
  h.clock.advance(10_000);
  const r = await pending;
  t.same(r.ok ? 'downloaded' : r.reason, 'timeout');
});

t.test('redirect count is bounded', async (t) => {
  const h = await harness(t);
  const r = await downloadRecording(h.fx.url('/loop'), h.options({ maxRedirects: 2 }));
  t.same(r.ok ? 'downloaded' : r.reason, 'too_many_redirects');
  t.equal(h.fx.requests.length, 3);
});

t.test('TLS still checks the certificate against the URL host, and the trust anchors', async (t) => {
  const h = await harness(t);
  const wrongName = await downloadRecording(h.fx.url('/ok', 'media.other.test'), h.options());
  t.same(wrongName.ok ? 'downloaded' : wrongName.reason, 'tls_error', 'certificate not issued for media.other.test');
  const untrusted = await downloadRecording(h.fx.url('/ok'), h.options({ ca: undefined }));
  t.same(untrusted.ok ? 'downloaded' : untrusted.reason, 'tls_error', 'test CA not trusted without ca');
});

t.test('HTTP errors and DNS failures are values', async (t) => {
  const h = await harness(t);
  t.same(await downloadRecording(h.fx.url('/missing'), h.options()), { ok: false, reason: 'http_status', detail: '404' });
  t.same(await downloadRecording(h.fx.url('/ok', 'nxdomain.recordings.test'), h.options()), { ok: false, reason: 'dns_failed', detail: 'ENOTFOUND' });
  const noLocation = await downloadRecording(h.fx.url('/redirect?to='), h.options());
  t.same(noLocation.ok ? 'downloaded' : noLocation.reason, 'http_status');
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": an IPv6 answer is checked and pinned the same way', async (t) => {
  const fx = await startHttpsFixture(t, (_req, res) => res.writeHead(200, { 'content-type': 'audio/mpeg' }).end(AUDIO), '::1');
  const lookups: string[] = [];
  const options: DownloadOptions = {
    allowedHosts: ['*.recordings.test'], maxBytes: 64 * 1024, timeoutMs: 10_000, maxRedirects: 0, clock: new FakeClock(), ca: fx.ca,
    resolver: (host) => { lookups.push(host); return Promise.resolve([{ address: '::1', family: 6 }]); },
  };
  const refused = await downloadRecording(fx.url('/ok', 'v6.recordings.test'), options);
  t.same(refused.ok ? 'downloaded' : refused.reason, 'address_refused', '::1 is loopback');
  const r = await downloadRecording(fx.url('/ok', 'v6.recordings.test'), { ...options, unsafeAllowAddressForTests: (host, a) => host === 'v6.recordings.test' && a === '::1' });
  t.equal(r.ok && r.bytes.equals(AUDIO), true, 'fetched over IPv6 from the pinned ::1');
  t.same(lookups, ['v6.recordings.test', 'v6.recordings.test']);
  t.equal(fx.requests.length, 1);
});

t.test('an allow-listed IP literal is checked like any answer; TLS then verifies the IP in the certificate', async (t) => {
  const h = await harness(t);
  const url = `https://127.0.0.1:${h.fx.port}/ok`;
  const r = await downloadRecording(url, h.options({ unsafeAllowAddressForTests: (host, a) => host === '127.0.0.1' && a === host }));
  t.equal(r.ok && r.bytes.equals(AUDIO), true);
  t.same(h.lookups, [], 'a literal is not resolved');
});
