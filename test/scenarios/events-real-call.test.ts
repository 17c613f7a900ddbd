/**
 * docs/EVENTS.md "Event types" end to end: a sandbox call placed over the API in a whole gateway
 * (role `all`) logs its events as it rings, answers, connects its WebSocket agent, hears a key
 * pressed (the sandbox echoes a digit sent into it), is held and hung up, `call.ended` carrying
 * the CDR, and the live stream hears them from the in-process bus as they commit.
 */
import t from 'tap';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';

interface LoggedEvent { type: string; data: { call: { id: string; cdr: unknown }; digit?: string } }

t.test('a sandbox call\'s events, in order, in the log and on the stream', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 2' });
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  let streamed = '';
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(`${gw.base}/v1/events/stream`, { headers: { authorization: `Bearer ${gw.sandboxKey}` } }, resolve);
    req.on('error', reject);
    req.end();
    t.teardown(() => req.destroy());
  });
  res.setEncoding('utf8');
  res.on('data', (c: string) => { streamed += c; });
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const id = placed.body.id;
  await waitFor('active', async () => ((await gw.api('GET', `/v1/calls/${id}`)).body.state === 'active' ? true : undefined));
  const logged = async (): Promise<LoggedEvent[]> => ((await gw.api('GET', `/v1/events?call_id=${id}&limit=50`)).body.data as unknown as LoggedEvent[]).reverse();
  await waitFor('call.agent.connected', async () => ((await logged()).some((e) => e.type === 'call.agent.connected') ? true : undefined));
  // The sandbox echoes RFC 4733 events once its announcement is over: a digit sent comes back as
  // a key the remote party pressed. Sent again each second until one is heard.
  const pressed = await waitFor('call.dtmf', async () => {
    const digit = (await logged()).find((e) => e.type === 'call.dtmf');
    if (digit) return digit;
    t.equal((await gw.api('POST', `/v1/calls/${id}/dtmf`, { digits: '5' })).status, 200);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return undefined;
  }, 15_000);
  t.match(pressed.data, { digit: '5', call: { id, state: 'active' } }, 'call.dtmf: the key and the call');
  t.equal((await gw.api('POST', `/v1/calls/${id}/hold`)).status, 200);
  t.equal((await gw.api('POST', `/v1/calls/${id}/hangup`)).status, 200);
  const log = await waitFor('call.ended in the log', async () => {
    const data = await logged();
    return data.some((e) => e.type === 'call.ended') ? data : undefined;
  });
  t.same(log.map((e) => e.type).filter((type) => type !== 'call.ringing' && type !== 'call.dtmf'), ['call.initiated', 'call.answered', 'call.agent.connected', 'call.hold', 'call.ended']);
  t.ok(log.findIndex((e) => e.type === 'call.dtmf') > log.findIndex((e) => e.type === 'call.agent.connected'), 'the digit after the agent connected');
  t.match(log.at(-1)!.data.call, { id, state: 'ended', cdr: { end_reason: String } });
  await waitFor('call.ended on the stream', () => (streamed.includes('event: call.ended') ? true : undefined));
  t.same([...streamed.matchAll(/^event: (\S+)$/gm)].map((m) => m[1]), log.map((e) => e.type), 'the stream heard the same events, in order');
});
