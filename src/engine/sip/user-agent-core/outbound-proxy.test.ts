/**
 * @module `outboundProxy` of the user agent (RFC 3261 §8.1.2) over real UDP sockets on 127.0.0.1:
 * the "proxy" is a second listening point that records what reaches it and answers.
 */
import t from 'tap';
import { TestTransport } from '../../../../test/support/sip-test-transport.js';
import { startGatewayUaOnTestTransport } from '../../../../test/support/sip-sipp.js';
import { testResponse } from '../../../../test/support/sip-messages.js';
import type { SessionDialog } from '../dialogs/session-dialog.js';
import type { SipMessage, SipRequest } from '../messages/sip-message.js';
import { inviteWithFailover } from './invite-failover.js';
import type { SipSource } from './transport-port.js';

interface TapTest { teardown(fn: () => void | Promise<void>): void }

const SDP = Buffer.from('v=0\r\no=a 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=sendrecv\r\n');
/** A carrier that is never contacted directly (TEST-NET-1, RFC 5737). */
const CARRIER = 'sip:+15550100@192.0.2.10:5060';

/** A listening point that records every request and answers with `status(request)` (nothing when undefined). */
async function startProxy(t: TapTest, status: (r: SipRequest) => number | undefined): Promise<{ uri: string; requests: SipRequest[]; next(method: string): Promise<SipRequest> }> {
  const proxy = new TestTransport();
  await proxy.listen();
  t.teardown(() => proxy.close());
  const requests: SipRequest[] = [];
  const waiting: { method: string; resolve: (r: SipRequest) => void }[] = [];
  proxy.onReceive = (m: SipMessage, source: SipSource) => {
    if (m.kind !== 'request') return;
    requests.push(m);
    const w = waiting.findIndex((x) => x.method === m.method);
    if (w >= 0) waiting.splice(w, 1)[0]?.resolve(m);
    const code = m.method === 'ACK' ? undefined : status(m);
    if (code === undefined) return;
    const res = testResponse(m, code, 'proxytag');
    if (m.method === 'INVITE' && code === 200) {
      res.headers.append('Contact', `<sip:far@127.0.0.1:${proxy.udpPort}>`);
      res.headers.set('Content-Type', 'application/sdp');
      res.headers.set('Content-Length', String(SDP.length));
      res.body = SDP;
    }
    void proxy.send(res, source);
    // §9.2: the INVITE a CANCEL matched ends with 487.
    const invite = m.method === 'CANCEL' ? requests.find((r) => r.method === 'INVITE' && r.callId === m.callId) : undefined;
    if (invite) void proxy.send(testResponse(invite, 487, 'proxytag'), source);
  };
  const next = (method: string): Promise<SipRequest> => {
    const seen = requests.find((r) => r.method === method && !('taken' in r));
    if (seen) return Promise.resolve(Object.assign(seen, { taken: true }));
    return new Promise((resolve) => waiting.push({ method, resolve: (r) => resolve(Object.assign(r, { taken: true })) }));
  };
  return { uri: `sip:127.0.0.1:${proxy.udpPort}`, requests, next };
}

t.test('RFC 3261 8.1.2 / docs/CONFIGURATION.md sip.outbound_proxy: an INVITE to a carrier goes to the proxy with a pre-loaded Route; the ACK and BYE follow the dialog, without it', async (t) => {
  const proxy = await startProxy(t, () => 200);
  const { ua } = await startGatewayUaOnTestTransport(t, { outboundProxy: proxy.uri });
  const call = ua.invite({ target: CARRIER, from: 'sip:gateway@127.0.0.1', sdp: SDP });
  const session = await new Promise<SessionDialog>((resolve) => call.events.on('accepted', (s) => resolve(s)));
  const invite = await proxy.next('INVITE');
  t.equal(invite.uri, CARRIER, 'the Request-URI still names the carrier');
  t.same(invite.headers.getAll('Route'), [`<${proxy.uri};lr>`], 'one Route: the proxy, loose routing');
  const ack = await proxy.next('ACK');
  t.equal(ack.headers.has('Route'), false, 'the ACK for the 2xx follows the (empty) route set to the Contact');
  t.equal(await session.bye(), 200);
  const bye = await proxy.next('BYE');
  t.equal(bye.uri, `sip:far@127.0.0.1:${proxy.uri.split(':')[2]}`, 'the BYE goes to the remote target');
  t.equal(bye.headers.has('Route'), false, 'in-dialog requests carry no pre-loaded Route');
});

t.test('RFC 3261 8.1.2: OPTIONS pings and REGISTERs to a carrier go to the proxy with it as the Route', async (t) => {
  const proxy = await startProxy(t, () => 200);
  const { ua } = await startGatewayUaOnTestTransport(t, { outboundProxy: proxy.uri });
  const up = new Promise<string>((resolve) => ua.pingTargets({ targets: [{ id: 'carrier', uri: CARRIER }], onTargetState: (_id, state) => resolve(state) }));
  t.equal(await up, 'up', 'the 200 the proxy relayed counts');
  const options = await proxy.next('OPTIONS');
  t.equal(options.uri, CARRIER);
  t.same(options.headers.getAll('Route'), [`<${proxy.uri};lr>`]);
  const registration = ua.register({ registrar: 'sip:192.0.2.10', aor: 'sip:+15550100@192.0.2.10', expires: 300 });
  const granted = await new Promise<number>((resolve) => registration.events.on('registered', resolve));
  t.equal(granted, 300);
  const register = await proxy.next('REGISTER');
  t.equal(register.uri, 'sip:192.0.2.10');
  t.same(register.headers.getAll('Route'), [`<${proxy.uri};lr>`]);
  registration.stop();
});

t.test('RFC 3261 8.1.2 / RFC 3263 4.3: with an outbound proxy, a 503 from it ends the failover: the proxy already tried what it could', async (t) => {
  const proxy = await startProxy(t, (r) => (r.method === 'INVITE' ? 503 : 200));
  const { ua } = await startGatewayUaOnTestTransport(t, { outboundProxy: proxy.uri });
  const targets = [{ address: '192.0.2.10', port: 5060, protocol: 'UDP' as const }, { address: '192.0.2.11', port: 5060, protocol: 'UDP' as const }];
  const outcome = await inviteWithFailover(ua, { target: CARRIER, from: 'sip:gateway@127.0.0.1', sdp: SDP }, targets);
  t.match(outcome, { kind: 'failed', status: 503 });
  t.equal(proxy.requests.filter((r) => r.method === 'INVITE').length, 1, 'one INVITE, not one per resolved carrier address');
});

t.test('RFC 3261 9.1 with an outbound proxy: the CANCEL goes to the proxy with the INVITE\'s Route', async (t) => {
  const ringing = await startProxy(t, (r) => (r.method === 'INVITE' ? 180 : 200));
  const { ua: ua2 } = await startGatewayUaOnTestTransport(t, { outboundProxy: ringing.uri });
  const call = ua2.invite({ target: CARRIER, from: 'sip:gateway@127.0.0.1', sdp: SDP });
  await new Promise((resolve) => call.events.on('progress', resolve));
  const ended = new Promise<number>((resolve) => call.events.on('failed', (s) => resolve(s)));
  call.cancel();
  t.equal(await ended, 487);
  const cancel = await ringing.next('CANCEL');
  t.equal(cancel.uri, CARRIER);
  t.same(cancel.headers.getAll('Route'), [`<${ringing.uri};lr>`], '§9.1: the CANCEL has the INVITE\'s Route');
});

t.test('without an outbound proxy, an INVITE goes to its target with no Route of a proxy', async (t) => {
  const far = await startProxy(t, () => 486);
  const { ua } = await startGatewayUaOnTestTransport(t);
  const call = ua.invite({ target: `sip:+15550100@127.0.0.1:${far.uri.split(':')[2]}`, from: 'sip:gateway@127.0.0.1', sdp: SDP });
  const status = await new Promise<number>((resolve) => call.events.on('failed', (s) => resolve(s)));
  t.equal(status, 486);
  t.equal((await far.next('INVITE')).headers.has('Route'), false);
});

t.test('RFC 3261 8.1.2: a loopback target (the sandbox far end) is this host: it goes direct when the proxy is elsewhere', async (t) => {
  const far = await startProxy(t, () => 486);
  // TEST-NET-1: nothing there answers; an INVITE sent there would time out instead of getting 486.
  const { ua } = await startGatewayUaOnTestTransport(t, { outboundProxy: 'sip:192.0.2.1:5060' });
  const call = ua.invite({ target: `sip:sandbox@127.0.0.1:${far.uri.split(':')[2]}`, from: 'sip:gateway@127.0.0.1', sdp: SDP });
  const status = await new Promise<number>((resolve) => call.events.on('failed', (s) => resolve(s)));
  t.equal(status, 486, 'the loopback far end answered');
  t.equal((await far.next('INVITE')).headers.has('Route'), false, 'no Route of the proxy');
});
