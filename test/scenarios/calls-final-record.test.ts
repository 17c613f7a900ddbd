/**
 * The rule of docs/API.md "When a call reads as ended": a call reaches `ended` only once its
 * CDR, recording and transcripts are final, so a client that polls until `ended` finds the
 * recording in that same read. Recorded sandbox calls ended by their agent (the WebSocket
 * closing), through the whole product over loopback SIP and RTP.
 */
import t, { type Test } from 'tap';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';

const CALLS = 4;

async function agentEndedCall(t: Test, gw: TestGateway, n: number): Promise<{ first: ApiBody; recordingStatus: number }> {
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: `+1555019${n}`, carrier: 'sandbox', agent_ws_url: bot.url, record: true });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await waitFor("the agent's start message", () => bot.events().includes('start'));
  // Some audio in the recording first.
  await new Promise((resolve) => setTimeout(resolve, 300));
  bot.core.closeSocket(1000, 'goodbye');
  // Poll as a client would, as fast as the API answers, and keep the first read that says ended.
  const first = await waitFor(`call ${placed.body.id} ended`, async () => {
    const r = await gw.api('GET', `/v1/calls/${placed.body.id}`);
    return r.body.state === 'ended' ? r.body : undefined;
  });
  const recording = await fetch(`${gw.base}/v1/calls/${placed.body.id}/recording`, { headers: { authorization: `Bearer ${gw.sandboxKey}` } });
  await recording.arrayBuffer();
  return { first, recordingStatus: recording.status };
}

t.test('docs/API.md, when a call reads as ended: the first read that shows an agent-ended call `ended` also shows its recording, and the recording is served', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true' });
  const results = await Promise.all(Array.from({ length: CALLS }, (_, n) => agentEndedCall(t, gw, n)));
  for (const [n, { first, recordingStatus }] of results.entries()) {
    t.equal(first.cdr?.hangup_by, 'agent', `call ${n} was ended by its agent`);
    t.same(first.recording, { available: true }, `call ${n}: recording.available in the same read that first shows ended`);
    t.equal(recordingStatus, 200, `call ${n}: GET /recording right after`);
  }
});
