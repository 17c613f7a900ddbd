/**
 * @module The UAS digest of SipUserAgent over real UDP sockets on loopback: INVITEs from
 * 127.0.0.2 and 127.0.0.3 to a TransportLayer on 127.0.0.1, answered by the product stack.
 * Replays of a captured Authorization, nonce counts used twice, a digest uri for another
 * Request-URI and a nonce issued to another source are all refused (docs/SECURITY.md, "SIP digest").
 */
import t, { type Test } from 'tap';
import { createSocket, type Socket } from 'node:dgram';
import { systemClock } from '../../../common/clock.js';
import { parseMessage } from '../messages/parse.js';
import type { SipResponse } from '../messages/sip-message.js';
import { TransportLayer } from '../transport/transport-layer.js';
import { SipUserAgent } from '../user-agent-core/sip-user-agent.js';
import { parseAuthParams } from './auth-header.js';
import { DigestClient } from './digest-client.js';
import { digestResponse } from './digest.js';
import { DigestServer } from './digest-server.js';

const REALM = 'gw.test';

/** The gateway side: a UA on 127.0.0.1 that challenges every INVITE; admitted calls get 486. */
async function startUas(t: Test): Promise<{ port: number; admitted: string[] }> {
  const server = new DigestServer({ realm: REALM, clock: systemClock });
  const up: { ua?: SipUserAgent } = {};
  const layer = new TransportLayer({ listen: [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }], delegate: { onMessage: (m, s) => up.ua?.receive(m, s) } });
  await layer.start();
  const ua = new SipUserAgent({ transport: layer, inboundAuth: () => ({ server, passwordOf: (u) => (u === 'alice' ? 's3cret' : undefined) }) });
  up.ua = ua;
  const admitted: string[] = [];
  ua.events.on('invite', (call) => {
    admitted.push(call.callId);
    call.reject(486);
  });
  t.teardown(async () => {
    ua.dispose();
    await layer.stop();
  });
  return { port: layer.listeningPoint('UDP')!.port, admitted };
}

/** A raw SIP client on one loopback address: sends INVITEs, returns their final response, ACKs it. */
async function client(t: Test, address: string, uasPort: number) {
  const socket: Socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  t.teardown(() => socket.close());
  const port = socket.address().port;
  const waiting = new Map<string, (r: SipResponse) => void>();
  socket.on('message', (data) => {
    const parsed = parseMessage(data);
    if (!parsed.ok || parsed.message.kind !== 'response' || parsed.message.status < 200) return;
    waiting.get(parsed.message.callId)?.(parsed.message);
  });
  let n = 0;
  const lines = (method: string, uri: string, callId: string, branch: string, extra: string[]): string =>
    [`${method} ${uri} SIP/2.0`, `Via: SIP/2.0/UDP ${address}:${port};branch=${branch}`, 'Max-Forwards: 70',
      `From: <sip:carrier@${address}>;tag=f${callId}`, 'To: <sip:+15550100@127.0.0.1>', `Call-ID: ${callId}`, `CSeq: 1 ${method}`,
      `Contact: <sip:carrier@${address}:${port}>`, ...extra, 'Content-Length: 0', '', ''].join('\r\n');
  const invite = async (callId: string, o: { uri?: string; authorization?: string } = {}): Promise<SipResponse> => {
    const uri = o.uri ?? 'sip:+15550100@127.0.0.1';
    const branch = `z9hG4bK${address.replace(/\./g, '')}x${++n}`;
    const answer = new Promise<SipResponse>((resolve) => waiting.set(callId, resolve));
    socket.send(lines('INVITE', uri, callId, branch, o.authorization ? [`Authorization: ${o.authorization}`] : []), uasPort, '127.0.0.1');
    const response = await answer;
    waiting.delete(callId);
    // RFC 3261 17.1.1.3: the ACK for a non-2xx final response, in the INVITE's transaction.
    const to = response.headers.get('To') ?? '';
    socket.send(lines('ACK', uri, callId, branch, []).replace('To: <sip:+15550100@127.0.0.1>', `To: ${to}`), uasPort, '127.0.0.1');
    return response;
  };
  return { invite };
}

const challenges = (r: SipResponse): string[] => r.headers.getAll('WWW-Authenticate');
const isStale = (r: SipResponse): boolean => challenges(r).some((c) => parseAuthParams(c)?.params.get('stale')?.toLowerCase() === 'true');

t.test('RFC 7616 3.4 / RFC 3261 22.4: a captured Authorization replayed on a new Call-ID gets a new challenge (stale=true), never the call', async (t) => {
  const uas = await startUas(t);
  const carrier = await client(t, '127.0.0.2', uas.port);
  const digest = new DigestClient({ username: 'alice', password: 's3cret' });
  const first = await carrier.invite('call-a1');
  t.equal(first.status, 401);
  t.ok(digest.handleChallenge(401, challenges(first)));
  const captured = digest.authorize('INVITE', 'sip:+15550100@127.0.0.1')!.value;
  t.equal((await carrier.invite('call-a2', { authorization: captured })).status, 486, 'the genuine request reaches the application');
  const replay = await carrier.invite('call-a3', { authorization: captured });
  t.equal(replay.status, 401, 'the same Authorization on another Call-ID is challenged again');
  t.ok(isStale(replay), 'stale=true: the credentials were right, the nonce count was used');
  t.same(uas.admitted, ['call-a2'], 'only the genuine INVITE was admitted');
});

t.test('RFC 7616 3.4: a nonce count used once is refused the second time, even with a fresh cnonce and a right response', async (t) => {
  const uas = await startUas(t);
  const carrier = await client(t, '127.0.0.2', uas.port);
  const first = await carrier.invite('call-b1');
  const nonce = parseAuthParams(challenges(first)[0]!)!.params.get('nonce')!;
  const uri = 'sip:+15550100@127.0.0.1';
  const header = (nc: string, cnonce: string): string => {
    const response = digestResponse({ algorithm: 'SHA-256', username: 'alice', realm: REALM, password: 's3cret', method: 'INVITE', uri, nonce, qop: 'auth', nc, cnonce });
    return `Digest username="alice", realm="${REALM}", nonce="${nonce}", uri="${uri}", response="${response}", algorithm=SHA-256, qop=auth, nc=${nc}, cnonce="${cnonce}"`;
  };
  t.equal((await carrier.invite('call-b2', { authorization: header('00000001', 'aaaa') })).status, 486);
  t.equal((await carrier.invite('call-b3', { authorization: header('00000002', 'bbbb') })).status, 486, 'a higher count on the same nonce is fine');
  const again = await carrier.invite('call-b4', { authorization: header('00000002', 'cccc') });
  t.equal(again.status, 401, 'nc 2 a second time');
  t.ok(isStale(again));
  t.equal((await carrier.invite('call-b5', { authorization: header('00000001', 'dddd') })).status, 401, 'nc 1 after nc 2');
  t.same(uas.admitted, ['call-b2', 'call-b3']);
});

t.test('RFC 7616 3.4.6 / RFC 2617 3.2.2.5: credentials whose digest uri is not the Request-URI get 400 Bad Request', async (t) => {
  const uas = await startUas(t);
  const carrier = await client(t, '127.0.0.2', uas.port);
  const digest = new DigestClient({ username: 'alice', password: 's3cret' });
  digest.handleChallenge(401, challenges(await carrier.invite('call-c1')));
  const forBob = digest.authorize('INVITE', 'sip:+15550100@127.0.0.1')!.value;
  const other = await carrier.invite('call-c2', { uri: 'sip:+15550199@127.0.0.1', authorization: forBob });
  t.equal(other.status, 400, 'the captured header sent to another Request-URI');
  t.match(other.reason, /digest uri/);
  t.same(uas.admitted, []);
});

t.test('RFC 7616 5.12: a nonce issued to 127.0.0.2 is refused from 127.0.0.3, which gets a challenge of its own', async (t) => {
  const uas = await startUas(t);
  const one = await client(t, '127.0.0.2', uas.port);
  const three = await client(t, '127.0.0.3', uas.port);
  const digest = new DigestClient({ username: 'alice', password: 's3cret' });
  digest.handleChallenge(401, challenges(await one.invite('call-d1')));
  const refused = await three.invite('call-d2', { authorization: digest.authorize('INVITE', 'sip:+15550100@127.0.0.1')!.value });
  t.equal(refused.status, 401, 'right password, but a nonce issued to another source');
  t.notOk(isStale(refused), 'not stale: the nonce was never good for this source');
  const own = new DigestClient({ username: 'alice', password: 's3cret' });
  t.ok(own.handleChallenge(401, challenges(refused)));
  t.equal((await three.invite('call-d3', { authorization: own.authorize('INVITE', 'sip:+15550100@127.0.0.1')!.value })).status, 486, 'its own nonce works');
  t.same(uas.admitted, ['call-d3']);
});
