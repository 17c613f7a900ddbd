/**
 * Outbound calls end to end through the whole product: POST /v1/calls over HTTP, our SIP stack
 * dialling the built-in sandbox far end over loopback SIP and RTP, and a test agent on a real
 * WebSocket speaking the agent protocol (docs/API.md "Calls" and docs/API.md "Agent WebSocket protocol").
 */
import t, { type Test } from 'tap';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { mulawTone, toneLevel } from '../support/audio-probe.js';

async function agent(t: Test): Promise<FakeCustomAgent> {
  const a = await FakeCustomAgent.start();
  t.teardown(() => a.core.close());
  return a;
}

const ALLOW_LOCAL_AGENTS = 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 2';

async function callState(gw: TestGateway, id: string, state: string): Promise<ApiBody> {
  return waitFor(`call ${id} ${state}`, async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`);
    return r.body.state === state ? r.body : undefined;
  });
}

t.test('docs/API.md "Calls" and docs/API.md "Agent WebSocket protocol": a sandbox call rings, answers, talks both ways with the agent, holds, and hangs up', async (t) => {
  const gw = await startTestGateway(t, { yaml: ALLOW_LOCAL_AGENTS });
  const bot = await agent(t);
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url, record: true });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  t.equal(placed.body.state, 'initiated', 'answered at once with the call in state initiated');
  const id = placed.body.id;

  const active = await callState(gw, id, 'active');
  t.ok(active.answered_at, 'answered_at set once the far end answered');
  const listed = await gw.api('GET', '/v1/calls');
  t.ok(listed.body.data.some((c: { id: string }) => c.id === id), 'the live list holds the call');

  await waitFor("the agent's start message", () => bot.events().includes('start'));
  const start = bot.core.jsonMessages().find((m) => m.event === 'start') as { start: { customParameters: Record<string, string>; mediaFormat: unknown } };
  t.equal(start.start.customParameters.call_id, id, 'start names the call (docs/API.md "Agent WebSocket protocol")');
  t.same(start.start.mediaFormat, { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });

  // The sandbox plays its announcement on answer (the agent, connected on answer, may hear part of
  // it), then echoes: what the agent says comes back to it through the far end.
  const tone = mulawTone(1000, 1000);
  for (let i = 0; i < tone.length; i += 160) bot.sendAudio(tone.subarray(i, i + 160));
  await waitFor('the 1 kHz tone at the agent', () => toneLevel(bot.receivedAudio().subarray(-8000), 1000) > 1000);
  t.pass('agent audio went out to the far end and came back in its echo');

  const held = await gw.api('POST', `/v1/calls/${id}/hold`);
  t.equal(held.status, 200, JSON.stringify(held.body));
  t.equal(held.body.on_hold, true, 'hold is a flag of the active call');
  t.equal(held.body.state, 'active');
  await waitFor("the agent's hold event", () => bot.events().includes('hold'));
  const mediaBefore = bot.events().filter((e) => e === 'media').length;
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(bot.events().filter((e) => e === 'media').length, mediaBefore, 'no caller audio reaches the agent while held');
  const detail = await gw.api('GET', `/v1/calls/${id}`);
  t.equal(detail.body.session?.recording?.paused, true, 'the recording is paused while held');

  const unheld = await gw.api('POST', `/v1/calls/${id}/unhold`);
  t.equal(unheld.body.on_hold, false);
  await waitFor("the agent's unhold event", () => bot.events().includes('unhold'));
  await waitFor('caller audio at the agent again', () => bot.events().filter((e) => e === 'media').length > mediaBefore + 5);
  t.pass('caller audio flows again after unhold');

  const hung = await gw.api('POST', `/v1/calls/${id}/hangup`);
  t.equal(hung.status, 200);
  t.equal(hung.body.state, 'ended');
  t.equal(hung.body.end_reason, 'completed');
  await waitFor('the agent socket closed', () => bot.core.closedWith !== undefined);
  t.ok(bot.events().includes('stop') || bot.core.closedWith !== undefined, 'the agent socket is closed when the call ends');

  const ended = await waitFor('recording attached', async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`);
    return r.body.recording.available ? r.body : undefined;
  });
  t.equal(ended.cdr?.hangup_by, 'api');
  t.equal(ended.cdr?.end_reason, 'completed');
  t.ok((ended.cdr?.billable_s ?? 0) >= 1, 'billable from answer to end');
  t.equal(ended.session, null, 'no live session once ended');
  const recording = await fetch(`${gw.base}/v1/calls/${id}/recording`, { headers: { authorization: `Bearer ${gw.sandboxKey}` } });
  t.equal(recording.status, 200);
  t.equal(recording.headers.get('content-type'), 'audio/wav');
  t.ok((await recording.arrayBuffer()).byteLength > 44 + 8000, 'a stereo WAV with audio in it');
});

t.test('docs/API.md "Calls": failed attempts end with end_reason and sip_status', async (t) => {
  const gw = await startTestGateway(t, { yaml: ALLOW_LOCAL_AGENTS });
  const bot = await agent(t);
  const cases: [string, string, number | null][] = [
    ['+15005550486', 'busy', 486], ['+15005550404', 'not_found', 404], ['+15005550503', 'unavailable', 503],
    ['+15005550480', 'no_answer', 480], ['+15005550603', 'declined', 603], ['+15005550408', 'no_answer', 487],
  ];
  for (const [to, reason, status] of cases) {
    const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to, carrier: 'sandbox', agent_ws_url: bot.url });
    const ended = await callState(gw, placed.body.id, 'ended');
    t.equal(ended.end_reason, reason, `${to} ends ${reason}`);
    t.equal(ended.sip_status, status, `${to} with SIP status ${status}`);
    t.equal(ended.answered_at, null);
    t.equal(ended.cdr?.billable_s, 0, 'nothing billable');
  }
  t.equal(bot.core.frames.length, 0, 'no agent was connected for calls that never answered');
});

t.test('docs/API.md "Calls": an unreachable agent ends the answered call agent_unreachable', async (t) => {
  const gw = await startTestGateway(t, { yaml: ALLOW_LOCAL_AGENTS });
  const gone = await FakeCustomAgent.start();
  const url = gone.url;
  await gone.core.close();
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: url });
  const ended = await callState(gw, placed.body.id, 'ended');
  t.equal(ended.end_reason, 'agent_unreachable');
  t.ok(ended.answered_at, 'the callee had answered');
  t.equal(ended.cdr?.hangup_by, 'gateway');
});

t.test('docs/API.md "Agent WebSocket protocol": the agent closing its socket hangs up the call', async (t) => {
  const gw = await startTestGateway(t, { yaml: ALLOW_LOCAL_AGENTS });
  const bot = await agent(t);
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  await waitFor("the agent's start message", () => bot.events().includes('start'));
  bot.core.closeSocket(1000, 'goodbye');
  const ended = await callState(gw, placed.body.id, 'ended');
  t.equal(ended.end_reason, 'completed');
  t.equal(ended.cdr?.hangup_by, 'agent');
});

t.test('docs/API.md "Calls": blind transfer bridges the far end to the target and releases the agent', async (t) => {
  const gw = await startTestGateway(t, { yaml: ALLOW_LOCAL_AGENTS });
  const bot = await agent(t);
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  await callState(gw, placed.body.id, 'active');
  await waitFor("the agent's start message", () => bot.events().includes('start'));
  const transferred = await gw.api('POST', '/v1/calls/transfer', { call_control_id: placed.body.call_control_id, to: '+15550142' });
  t.equal(transferred.status, 200, JSON.stringify(transferred.body));
  t.equal(transferred.body.transfer?.to, '+15550142');
  t.equal(transferred.body.transfer?.state, 'dialing');
  const connected = await waitFor('transfer connected', async () => {
    const r = await gw.api('GET', `/v1/calls/${placed.body.id}`);
    return r.body.transfer?.state === 'connected' ? r.body : undefined;
  });
  t.equal(connected.state, 'active', 'the call goes on between the far end and the target');
  await waitFor('the agent socket closed', () => bot.core.closedWith !== undefined);
  t.pass('the agent leg is released once the target answered');
  const again = await gw.api('POST', '/v1/calls/transfer', { call_control_id: placed.body.call_control_id, to: '+15550143' });
  t.equal(again.status, 409, 'one transfer at a time');
  t.equal(again.body.code, 'transfer_in_progress', 'the code says why: the call is active, its transfer is under way');
  const hung = await gw.api('POST', `/v1/calls/${placed.body.id}/hangup`);
  t.equal(hung.body.state, 'ended');
  t.equal(hung.body.transfer?.state, 'connected', 'the CDR keeps the transfer trail');
});

t.test('docs/API.md "Call commands": a held call comes off hold when the transfer target answers; a second transfer is transfer_in_progress', async (t) => {
  const gw = await startTestGateway(t, { yaml: ALLOW_LOCAL_AGENTS });
  const bot = await agent(t);
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  await callState(gw, placed.body.id, 'active');
  const held = await gw.api('POST', `/v1/calls/${placed.body.id}/hold`);
  t.equal(held.body.on_hold, true, held.status === 200 ? 'held' : JSON.stringify(held.body));
  const first = await gw.api('POST', '/v1/calls/transfer', { call_control_id: placed.body.call_control_id, to: '+15550142' });
  t.equal(first.status, 200, JSON.stringify(first.body));
  const second = await gw.api('POST', '/v1/calls/transfer', { call_control_id: placed.body.call_control_id, to: '+15550143' });
  t.equal(second.status, 409);
  t.equal(second.body.code, 'transfer_in_progress', 'while the first transfer is dialling');
  const connected = await waitFor('transfer connected', async () => {
    const r = await gw.api('GET', `/v1/calls/${placed.body.id}`);
    return r.body.transfer?.state === 'connected' ? r.body : undefined;
  });
  t.equal(connected.on_hold, false, 'the far end and the target can hear each other');
  t.equal(connected.transfer?.to, '+15550142', 'the second request changed nothing');
  await gw.api('POST', `/v1/calls/${placed.body.id}/hangup`);
});

t.test('docs/API.md "Errors": sandbox keys only on the sandbox carrier, live keys never on it', async (t) => {
  const gw = await startTestGateway(t, { yaml: ALLOW_LOCAL_AGENTS });
  const bot = await agent(t);
  const live = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url }, { key: gw.liveKey });
  t.equal(live.status, 403);
  t.equal(live.body.code, 'sandbox_mismatch');
});
