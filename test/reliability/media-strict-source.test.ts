/**
 * @module The RTP bleed (CVE-2017-14099's class) against a whole gateway call: during an answered
 * call a third host (127.0.0.2) sends an RTP stream in sequence under a new SSRC to the carrier
 * leg's media port. docs/SECURITY.md "Media sources": it gets nothing, the agent hears nothing of
 * it, the call's media keeps going to the carrier, and `vgw_rtp_packets_refused_total` counts it.
 */
import t from 'tap';
import { waitFor } from '../support/gateway-harness.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { mulawTone } from '../support/audio-probe.js';
import { startSipPhoneUa } from '../support/sip-phone.js';
import { callWithBareRtp, legitFramesAtAgent } from './support/media-gateway-call.js';
import { DID, freeRtpRange, startMediaGateway } from './support/media-gateway.js';
import { StreamEnd } from './support/media-stream-ends.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const STRANGER_PACKETS = 40;

t.test('CVE-2017-14099 class (RTP bleed), strict source: a third host sending a new SSRC in sequence to an answered call gets no audio, and is counted', async (t) => {
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const gw = await startMediaGateway(t, { rtp: await freeRtpRange(8), agentUrl: bot.url });
  const carrier = await StreamEnd.open(t);
  const stranger = await StreamEnd.open(t, '127.0.0.2');
  const ua = await startSipPhoneUa(t);
  const { session, gatewayPort } = await callWithBareRtp(ua, `sip:${DID}@127.0.0.1:${gw.gateway.sip.udpPort}`, carrier);
  await waitFor("the agent's start message", () => bot.events().includes('start'));
  // The agent talks all along, so the gateway streams its audio to the carrier.
  const tone = mulawTone(440, 3000);
  for (let i = 0; i < tone.length; i += 160) bot.sendAudio(tone.subarray(i, i + 160));
  // The carrier's first packet waits until the agent side is attached, as in media-hostile.test.ts.
  await waitFor('the agent side attached', async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: gw.liveKey });
    const id = r.body.data[0]?.id;
    const detail = id === undefined ? null : await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
    return (detail?.body.session as { agent?: { agent_input?: unknown } } | null)?.agent?.agent_input ? id : undefined;
  });
  const ssrc = 0x5151;
  await carrier.sendLegit(gatewayPort, 0, ssrc);
  await waitFor('frame 0 at the agent', () => legitFramesAtAgent(bot).indices.length > 0);
  await waitFor("the agent's audio at the carrier", () => carrier.otherReceived > 0);

  // The attack: a stream under a new SSRC with consecutive sequence numbers, 20 ms apart as a real one.
  for (let i = 0; i < STRANGER_PACKETS; i++) {
    await stranger.sendLegit(gatewayPort, 1000 + i, 0x6666);
    if (i < 10) await carrier.sendLegit(gatewayPort, 1 + i, ssrc);
    await sleep(20);
  }
  const atCarrierAfterAttack = carrier.otherReceived;
  await waitFor('frames 0 to 10 at the agent', () => legitFramesAtAgent(bot).indices.length >= 11);
  await waitFor("the agent's audio still at the carrier", () => carrier.otherReceived > atCarrierAfterAttack + 5);

  t.equal(stranger.otherReceived + stranger.legitReceived + stranger.rtcpReceived, 0, 'the third host received nothing: no audio, no RTCP');
  const atAgent = legitFramesAtAgent(bot).indices;
  t.same(atAgent, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "the agent heard the carrier's frames and none of the stranger's");
  const metrics = await (await fetch(`${gw.base}/metrics`)).text();
  const refused = /^vgw_rtp_packets_refused_total\{reason="source"\} (\d+)$/m.exec(metrics)?.[1];
  t.equal(Number(refused), STRANGER_PACKETS, 'vgw_rtp_packets_refused_total{reason="source"} counts every stranger packet');
  await session.bye();
});
