/** @module RFC 3263 next-hop resolution and §4.3 failover, through injected DNS answers, to real UAs on 127.0.0.1. */
import t from 'tap';
import type { SrvRecord } from 'node:dns';
import { createServer } from 'node:net';
import type { TestTransport } from '../../../../test/support/sip-test-transport.js';
import { startGatewayUaOnTestTransport } from '../../../../test/support/sip-sipp.js';
import type { SipUserAgent} from '../index.js';
import { inviteWithFailover, resolveNextHop, hopUri, ServerLocator, type DnsLookup, type SessionDialog, type SipTarget } from '../index.js';

interface TapTest { teardown(fn: () => void | Promise<void>): void }

const SDP = Buffer.from('v=0\r\no=a 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=sendrecv\r\n');

/** Two-or-more-UA tests over the minimal test transport; `tr` is the UA's transport. */
async function makeUa(t: TapTest): Promise<{ ua: SipUserAgent; tr: TestTransport }> {
  const { ua, transport } = await startGatewayUaOnTestTransport(t);
  return { ua, tr: transport };
}

/** DNS with only the SRV and A records given; every other name fails like ENOTFOUND. */
function zone(srv: Record<string, SrvRecord[]>, a: Record<string, string[]>): DnsLookup {
  const miss = (): Promise<never> => Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
  return {
    resolveNaptr: miss,
    resolveSrv: (n) => (srv[n] ? Promise.resolve(srv[n]) : miss()),
    resolve4: (n) => (a[n] ? Promise.resolve(a[n]) : miss()),
    resolve6: miss,
  };
}

/** A TCP port on 127.0.0.1 that nobody listens on (connections are refused). */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const a = s.address();
  const port = typeof a === 'object' && a ? a.port : 0;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

t.test('RFC 3263 4.2: SRV for the carrier domain resolves to a local UA and the call completes through that hop', async (t) => {
  const { ua: a } = await makeUa(t);
  const { ua: b, tr: tb } = await makeUa(t);
  const uris: string[] = [];
  b.events.on('invite', (call) => {
    uris.push(call.request.uri);
    call.accept(SDP);
  });
  const locator = new ServerLocator({
    dns: zone({ '_sip._udp.carrier.test': [{ priority: 10, weight: 0, port: tb.udpPort, name: 'edge.carrier.test' }] }, { 'edge.carrier.test': ['127.0.0.1'] }),
    transports: ['UDP', 'TCP'],
  });
  const targets = await resolveNextHop(locator, 'sip:+15551234@carrier.test');
  t.same(targets, [{ address: '127.0.0.1', port: tb.udpPort, protocol: 'UDP' }]);
  const first = targets[0];
  if (!first) throw new Error('no target');
  t.equal(hopUri(first), `sip:127.0.0.1:${tb.udpPort}`);
  const call = a.invite({ target: 'sip:+15551234@carrier.test', from: 'sip:alice@127.0.0.1', sdp: SDP, proxy: hopUri(first) });
  const session = await new Promise<SessionDialog>((resolve, reject) => {
    call.events.on('accepted', (s) => resolve(s));
    call.events.on('failed', (st) => reject(new Error(`failed ${st}`)));
  });
  t.same(uris, ['sip:+15551234@carrier.test'], 'the Request-URI keeps the carrier URI; only the hop was resolved');
  t.equal(await session.bye(), 200);
});

t.test('RFC 3263 4.3: a 503 from the first SRV target moves the call to the next one', async (t) => {
  const { ua: a } = await makeUa(t);
  const { ua: busy, tr: tBusy } = await makeUa(t);
  const { ua: good, tr: tGood } = await makeUa(t);
  busy.events.on('invite', (call) => call.reject(503));
  good.events.on('invite', (call) => call.accept(SDP));
  const locator = new ServerLocator({
    dns: zone({ '_sip._udp.carrier.test': [
      { priority: 10, weight: 0, port: tBusy.udpPort, name: 'a.carrier.test' },
      { priority: 20, weight: 0, port: tGood.udpPort, name: 'b.carrier.test' },
    ] }, { 'a.carrier.test': ['127.0.0.1'], 'b.carrier.test': ['127.0.0.1'] }),
    transports: ['UDP'],
  });
  const targets = await resolveNextHop(locator, 'sip:+15551234@carrier.test');
  const attempts: number[] = [];
  const r = await inviteWithFailover(a, { target: 'sip:+15551234@carrier.test', from: 'sip:alice@127.0.0.1', sdp: SDP }, targets, { onAttempt: (_c, tg) => attempts.push(tg.port) });
  t.same(attempts, [tBusy.udpPort, tGood.udpPort], 'tried in SRV priority order');
  t.equal(r.kind, 'accepted');
  if (r.kind === 'accepted') {
    t.equal(r.target.port, tGood.udpPort);
    t.equal(await r.session.bye(), 200);
  }
});

t.test('RFC 3263 4.3: a transport error on the first target (TCP refused) moves on; a 486 does not', async (t) => {
  const { ua: a } = await makeUa(t);
  const { ua: good, tr: tGood } = await makeUa(t);
  let decline = false;
  good.events.on('invite', (call) => (decline ? call.reject(486) : call.accept(SDP)));
  const refused: SipTarget = { address: '127.0.0.1', port: await closedPort(), protocol: 'TCP' };
  const reachable: SipTarget = { address: '127.0.0.1', port: tGood.tcpPort, protocol: 'TCP' };
  const options = { target: 'sip:+15551234@carrier.test', from: 'sip:alice@127.0.0.1', sdp: SDP };
  const r = await inviteWithFailover(a, options, [refused, reachable]);
  t.equal(r.kind, 'accepted');
  if (r.kind === 'accepted') {
    t.same(r.target, reachable);
    t.equal(await r.session.bye(), 200);
  }
  decline = true;
  const attempts: number[] = [];
  const busy = await inviteWithFailover(a, options, [reachable, reachable], { onAttempt: (_c, tg) => attempts.push(tg.port) });
  t.match(busy, { kind: 'failed', status: 486 });
  t.equal(attempts.length, 1, 'a final answer from the far end is not retried elsewhere');
  t.match(await inviteWithFailover(a, options, []), { kind: 'failed', status: 503 }, 'no targets: 503');
});
