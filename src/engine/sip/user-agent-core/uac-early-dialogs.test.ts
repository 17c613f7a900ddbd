/**
 * @module UAC early dialogs over real UDP on 127.0.0.1 (RFC 3261 §12.1.2, §13.2.2.4, §12.3, §9.1;
 * RFC 3262 §4, §7.2; RFC 3311): the far side is raw sockets speaking hand-built responses, a
 * record-routing "proxy" and a second fork reached directly.
 */
import t from 'tap';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { startGatewayUaOnTestTransport } from '../../../../test/support/sip-sipp.js';
import { testRequest, testResponse } from '../../../../test/support/sip-messages.js';
import type { SessionDialog, SessionEndReason } from '../dialogs/session-dialog.js';
import { parseMessage } from '../messages/parse.js';
import { serializeMessage } from '../messages/serialize.js';
import type { SipMessage, SipRequest, SipResponse } from '../messages/sip-message.js';
import type { OutboundCall } from './outbound-call.js';
import type { SipUserAgent } from './sip-user-agent.js';

interface TapTest { teardown(fn: () => void | Promise<void>): void }

const SDP = Buffer.from('v=0\r\no=gw 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=sendrecv\r\n');

/** A UDP socket that collects what it receives and sends hand-built messages to the gateway. */
class RawPeer {
  readonly socket: Socket;
  readonly requests: SipRequest[] = [];
  readonly responses: SipResponse[] = [];
  readonly #uaPort: number;
  #waiters: (() => void)[] = [];

  constructor(socket: Socket, uaPort: number) {
    this.socket = socket;
    this.#uaPort = uaPort;
    socket.on('message', (buf) => {
      const parsed = parseMessage(buf);
      if (!parsed.ok) return;
      const m = parsed.message;
      // UDP retransmissions (same branch and method) are not new requests; a busy host can cause them.
      if (m.kind === 'request' && !this.requests.some((r) => r.topVia.branch === m.topVia.branch && r.method === m.method)) this.requests.push(m);
      else if (m.kind === 'response') this.responses.push(m);
      for (const w of this.#waiters.splice(0)) w();
    });
  }

  static async open(t: TapTest, uaPort: number): Promise<RawPeer> {
    const socket = createSocket('udp4');
    socket.bind(0, '127.0.0.1');
    await once(socket, 'listening');
    t.teardown(() => { socket.close(); });
    return new RawPeer(socket, uaPort);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** The `n`-th request (from 0) with `method`, waiting for it to arrive. */
  async nth(method: string, n = 0): Promise<SipRequest> {
    for (;;) {
      const found = this.requests.filter((r) => r.method === method)[n];
      if (found) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** The final response to the request sent on `branch`, waiting for it. */
  async finalFor(branch: string): Promise<SipResponse> {
    for (;;) {
      const found = this.responses.find((r) => r.status >= 200 && r.topVia.branch === branch);
      if (found) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Sends an UPDATE with `sdp` in the early dialog of `toTag` to the gateway; resolves with its status. */
  async sendUpdate(invite: SipRequest, toTag: string, cseq: number, sdp: Buffer): Promise<number> {
    const branch = `z9hG4bKupd${cseq}${toTag}`;
    // The far end's From is the INVITE's To (with its tag); its To is the INVITE's From (ours).
    const update = testRequest({
      method: 'UPDATE', uri: 'sip:gw@127.0.0.1', callId: invite.callId, cseq, fromTag: toTag, toTag: invite.from.tag ?? '',
      via: `SIP/2.0/UDP 127.0.0.1:${this.port};branch=${branch}`, extra: [['Content-Type', 'application/sdp']], body: sdp.toString(),
    });
    this.#send(update);
    return (await this.finalFor(branch)).status;
  }

  count(method: string): number {
    return this.requests.filter((r) => r.method === method).length;
  }

  /** Answers `request` with `status`, adding a To tag when given, the extra headers and an SDP body. */
  reply(request: SipRequest, status: number, toTag?: string, headers: readonly [string, string][] = [], sdp?: Buffer): SipResponse {
    const res = testResponse(request, status, toTag);
    for (const [k, v] of headers) res.headers.append(k, v);
    if (sdp) {
      res.headers.append('Content-Type', 'application/sdp');
      res.body = sdp;
    }
    this.#send(res);
    return res;
  }

  #send(message: SipMessage): void {
    this.socket.send(serializeMessage(message), this.#uaPort, '127.0.0.1');
  }
}

interface Scene {
  ua: SipUserAgent;
  call: OutboundCall;
  invite: SipRequest;
  /** Receives the INVITE and everything sent through the record-routed route set of fork 1. */
  proxy: RawPeer;
  /** Fork 2's own address (its Contact); it does not record-route. */
  fork2: RawPeer;
  early: SessionDialog[];
  progress: number[];
  ended: Map<SessionDialog, SessionEndReason>;
}

async function scene(t: TapTest): Promise<Scene> {
  const { ua, transport } = await startGatewayUaOnTestTransport(t);
  const proxy = await RawPeer.open(t, transport.udpPort);
  const fork2 = await RawPeer.open(t, transport.udpPort);
  const call = ua.invite({ target: `sip:bob@127.0.0.1:${proxy.port}`, from: 'sip:alice@127.0.0.1', sdp: SDP });
  const early: SessionDialog[] = [];
  const progress: number[] = [];
  const ended = new Map<SessionDialog, SessionEndReason>();
  call.events.on('early', (s) => {
    early.push(s);
    s.events.on('terminated', (why) => ended.set(s, why));
  });
  call.events.on('progress', (r) => progress.push(r.status));
  const invite = await proxy.nth('INVITE');
  return { ua, call, invite, proxy, fork2, early, progress, ended };
}

/** Fork 1's provisional (record-routed through the proxy), reliable when `rseq` is given. */
function fork1Provisional(s: Scene, status: number, rseq?: number): void {
  s.proxy.reply(s.invite, status, 'fork1', [
    ['Record-Route', `<sip:127.0.0.1:${s.proxy.port};lr>`],
    ['Contact', '<sip:uas1@192.0.2.10:5060>'],
    ...(rseq === undefined ? [] : [['Require', '100rel'], ['RSeq', String(rseq)]] as [string, string][]),
  ]);
}

/** Fork 2's reliable provisional: no Record-Route, so its dialog talks to its Contact directly. */
function fork2Provisional(s: Scene, rseq: number): void {
  s.proxy.reply(s.invite, 180, 'fork2', [['Contact', `<sip:uas2@127.0.0.1:${s.fork2.port}>`], ['Require', '100rel'], ['RSeq', String(rseq)]]);
}

function outcome(call: OutboundCall): Promise<{ session?: SessionDialog; status: number }> {
  return new Promise((resolve) => {
    call.events.on('accepted', (session, res) => resolve({ session, status: res.status }));
    call.events.on('failed', (status) => resolve({ status }));
  });
}

t.test('RFC 3261 12.1.2 / RFC 3262 4, 7.2: a reliable 180 with a To tag makes an early dialog; PRACK goes to its remote target through its route set', async (t) => {
  const s = await scene(t);
  fork1Provisional(s, 180, 1);
  const prack = await s.proxy.nth('PRACK');
  t.equal(s.early.length, 1, 'one early dialog');
  const [early] = s.early;
  t.equal(early?.dialog.state, 'Early');
  t.equal(early?.dialog.remoteTarget, 'sip:uas1@192.0.2.10:5060', 'remote target from the Contact');
  t.same(early?.dialog.routeSet, [`<sip:127.0.0.1:${s.proxy.port};lr>`], 'route set from Record-Route');
  t.equal(prack.uri, 'sip:uas1@192.0.2.10:5060', 'loose routing: the Request-URI is the remote target');
  t.same(prack.headers.getAll('Route'), [`<sip:127.0.0.1:${s.proxy.port};lr>`]);
  t.equal(prack.to.tag, 'fork1');
  t.equal(prack.headers.get('RAck'), '1 1 INVITE', '7.2: RAck is RSeq, then the CSeq number and method');
  t.equal(prack.cseq.seq, 2, '12.2.1.1: the next CSeq of the dialog');
  s.proxy.reply(prack, 200);
  fork1Provisional(s, 180, 1);
  fork1Provisional(s, 183, 3);
  fork1Provisional(s, 183, 2);
  const second = await s.proxy.nth('PRACK', 1);
  t.equal(second.headers.get('RAck'), '2 1 INVITE', '4: the retransmission (RSeq 1) and the gap (RSeq 3) got no PRACK');
  s.proxy.reply(second, 200);
  t.same(s.progress, [180, 183], '4: discarded reliable provisionals are not processed further');
  const ended = outcome(s.call);
  s.proxy.reply(s.invite, 486, 'fork1');
  t.equal((await ended).status, 486);
});

t.test('RFC 3261 13.2.2.4: two forks give two early dialogs; the 2xx confirms its own, the other ends; ACK and BYE use the route set', async (t) => {
  const s = await scene(t);
  fork1Provisional(s, 180, 1);
  fork2Provisional(s, 1);
  const p1 = await s.proxy.nth('PRACK');
  const p2 = await s.fork2.nth('PRACK');
  t.equal(p2.uri, `sip:uas2@127.0.0.1:${s.fork2.port}`, 'fork 2 is PRACKed at its own Contact');
  t.same(p2.headers.getAll('Route'), [], 'fork 2 has an empty route set');
  t.equal(p2.headers.get('RAck'), '1 1 INVITE', '4: each fork has its own RSeq space');
  s.proxy.reply(p1, 200);
  s.fork2.reply(p2, 200);
  t.equal(s.early.length, 2);
  t.equal(s.ua.dialogCount, 2, 'both early dialogs are registered');
  const result = outcome(s.call);
  s.proxy.reply(s.invite, 200, 'fork1', [['Record-Route', `<sip:127.0.0.1:${s.proxy.port};lr>`], ['Contact', '<sip:uas1@192.0.2.10:5070>']]);
  const { session } = await result;
  t.equal(session, s.early[0], 'the accepted session is fork 1\'s early dialog, now confirmed');
  t.equal(session?.dialog.state, 'Confirmed');
  t.equal(session?.dialog.remoteTarget, 'sip:uas1@192.0.2.10:5070', '13.2.2.4: the 2xx recomputes the remote target');
  t.equal(s.ended.get(s.early[1] as SessionDialog), 'other-fork-answered', 'fork 2\'s early dialog ended');
  t.same(s.call.earlySessions, [], 'no early dialog is left');
  t.equal(s.ua.dialogCount, 1);
  const ack = await s.proxy.nth('ACK');
  t.equal(ack.uri, 'sip:uas1@192.0.2.10:5070');
  t.equal(ack.cseq.seq, 1, 'the ACK has the INVITE\'s CSeq number');
  const bye = session?.bye();
  const byeReq = await s.proxy.nth('BYE');
  t.same(byeReq.headers.getAll('Route'), [`<sip:127.0.0.1:${s.proxy.port};lr>`]);
  t.equal(byeReq.cseq.seq, 3, '12.2.1.1: after the PRACK (2), the BYE is 3');
  s.proxy.reply(byeReq, 200);
  t.equal(await bye, 200);
  t.equal(s.fork2.count('BYE') + s.fork2.count('ACK'), 0, 'nothing went to the losing fork');
});

t.test('RFC 3261 13.2.2.4: a later 2xx from the fork whose early dialog ended is ACKed and ended with BYE at its Contact', async (t) => {
  const s = await scene(t);
  fork1Provisional(s, 180, 1);
  fork2Provisional(s, 1);
  s.proxy.reply(await s.proxy.nth('PRACK'), 200);
  s.fork2.reply(await s.fork2.nth('PRACK'), 200);
  const result = outcome(s.call);
  s.proxy.reply(s.invite, 200, 'fork1', [['Record-Route', `<sip:127.0.0.1:${s.proxy.port};lr>`], ['Contact', '<sip:uas1@192.0.2.10:5060>']]);
  const { session } = await result;
  s.proxy.reply(s.invite, 200, 'fork2', [['Contact', `<sip:uas2@127.0.0.1:${s.fork2.port}>`]]);
  const ack = await s.fork2.nth('ACK');
  t.equal(ack.to.tag, 'fork2', 'the ACK goes to fork 2 in a dialog built from its 2xx');
  const bye = await s.fork2.nth('BYE');
  t.equal(bye.to.tag, 'fork2', 'then fork 2 gets a BYE: one call only');
  t.equal(bye.cseq.seq, 3, '12.2.1.1: the new dialog continues above the CSeq fork 2 saw in its early dialog (PRACK 2)');
  s.fork2.reply(bye, 200);
  t.equal(session?.dialog.remoteTag, 'fork1', 'the call stays with fork 1');
  t.equal(session?.isEnded, false);
});

t.test('RFC 3261 13.2.2.4: a 2xx from a fork that sent no provisional makes a new dialog and still ends the early ones', async (t) => {
  const s = await scene(t);
  fork2Provisional(s, 1);
  s.fork2.reply(await s.fork2.nth('PRACK'), 200);
  const result = outcome(s.call);
  s.proxy.reply(s.invite, 200, 'fork3', [['Contact', `<sip:uas3@127.0.0.1:${s.proxy.port}>`]]);
  const { session } = await result;
  t.equal(session?.dialog.remoteTag, 'fork3');
  t.equal(s.ended.get(s.early[0] as SessionDialog), 'other-fork-answered');
  t.equal(s.ua.dialogCount, 1);
  const bye = session?.bye();
  s.proxy.reply(await s.proxy.nth('BYE'), 200);
  t.equal(await bye, 200);
});

t.test('RFC 3311 5.2: an UPDATE offer while our INVITE offer is unanswered gets 491; after a 183 with the answer it reaches onOffer', async (t) => {
  const s = await scene(t);
  fork1Provisional(s, 180, 1);
  s.proxy.reply(await s.proxy.nth('PRACK'), 200);
  const early = s.early[0];
  if (!early) throw new Error('no early dialog');
  const offers: string[] = [];
  early.onOffer = (offer) => {
    offers.push(offer.toString());
    return SDP;
  };
  t.equal(early.localOfferPending, true, 'the INVITE carried our offer');
  t.equal(await s.proxy.sendUpdate(s.invite, 'fork1', 1, SDP), 491, 'the early UPDATE offer is refused');
  t.same(offers, [], 'the refused offer was not handed on');
  s.proxy.reply(s.invite, 183, 'fork1', [['Contact', '<sip:uas1@192.0.2.10:5060>'], ['Require', '100rel'], ['RSeq', '2']], SDP);
  s.proxy.reply(await s.proxy.nth('PRACK', 1), 200);
  t.equal(early.localOfferPending, false, 'the reliable 183 carried the answer');
  t.equal(await s.proxy.sendUpdate(s.invite, 'fork1', 2, SDP), 200, 'an offer now gets our answer');
  t.equal(offers.length, 1);
  const ended = outcome(s.call);
  s.proxy.reply(s.invite, 486, 'fork1');
  t.equal((await ended).status, 486);
});

t.test('RFC 3261 12.3: a non-2xx final response ends every early dialog', async (t) => {
  const s = await scene(t);
  fork1Provisional(s, 183);
  fork2Provisional(s, 1);
  s.fork2.reply(await s.fork2.nth('PRACK'), 200);
  t.equal(s.early.length, 2, 'an unreliable 183 with a tag makes an early dialog too');
  const result = outcome(s.call);
  s.proxy.reply(s.invite, 480, 'fork1');
  t.equal((await result).status, 480);
  t.same([...s.ended.values()], ['request-failed', 'request-failed']);
  t.equal(s.ua.dialogCount, 0);
});

t.test('RFC 3261 9.1 / RFC 3311 5.1: UPDATE in the early dialog; after CANCEL the 487 ends the early dialogs', async (t) => {
  const s = await scene(t);
  fork1Provisional(s, 180, 1);
  s.proxy.reply(await s.proxy.nth('PRACK'), 200);
  const early = s.early[0];
  if (!early) throw new Error('no early dialog');
  const updated = early.update(SDP);
  const update = await s.proxy.nth('UPDATE');
  t.equal(update.uri, 'sip:uas1@192.0.2.10:5060', 'UPDATE goes to the early dialog\'s remote target');
  t.equal(update.cseq.seq, 3);
  s.proxy.reply(update, 200, undefined, [['Contact', '<sip:uas1@192.0.2.10:5060>']]);
  t.equal((await updated).status, 200);
  const result = outcome(s.call);
  s.call.cancel();
  const cancel = await s.proxy.nth('CANCEL');
  t.equal(cancel.cseq.seq, 1, '9.1: CANCEL has the INVITE\'s CSeq number');
  s.proxy.reply(cancel, 200, 'fork1');
  s.proxy.reply(s.invite, 487, 'fork1');
  t.equal((await result).status, 487);
  t.equal(s.ended.get(early), 'request-failed');
  t.equal(s.ua.dialogCount, 0);
});
