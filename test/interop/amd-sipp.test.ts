/**
 * Answering-machine detection end to end (docs/API.md "Answering-machine detection"): an outbound
 * call placed with `machine_detection: async` to a sipp callee whose side of the call is a
 * recording played with rtp_stream: a person saying "Hello?" and waiting, or a voicemail greeting
 * made with flite. The agent is connected at the answer; the result reaches it as the `amd`
 * event and shows on the call.
 */
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../support/gateway-harness.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { startClipCallee } from '../support/amd-callee-rig.js';

const run = promisify(execFile);

/** `text` spoken by flite, after `leadS` of silence and followed by `tailS`, as raw µ-law 8 kHz. */
async function clip(dir: string, name: string, text: string, leadS: number, tailS: number): Promise<string> {
  const speech = join(dir, `${name}-speech.wav`);
  const out = join(dir, `${name}.ul`);
  await run('flite', ['-voice', 'slt', '-t', text, '-o', speech]);
  await run('sox', [speech, '-r', '8000', '-c', '1', '-t', 'raw', '-e', 'u-law', out, 'pad', String(leadS), String(tailS)]);
  return out;
}

async function amdCall(t: Test, clipFile: string): Promise<{ event: Record<string, unknown>; call: Record<string, unknown> }> {
  const { gw, bot } = await startClipCallee(t, clipFile);
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'far', agent_ws_url: bot.url, machine_detection: 'async' }, { key: gw.liveKey });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await bot.core.until(() => bot.events().includes('start'), 'the agent connected at the answer');
  await bot.core.until(() => bot.events().includes('amd'), 'the amd event', 20_000);
  const event = bot.core.jsonMessages().find((m) => m.event === 'amd')!;
  const call = await waitFor('the result on the call', async () => {
    const r = await gw.api('GET', `/v1/calls/${placed.body.id}`, undefined, { key: gw.liveKey });
    return r.body.amd ? r.body : undefined;
  });
  await gw.api('POST', `/v1/calls/${placed.body.id}/hangup`, undefined, { key: gw.liveKey });
  return { event, call };
}

t.test('docs/API.md "Answering-machine detection": async, a person answering "Hello?" is human', async (t) => {
  if (!needPeer(t, 'sipp', 'flite', 'sox')) return;
  const file = await clip(tempWorkdir(t), 'human', 'Hello?', 0.4, 6);
  const { event, call } = await amdCall(t, file);
  t.match(event, { amd: { result: 'human', decided_after_ms: Number } });
  t.match(call.amd, { result: 'human' });
  t.ok((call.amd as { decided_after_ms: number }).decided_after_ms < 4000, 'decided within seconds of the answer');
});

t.test('docs/API.md "Answering-machine detection": async, a voicemail greeting is machine', async (t) => {
  if (!needPeer(t, 'sipp', 'flite', 'sox')) return;
  const file = await clip(tempWorkdir(t), 'machine', 'Hi, you have reached the voicemail of John Smith. I cannot take your call right now. Please leave a message after the tone.', 0.3, 2);
  const { event, call } = await amdCall(t, file);
  t.match(event, { amd: { result: 'machine' } });
  t.match(call.amd, { result: 'machine' });
});
