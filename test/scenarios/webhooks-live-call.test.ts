/**
 * docs/WEBHOOKS.md "Post-call webhooks" end to end: a real inbound call through the gateway to an ElevenLabs
 * sip_trunk agent, then the platform's post-call webhook, attributed to that call by the routed
 * DID, the caller and the time, and its transcript served on the call.
 */
import t from 'tap';
import { mulawTone } from '../support/audio-probe.js';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';

const DID = '+15550170';
const CALLER = '+15557770170';

t.test('docs/WEBHOOKS.md "Post-call webhooks": the post-call payload of a real call is attributed to it and its transcript served', async (t) => {
  const gw = await startTestGateway(t, {
    carriers: "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n",
    yaml: 'calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true',
  });
  // The platform's SIP edge answers and plays a tone.
  const edge = await startSipPhoneUa(t);
  const edgePhone = await edge.phone();
  edge.ua.events.on('invite', (incoming) => {
    incoming.accept(edgePhone.answerOffer(incoming.offer));
    edgePhone.startSending(mulawTone(440, 1000));
  });
  await gw.gateway.store.numbers.add(gw.tenantId, DID, 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'elevenlabs', external_agent_id: 'agent_live_1', connection_mode: 'sip_trunk',
    sip_uri: `sip:${DID}@127.0.0.1:${edge.port}`, sip_transport: 'udp', did_number: DID,
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));

  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const call = carrier.ua.invite({ target: `sip:${DID}@127.0.0.1:${gw.gateway.sip.udpPort}`, from: `sip:${CALLER}@127.0.0.1`, sdp: phone.offer });
  const { session, answer } = await answered(call);
  phone.useAnswer(answer);
  phone.startSending();
  const startS = Math.floor(Date.now() / 1000);
  await new Promise((resolve) => setTimeout(resolve, 1200));
  await session.bye();
  const ended = await waitFor('the call ended', async () => {
    const r = await gw.api('GET', '/v1/calls?state=ended&direction=inbound', undefined, { key: gw.liveKey });
    return r.body.data.find((c) => c.to === DID);
  });

  const payload = {
    type: 'post_call_transcription',
    event_timestamp: startS + 5,
    data: {
      agent_id: 'agent_live_1', conversation_id: 'conv_live_1', status: 'done',
      transcript: [
        { role: 'agent', message: 'Thanks for calling.', time_in_call_secs: 0 },
        { role: 'user', message: 'Bye for now.', time_in_call_secs: 1 },
      ],
      metadata: {
        start_time_unix_secs: startS, call_duration_secs: 1,
        phone_call: { type: 'sip_trunking', direction: 'inbound', agent_number: DID, external_number: CALLER, call_sid: 'SCL_live' },
      },
    },
  };
  const posted = await fetch(`${gw.base}/v1/webhooks/elevenlabs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(payload) });
  t.equal(posted.status, 200, 'the unauthenticated webhook answers 200');
  const transcript = await gw.api('GET', `/v1/calls/${ended.id}/transcript`, undefined, { key: gw.liveKey });
  t.equal(transcript.status, 200, JSON.stringify(transcript.body));
  t.equal(transcript.body.source, 'provider');
  t.same((transcript.body.turns as { role: string; text: string }[]).map((turn) => [turn.role, turn.text]), [['agent', 'Thanks for calling.'], ['caller', 'Bye for now.']],
    'the payload was attributed to the call that really happened');
  const detail = await gw.api('GET', `/v1/calls/${ended.id}`, undefined, { key: gw.liveKey });
  t.same(detail.body.transcript, { available: true, source: 'provider' }, 'the call detail says a transcript exists');
});
