/**
 * docs/API.md "Call quality": an answered call's CDR keeps each RTP leg's figures (RFC 3550 A.3
 * loss, A.8 jitter) and an estimated MOS (ITU-T G.107 E-model, G.711 with PLC per G.113 Appendix
 * I). A carrier (our SIP user agent and an RTP phone on loopback) calls a DID routed to a fake
 * WebSocket agent; on one call a forwarder drops every tenth RTP packet from the phone and delays
 * every other one by 16 ms. Its CDR shows that loss (within two packets of what was dropped) and
 * jitter (mean between 6 and 30 ms: timers on a shared machine add their own), and a lower MOS than
 * a clean call's.
 */
import t, { type Test } from 'tap';
import { routeDidToFakeAgent, startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';
import { startLossyForwarder, type LossyForwarder } from '../support/lossy-forwarder.js';

const YAML = 'calls:\n  allow_private_agent_urls: true';

interface Leg {
  leg: string; codec: string; srtp: boolean; packets_received: number; packets_sent: number; octets_received: number;
  packets_lost: number; jitter_mean_ms: number; jitter_max_ms: number; longest_silence_received_ms: number; mos: number;
}
interface Quality { legs: Leg[]; agent_stream: { frames_to_agent: number; frames_from_agent: number; first_agent_audio_ms: number | null } | null }

async function rig(t: Test): Promise<{ gw: TestGateway; carrier: Awaited<ReturnType<typeof startSipPhoneUa>> }> {
  const carrier = await startSipPhoneUa(t);
  const carriers = `carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n    outbound:\n      uri: sip:127.0.0.1:${carrier.port}\n`;
  const gw = await startTestGateway(t, { carriers, yaml: YAML });
  await routeDidToFakeAgent(t, gw, { did: '+15550100', carrier: 'trunk', externalAgentId: 'front-desk' });
  return { gw, carrier };
}

/** One inbound call that sends `packets` of audio (through `lossy` when asked), hung up by the API; its ended detail. */
async function call(t: Test, r: Awaited<ReturnType<typeof rig>>, packets: number, lossy: boolean): Promise<{ body: ApiBody; forwarder: LossyForwarder | null }> {
  const { gw, carrier } = r;
  const phone = await carrier.phone();
  // The offer names the forwarder's port, so the gateway's media goes through it from the start
  // and the phone latches to it (RFC 4961) once the gateway's first packet comes back that way.
  const forwarder = lossy ? await startLossyForwarder({ phonePort: phone.rtp.localPort, dropEvery: 10, delayMs: 16 }) : null;
  if (forwarder) t.teardown(() => forwarder.close());
  const offer = forwarder ? Buffer.from(phone.offer.toString('utf8').replace(/^m=audio \d+/m, `m=audio ${forwarder.port}`)) : phone.offer;
  const { answer } = await answered(carrier.ua.invite({ target: `sip:+15550100@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770001@127.0.0.1', sdp: offer }));
  phone.useAnswer(answer);
  if (forwarder) {
    forwarder.gatewayPort = phone.rtp.remote!.port;
    phone.rtp.setRemote({ address: '127.0.0.1', port: forwarder.port });
  }
  const before = phone.rtp.stats().packetsSent;
  phone.startSending();
  await waitFor('the audio sent', () => phone.rtp.stats().packetsSent - before >= packets, 30_000);
  phone.stopSending();
  // The last delayed packets arrive before the call ends.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const listed = await waitFor('the live call', async () => (await gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: gw.liveKey })).body.data[0]);
  t.equal((await gw.api('POST', `/v1/calls/${listed.id}/hangup`, undefined, { key: gw.liveKey })).status, 200);
  const body = await waitFor('the call ended', async () => {
    const res = await gw.api('GET', `/v1/calls/${listed.id}`, undefined, { key: gw.liveKey });
    return res.body.state === 'ended' ? res.body : undefined;
  }, 15_000);
  phone.close();
  return { body, forwarder };
}

const carrierLeg = (body: ApiBody): Leg => {
  const quality = (body.cdr as unknown as { quality: Quality | null }).quality;
  const leg = quality?.legs.find((l) => l.leg === 'carrier');
  if (!leg) throw new Error(`no carrier leg in ${JSON.stringify(quality)}`);
  return leg;
};

t.test('call quality: loss and jitter injected on the carrier leg appear in the CDR and lower the MOS', async (t) => {
  const r = await rig(t);
  const clean = await call(t, r, 100, false);
  const cleanLeg = carrierLeg(clean.body);
  t.match(cleanLeg, { codec: 'PCMU', srtp: false });
  t.ok(cleanLeg.packets_received >= 95, `clean: ${cleanLeg.packets_received} packets received`);
  t.ok(cleanLeg.octets_received >= cleanLeg.packets_received * 160, 'clean: 160 payload octets a packet');
  t.equal(cleanLeg.packets_lost, 0, 'clean: nothing lost');
  t.ok(cleanLeg.mos > 4, `clean: MOS ${cleanLeg.mos}`);
  const stream = (clean.body.cdr as unknown as { quality: Quality }).quality.agent_stream;
  t.ok(stream !== null && stream.frames_to_agent > 0, 'the WebSocket agent\'s frame counters are kept');

  const lossy = await call(t, r, 200, true);
  const leg = carrierLeg(lossy.body);
  const dropped = lossy.forwarder!.dropped;
  t.ok(dropped >= 18, `the forwarder dropped ${dropped} packets`);
  t.ok(Math.abs(leg.packets_lost - dropped) <= 2, `lost ${leg.packets_lost}, dropped ${dropped}`);
  t.ok(leg.jitter_mean_ms >= 6 && leg.jitter_mean_ms <= 30, `mean jitter ${leg.jitter_mean_ms} ms for a 16 ms alternating delay`);
  t.ok(leg.jitter_max_ms >= leg.jitter_mean_ms, `max jitter ${leg.jitter_max_ms} ms`);
  t.ok(leg.jitter_mean_ms > cleanLeg.jitter_mean_ms, 'more jitter than the clean call');
  // 10 % random loss on G.711 with PLC: R ≈ 66, MOS ≈ 3.4 (G.107 Annex B).
  t.ok(leg.mos < cleanLeg.mos - 0.5, `MOS ${leg.mos} below the clean call's ${cleanLeg.mos}`);

  // /metrics: one observation per carrier leg of the two ended calls, one of them in the bucket below 4.
  const metrics = await (await fetch(`${r.gw.base}/metrics`)).text();
  t.match(metrics, /^vgw_call_mos_count\{leg="carrier"\} 2$/m, 'MOS histogram by leg');
  t.match(metrics, /^vgw_call_mos_bucket\{le="4",leg="carrier"\} 1$/m, 'the lossy call under MOS 4');
  t.match(metrics, /^vgw_call_packet_loss_ratio_count\{leg="carrier"\} 2$/m);
  t.match(metrics, /^vgw_call_jitter_seconds_count\{leg="carrier"\} 2$/m);
});
