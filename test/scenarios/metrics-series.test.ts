/**
 * docs/API.md "Operational endpoints": the series a dashboard is built on carry what happened.
 * Live calls by direction are 0, not missing, when nothing is up; a streaming agent's connection
 * is timed by provider when it connects and counted by reason when it fails; a post-call webhook
 * delivery is counted by provider and outcome. Read from the /metrics of a gateway on loopback
 * after real calls over real sockets.
 */
import t from 'tap';
import { createServer } from 'node:net';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type TestGateway } from '../support/gateway-harness.js';
import { sample } from '../support/metrics.js';

const scrape = async (gw: TestGateway): Promise<string> => (await fetch(`${gw.base}/metrics`)).text();

/** A loopback port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

t.test('metrics series: live calls at 0, agent connections by provider, webhook outcomes', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true' });
  const idle = await scrape(gw);
  t.equal(sample(idle, 'vgw_calls_live{direction="inbound"}'), 0, 'no call: the inbound series is there, at 0');
  t.equal(sample(idle, 'vgw_calls_live{direction="outbound"}'), 0, 'no call: the outbound series is there, at 0');

  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const id = (await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url })).body.id;
  await waitFor('the call answered', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'active');
  const live = await scrape(gw);
  t.equal(sample(live, 'vgw_calls_live{direction="outbound"}'), 1, 'one outbound call live');
  // The call is active at the answer; the agent's session starts just after it.
  await waitFor('the agent connected', async () => sample(await scrape(gw), 'vgw_agent_connect_seconds_count{provider="custom"}') === 1);
  t.pass('the agent connection timed under its provider');
  t.equal((await gw.api('POST', `/v1/calls/${id}/hangup`)).status, 200);
  await waitFor('the call ended', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'ended');

  const refused = (await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: `ws://127.0.0.1:${await closedPort()}/` })).body.id;
  await waitFor('the call without an agent ended', async () => (await gw.api('GET', `/v1/calls/${refused}`)).body.state === 'ended');
  const after = await scrape(gw);
  t.equal(sample(after, 'vgw_agent_connect_failures_total{provider="custom",reason="unreachable"}'), 1, 'the refused connection counted as unreachable');
  t.equal(sample(after, 'vgw_agent_connect_seconds_count{provider="custom"}'), 1, 'and not timed as a connection');
  t.equal(sample(after, 'vgw_calls_live{direction="outbound"}'), 0, 'the series goes back to 0, still there');

  const posted = await fetch(`${gw.base}/v1/webhooks/retell`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event: 'call_analyzed', call: { call_id: 'nobody' } }) });
  t.same(await posted.json(), { status: 'ignored' }, 'a delivery for no known call is ignored');
  t.equal(sample(await scrape(gw), 'vgw_webhook_ingestions_total{provider="retell",outcome="ignored"}'), 1, 'and counted under its provider and outcome');
});
