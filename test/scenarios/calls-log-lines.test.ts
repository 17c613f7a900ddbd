/**
 * docs/RELIABILITY.md "Reading the logs": an answered call logs one line each for its answer, the
 * agent connecting, hold, unhold and the agent's release, every one with the call's id (and only
 * once: the logger's child carries it). A sandbox call to a fake WebSocket agent.
 */
import t from 'tap';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';

t.test('call log lines: answer, agent connected, hold, unhold, agent released, each once with the call id', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true', logLevel: 'info' });
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  const id = placed.body.id;
  const linesOf = (msg: string) => gw.logs.filter((l) => l.msg === msg && l.call_id === id);
  await waitFor('the agent connected', () => linesOf('agent connected').length > 0);
  t.equal((await gw.api('POST', `/v1/calls/${id}/hold`)).status, 200);
  t.equal((await gw.api('POST', `/v1/calls/${id}/unhold`)).status, 200);
  t.equal((await gw.api('POST', `/v1/calls/${id}/hangup`)).status, 200);
  await waitFor('the call ended', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'ended');
  for (const msg of ['call answered', 'agent connected', 'call held', 'call taken off hold', 'agent released', 'call ended']) {
    t.equal(linesOf(msg).length, 1, `one "${msg}" line with the call id`);
  }
  t.match(linesOf('agent connected')[0], { agent: 'websocket', connect_ms: Number });
  t.match(linesOf('call answered')[0], { direction: 'outbound', carrier: 'sandbox' });
  const answered = gw.logs.findIndex((l) => l.msg === 'call answered' && l.call_id === id);
  const released = gw.logs.findIndex((l) => l.msg === 'agent released' && l.call_id === id);
  t.ok(answered < released, 'in the order they happened');
});
