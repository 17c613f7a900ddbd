/**
 * docs/ARCHITECTURE.md "Media ownership" and docs/CONFIGURATION.md `calls.media_timeout_seconds`:
 * no RTP from the remote party for the media time-out ends an answered call `media_timeout`,
 * whoever owns its packets meanwhile: the agent leg before a transfer and while the target is
 * dialled, the transfer's bridge once the target answered. A carrier (our SIP user agent and RTP
 * phones on loopback) calls a DID routed to a fake WebSocket agent; the transfer dials the same
 * carrier, whose second phone is the target.
 */
import t, { type Test } from 'tap';
import type { InboundCall } from '../../src/engine/sip/index.js';
import { mulawTone } from '../support/audio-probe.js';
import { routeDidToFakeAgent, startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa, type SipPhone } from '../support/sip-phone.js';

const YAML = 'calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  ring_timeout_seconds: 30\n  media_timeout_seconds: 1';

type TargetMode = 'none' | 'ring' | 'answer';

interface Rig {
  gw: TestGateway;
  caller: SipPhone;
  target: SipPhone;
  callId: string;
  controlId: string;
  /** Resolves once the target's INVITE arrived. */
  dialled: Promise<InboundCall>;
}

async function liveCall(t: Test, targetMode: TargetMode): Promise<Rig> {
  const carrier = await startSipPhoneUa(t);
  const carriers = `carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n    outbound:\n      uri: sip:127.0.0.1:${carrier.port}\n`;
  const gw = await startTestGateway(t, { carriers, yaml: YAML });
  const { bot } = await routeDidToFakeAgent(t, gw, { did: '+15550100', carrier: 'trunk', externalAgentId: 'front-desk' });
  const caller = await carrier.phone();
  const target = await carrier.phone();
  let dialledNow: (invite: InboundCall) => void = () => undefined;
  const dialled = new Promise<InboundCall>((resolve) => { dialledNow = resolve; });
  carrier.ua.events.on('invite', (invite) => {
    dialledNow(invite);
    if (targetMode === 'ring') invite.progress(180);
    if (targetMode === 'answer') {
      invite.accept(target.answerOffer(invite.request.body));
      target.startSending(mulawTone(440, 1000));
    }
  });
  const { answer } = await answered(carrier.ua.invite({ target: `sip:+15550100@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770001@127.0.0.1', sdp: caller.offer }));
  caller.useAnswer(answer);
  caller.startSending();
  await waitFor("the agent's start message", () => bot.events().includes('start'));
  const listed = await waitFor('the live call', async () => (await gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: gw.liveKey })).body.data[0]);
  return { gw, caller, target, callId: listed.id, controlId: listed.call_control_id, dialled };
}

async function ended(gw: TestGateway, id: string): Promise<ApiBody> {
  return waitFor(`call ${id} ended`, async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
    return r.body.state === 'ended' ? r.body : undefined;
  }, 15_000);
}

async function transfer(rig: Rig): Promise<void> {
  const moved = await rig.gw.api('POST', '/v1/calls/transfer', { call_control_id: rig.controlId, to: '+15550142' }, { key: rig.gw.liveKey });
  if (moved.status !== 200) throw new Error(`transfer refused: ${JSON.stringify(moved.body)}`);
}

function expectMediaTimeout(t: Test, call: ApiBody): void {
  t.equal(call.end_reason, 'media_timeout', 'the call ended for the silence');
  t.equal(call.cdr?.hangup_by, 'gateway', 'ended by the gateway');
}

t.test('media time-out before any transfer: the agent leg owns the packets, the call still times out', async (t) => {
  const rig = await liveCall(t, 'none');
  rig.caller.stopSending();
  expectMediaTimeout(t, await ended(rig.gw, rig.callId));
});

t.test('media time-out while the transfer target is dialled (ringing)', async (t) => {
  const rig = await liveCall(t, 'ring');
  await transfer(rig);
  await rig.dialled;
  const dialling = await rig.gw.api('GET', `/v1/calls/${rig.callId}`, undefined, { key: rig.gw.liveKey });
  t.equal(dialling.body.transfer?.state, 'dialing', 'the target rings when the remote party falls silent');
  rig.caller.stopSending();
  const call = await ended(rig.gw, rig.callId);
  expectMediaTimeout(t, call);
  t.not(call.transfer?.state, 'connected', 'it ended during the dialling, which the end called off');
});

t.test('media time-out after the transfer connected: the bridge owns the packets, the remote party\'s silence still ends the call', async (t) => {
  const rig = await liveCall(t, 'answer');
  await transfer(rig);
  await waitFor('transfer connected', async () => (await rig.gw.api('GET', `/v1/calls/${rig.callId}`, undefined, { key: rig.gw.liveKey })).body.transfer?.state === 'connected');
  // The target keeps talking; only the remote party (the caller) falls silent.
  rig.caller.stopSending();
  const call = await ended(rig.gw, rig.callId);
  expectMediaTimeout(t, call);
  t.equal(call.transfer?.state, 'connected', 'it ended after the transfer connected');
});
