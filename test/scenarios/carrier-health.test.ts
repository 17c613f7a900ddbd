/** docs/CONFIGURATION.md "Operator surface" carriers, operator side: OPTIONS keep-alives (RFC 3261 11) and call metrics on /metrics. */
import t from 'tap';
import { createSocket } from 'node:dgram';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';
import { startSipPhoneUa } from '../support/sip-phone.js';

async function metricsText(base: string): Promise<string> {
  return (await fetch(`${base}/metrics`)).text();
}

t.test('RFC 3261 11: a carrier answering OPTIONS is up, one that never answers is down, both on /metrics', async (t) => {
  const alive = await startSipPhoneUa(t);
  // A UDP port that swallows everything: the pings time out (Timer F).
  const silent = createSocket('udp4');
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  t.teardown(() => silent.close());
  const gw = await startTestGateway(t, {
    carriers: `carriers:
  - name: alive
    outbound:
      uri: sip:127.0.0.1:${alive.port}
    options_ping_s: 1
  - name: silent
    outbound:
      uri: sip:127.0.0.1:${silent.address().port}
    options_ping_s: 1
`,
  });
  await waitFor('alive carrier up', async () => /vgw_carrier_up\{carrier="alive"\} 1/.test(await metricsText(gw.base)));
  t.pass('the answering carrier is reported up');
  await waitFor('silent carrier down', async () => /vgw_carrier_up\{carrier="silent"\} 0/.test(await metricsText(gw.base)), 20_000);
  t.match(await metricsText(gw.base), /vgw_carrier_options_status\{carrier="silent"\} 408/, 'with the 408 of its timed-out transaction');
});

t.test('calls on /metrics: live calls by direction and ended calls by end reason', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true' });
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15005550486', carrier: 'sandbox', agent_ws_url: 'ws://127.0.0.1:9/agent' });
  t.equal(placed.status, 200);
  await waitFor('busy call counted', async () => /vgw_calls_ended_total\{direction="outbound",end_reason="busy"\} 1/.test(await metricsText(gw.base)));
  t.pass('the busy attempt is counted by its end reason');
});
