/**
 * `machine_detection: hold_until_result` end to end (docs/API.md "Answering-machine detection"):
 * outbound calls to a sipp callee whose side of the call is a recording played with rtp_stream (a
 * person saying "Hello?", a voicemail greeting made with flite, the same greeting ending in a
 * 1 kHz beep). No agent is reached before the detector decided: a person is connected once heard,
 * a machine hung up (`on_machine: hangup`) never reaches the agent, and a machine connected with
 * `wait_for_beep` reaches it only after its beep.
 */
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { waitFor, type TestGateway } from '../support/gateway-harness.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { startClipCallee } from '../support/amd-callee-rig.js';

const run = promisify(execFile);
const GREETING = 'Hi, you have reached the voicemail of John Smith. I cannot take your call right now. Please leave a message after the tone.';

/** `text` spoken by flite after `leadS` of silence, then a 1 kHz beep of 0.5 s after 0.4 s when asked, then `tailS`, as raw µ-law 8 kHz. */
async function clip(dir: string, text: string, o: { leadS: number; tailS: number; beep?: boolean }): Promise<string> {
  const speech = join(dir, 'speech.wav');
  const voice = join(dir, 'voice.wav');
  const out = join(dir, 'clip.ul');
  await run('flite', ['-voice', 'slt', '-t', text, '-o', speech]);
  await run('sox', [speech, '-r', '8000', '-c', '1', '-b', '16', voice, 'pad', String(o.leadS), o.beep ? '0.4' : '0']);
  const parts = [voice];
  if (o.beep) {
    const beep = join(dir, 'beep.wav');
    await run('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', beep, 'synth', '0.5', 'sine', '1000', 'vol', '0.5']);
    parts.push(beep);
  }
  await run('sox', [...parts, '-t', 'raw', '-e', 'u-law', out, 'pad', '0', String(o.tailS)]);
  return out;
}

interface HoldCall {
  gw: TestGateway;
  bot: FakeCustomAgent;
  id: string;
  /** When the agent's WebSocket was opened (ms since the epoch), if it was. */
  connectedAt: () => number | null;
}

async function holdCall(t: Test, clipFile: string, options: Record<string, unknown>): Promise<HoldCall> {
  const { gw, bot } = await startClipCallee(t, clipFile);
  let connectedAt: number | null = null;
  bot.core.onConnection = () => { connectedAt ??= Date.now(); };
  const placed = await gw.api('POST', '/v1/calls', {
    from: '+15550100', to: '+15550199', carrier: 'far', agent_ws_url: bot.url, machine_detection: 'hold_until_result', ...options,
  }, { key: gw.liveKey });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  return { gw, bot, id: String(placed.body.id), connectedAt: () => connectedAt };
}

interface AmdCall { state: string; answered_at: string; amd: { result: string; decided_after_ms: number; beep_at_ms: number | null } }

const getCall = async (c: HoldCall) => (await c.gw.api('GET', `/v1/calls/${c.id}`, undefined, { key: c.gw.liveKey })).body;
const answeredCall = async (c: HoldCall) => (await getCall(c)) as unknown as AmdCall;

t.test('docs/API.md "Answering-machine detection": hold_until_result connects a person only once the detector heard one', async (t) => {
  if (!needPeer(t, 'sipp', 'flite', 'sox')) return;
  const file = await clip(tempWorkdir(t), 'Hello?', { leadS: 0.4, tailS: 6 });
  const c = await holdCall(t, file, {});
  await c.bot.core.until(() => c.bot.events().includes('amd'), 'the amd event once connected', 20_000);
  const call = await answeredCall(c);
  t.match(call.amd, { result: 'human' }, 'the result on the call');
  t.equal(call.state, 'active');
  t.match(c.bot.core.jsonMessages().find((m) => m.event === 'amd'), { amd: { result: 'human', decided_after_ms: call.amd.decided_after_ms } });
  t.same(c.bot.events().slice(0, 2), ['connected', 'start'], 'the agent got its start before the amd event');
  // No agent before the decision: the socket opened no sooner than decided_after_ms after the answer.
  t.ok(c.connectedAt()! - Date.parse(call.answered_at) >= call.amd.decided_after_ms - 20,
    `agent connected ${c.connectedAt()! - Date.parse(call.answered_at)} ms after the answer, decided after ${call.amd.decided_after_ms} ms`);
  await c.gw.api('POST', `/v1/calls/${c.id}/hangup`, undefined, { key: c.gw.liveKey });
});

t.test('docs/API.md "Answering-machine detection": hold_until_result with on_machine hangup ends a voicemail call, no agent ever connected', async (t) => {
  if (!needPeer(t, 'sipp', 'flite', 'sox')) return;
  const file = await clip(tempWorkdir(t), GREETING, { leadS: 0.3, tailS: 4 });
  const c = await holdCall(t, file, { on_machine: 'hangup' });
  const call = await waitFor('the call ended', async () => {
    const body = await getCall(c);
    return body.state === 'ended' && body.cdr ? body : undefined;
  }, 20_000);
  t.match(call, { end_reason: 'machine_detected', cdr: { hangup_by: 'gateway' }, amd: { result: 'machine' } });
  t.equal(c.connectedAt(), null, 'the agent WebSocket was never opened');
  t.same(c.bot.core.frames, [], 'the agent received nothing');
});

t.test('docs/API.md "Answering-machine detection": hold_until_result, on_machine connect with wait_for_beep connects the agent after the beep', async (t) => {
  if (!needPeer(t, 'sipp', 'flite', 'sox')) return;
  const file = await clip(tempWorkdir(t), GREETING, { leadS: 0.3, tailS: 4, beep: true });
  const c = await holdCall(t, file, { on_machine: 'connect', wait_for_beep: true });
  await c.bot.core.until(() => c.bot.events().includes('amd'), 'the amd event once connected', 30_000);
  const call = await answeredCall(c);
  t.equal(call.state, 'active');
  t.match(call.amd, { result: 'machine', beep_at_ms: Number }, 'a machine, its beep dated');
  t.ok(call.amd.beep_at_ms! > call.amd.decided_after_ms, 'the beep came after the machine decision');
  t.match(c.bot.core.jsonMessages().find((m) => m.event === 'amd'), { amd: { result: 'machine', beep_at_ms: call.amd.beep_at_ms } });
  t.ok(c.connectedAt()! - Date.parse(call.answered_at) >= call.amd.beep_at_ms!,
    `agent connected ${c.connectedAt()! - Date.parse(call.answered_at)} ms after the answer, the beep at ${call.amd.beep_at_ms} ms`);
  await c.gw.api('POST', `/v1/calls/${c.id}/hangup`, undefined, { key: c.gw.liveKey });
});

t.test('docs/API.md "Answering-machine detection": a hang-up while the agent is held back ends the call and no agent is ever reached', async (t) => {
  if (!needPeer(t, 'sipp', 'flite', 'sox')) return;
  // Three seconds of silence before the greeting: the detector is still listening at the hang-up.
  const file = await clip(tempWorkdir(t), GREETING, { leadS: 3, tailS: 2 });
  const c = await holdCall(t, file, { on_machine: 'connect' });
  await waitFor('the call answered', async () => (await getCall(c)).state === 'active', 10_000);
  const hung = await c.gw.api('POST', `/v1/calls/${c.id}/hangup`, undefined, { key: c.gw.liveKey });
  t.equal(hung.status, 200, JSON.stringify(hung.body));
  const call = await waitFor('the call ended', async () => {
    const body = await getCall(c);
    return body.state === 'ended' && body.cdr ? body : undefined;
  }, 10_000);
  t.match(call, { cdr: { hangup_by: 'api' }, amd: null }, 'ended by the API before any decision');
  // Past the time the greeting would have been decided on: the detection went with the call.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  t.equal(c.connectedAt(), null, 'the agent WebSocket was never opened');
});
