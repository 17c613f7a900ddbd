/**
 * @module The drain over real SIP (docs/RELIABILITY.md, "Drain"): while the gateway drains, a call
 * already up goes on, and a new INVITE gets 503 with Retry-After (RFC 3261 21.5.4, 20.33), so a
 * carrier or an edge proxy tries another node (RFC 3263 4.3) instead of this one.
 */
import t from 'tap';
import type { SipResponse } from '../../src/engine/sip/index.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { waitFor } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';
import { DID, freeRtpRange, startMediaGateway } from './support/media-gateway.js';

t.test('RFC 3261 21.5.4: an INVITE during the drain gets 503 with Retry-After, and the call already up goes on', async (t) => {
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const gw = await startMediaGateway(t, { rtp: await freeRtpRange(8), agentUrl: bot.url });
  const carrier = await startSipPhoneUa(t);
  const target = `sip:${DID}@127.0.0.1:${gw.gateway.sip.udpPort}`;
  const invite = async () => carrier.ua.invite({ target, from: 'sip:+15557770001@127.0.0.1', sdp: (await carrier.phone()).offer });

  const { session } = await answered(await invite());
  const live = await waitFor('the inbound call active', async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: gw.liveKey });
    return r.body.data.find((c) => c.state === 'active');
  });

  const stopped = gw.gateway.stop('drain test');
  const refusal = await new Promise<{ status: number; response: SipResponse | undefined }>((resolve) => {
    void invite().then((call) => call.events.on('failed', (status, _reason, response) => resolve({ status, response })));
  });
  t.equal(refusal.status, 503, 'the new INVITE is refused with 503 Service Unavailable');
  t.equal(refusal.response?.headers.get('Retry-After'), '30', 'with Retry-After: the drain time (shutdown.drain_seconds)');

  const still = await gw.api('GET', `/v1/calls/${live.id}`, undefined, { key: gw.liveKey });
  t.equal(still.body.state, 'active', 'the call that was up before the drain is still up');
  await session.bye();
  await stopped;
  t.pass('the drain ended once the last call did');
});
