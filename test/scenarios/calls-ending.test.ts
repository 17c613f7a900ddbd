/**
 * docs/RELIABILITY.md "Ending a call": the gateway's BYE goes out before the call's RTP port
 * closes, and a throwing event listener is logged with the event's name and contained: the
 * process and the other calls go on. A carrier (our SIP user agent and RTP phones on loopback)
 * calls DIDs routed to fake WebSocket agents.
 */
import { Socket } from 'node:dgram';
import t from 'tap';
import { RtpSession } from '../../src/engine/media/index.js';
import { mulawTone, toneLevel } from '../support/audio-probe.js';
import { routeDidToFakeAgent, startTestGateway, waitFor, type TestGateway } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';

const CARRIERS = "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n";
const YAML = 'calls:\n  allow_private_agent_urls: true';

async function liveCallFrom(gw: TestGateway, from: string): Promise<{ id: string }> {
  return waitFor(`the live call from ${from}`, async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound&state=active', undefined, { key: gw.liveKey });
    return r.body.data.find((c) => c.from === from);
  });
}

t.test('RFC 3261 15.1.1 with docs/RELIABILITY.md "Ending a call": the BYE is on the wire before the RTP socket closes', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  const { bot } = await routeDidToFakeAgent(t, gw, { did: '+15550100', carrier: 'trunk', externalAgentId: 'desk' });
  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const { answer } = await answered(carrier.ua.invite({ target: `sip:+15550100@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770001@127.0.0.1', sdp: phone.offer }));
  phone.useAnswer(answer);
  await waitFor("the agent's start message", () => bot.events().includes('start'));
  const gatewayRtpPort = phone.rtp.remote!.port;
  const call = await liveCallFrom(gw, '+15557770001');

  // What leaves the process, in order: datagrams handed to UDP sockets, and RTP sessions closed.
  const wire: string[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back, and called with its own `this`
  const send = Socket.prototype.send;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- the same
  const close = RtpSession.prototype.close;
  t.teardown(() => {
    Socket.prototype.send = send;
    RtpSession.prototype.close = close;
  });
  Socket.prototype.send = function (this: Socket, ...args: Parameters<Socket['send']>) {
    const data = args[0];
    if (Buffer.isBuffer(data) && data.subarray(0, 4).toString() === 'BYE ') wire.push('BYE sent');
    return send.apply(this, args);
  } as Socket['send'];
  RtpSession.prototype.close = function (this: RtpSession) {
    if (this.localPort === gatewayRtpPort) wire.push('RTP closed');
    close.call(this);
  };
  const hung = await gw.api('POST', `/v1/calls/${call.id}/hangup`, undefined, { key: gw.liveKey });
  t.equal(hung.status, 200);
  await waitFor('the BYE and the close', () => wire.length >= 2);
  t.same(wire.slice(0, 2), ['BYE sent', 'RTP closed'], 'BYE first, then the media');
});

t.test('docs/RELIABILITY.md "Ending a call": a throwing listener is logged with its event and contained; the process and the other call go on', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  await routeDidToFakeAgent(t, gw, { did: '+15550100', carrier: 'trunk', externalAgentId: 'desk-a' });
  const { bot: botB } = await routeDidToFakeAgent(t, gw, { did: '+15550101', carrier: 'trunk', externalAgentId: 'desk-b' });
  const carrier = await startSipPhoneUa(t);
  const dial = async (did: string, from: string) => {
    const phone = await carrier.phone();
    const { session, answer } = await answered(carrier.ua.invite({ target: `sip:${did}@127.0.0.1:${gw.gateway.sip.udpPort}`, from: `sip:${from}@127.0.0.1`, sdp: phone.offer }));
    phone.useAnswer(answer);
    return { phone, session, call: await liveCallFrom(gw, from) };
  };
  const a = await dial('+15550100', '+15557770001');
  const b = await dial('+15550101', '+15557770002');
  b.phone.startSending(mulawTone(1000, 1000));
  await waitFor("call B's tone at its agent", () => toneLevel(botB.receivedAudio().subarray(-8000), 1000) > 1000);

  // A listener with a bug, on call A's session: it throws when the gateway's BYE arrives.
  a.session.events.on('bye', () => {
    throw new Error('listener bug');
  });
  const hung = await gw.api('POST', `/v1/calls/${a.call.id}/hangup`, undefined, { key: gw.liveKey });
  t.equal(hung.status, 200);
  const logged = await waitFor('the listener error in the log', () => gw.logs.find((l) => l.event === 'bye' && String(l.msg).includes('listener threw')));
  t.equal(logged.level, 'error', 'logged at error level');
  t.match(JSON.stringify(logged.err), /listener bug/, 'with the error');

  const heardBefore = botB.receivedAudio().length;
  await waitFor('call B still carries audio', () => botB.receivedAudio().length > heardBefore + 8000);
  const still = await gw.api('GET', `/v1/calls/${b.call.id}`, undefined, { key: gw.liveKey });
  t.equal(still.body.state, 'active', 'the other call is still up');
  t.equal(process.exitCode ?? 0, 0, 'the process is not on its way out');
  await gw.api('POST', `/v1/calls/${b.call.id}/hangup`, undefined, { key: gw.liveKey });
});
