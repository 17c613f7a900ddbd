/**
 * @module The demo's call, step by step over the control API: place, ring, answer, list, hold,
 * unhold, transfer, hang up, then the CDR and the recording on disk.
 */
import { join } from 'node:path';
import type { CallId, TenantId } from '../../src/common/ids.js';
import { recordingPathOf } from '../../src/engine/calls/index.js';
import type { DemoAgent } from './demo-agent.js';
import type { GatewayProcess } from './gateway-process.js';
import { CALL_FIELDS, DemoFailure, pick, sleep, waitFor, type ControlApi, type Json, type Narrator } from './narration.js';
import { readWavInfo } from './wav-info.js';

/** The caller id the demo calls from, and the sandbox numbers it dials (any non-reserved number answers). */
export const DEMO_NUMBERS = { from: '+15550100', to: '+15550199', transferTo: '+15550142' } as const;

export interface DemoContext {
  narrator: Narrator;
  api: ControlApi;
  gateway: GatewayProcess;
  agent: DemoAgent;
}

export interface PlacedCall {
  id: string;
  callControlId: string;
}

const detailOf = async (ctx: DemoContext, id: string): Promise<Json> => (await ctx.api.request('GET', `/v1/calls/${id}`)).body;

export async function placeCall(ctx: DemoContext): Promise<PlacedCall> {
  ctx.narrator.step('Place a sandbox call',
    `POST /v1/calls dials ${DEMO_NUMBERS.to} over the sandbox carrier: a simulated far end reached over real SIP\n` +
    'and RTP on loopback. When it answers, the gateway connects the call to the agent\'s WebSocket. record: true.');
  const call = await ctx.api.show('POST', '/v1/calls', CALL_FIELDS, {
    from: DEMO_NUMBERS.from, to: DEMO_NUMBERS.to, carrier: 'sandbox', agent_ws_url: ctx.agent.url, record: true,
  });
  if (call.state !== 'initiated') throw new DemoFailure(`a new call should be initiated, it is ${String(call.state)}`);
  return { id: String(call.id), callControlId: String(call.call_control_id) };
}

export async function awaitAnswer(ctx: DemoContext, call: PlacedCall): Promise<void> {
  ctx.narrator.step('Ringing, then answered',
    'The far end answers 180 Ringing, then 200 OK after its ring time (1 s). GET /v1/calls/{id} follows the state.');
  let last = 'initiated';
  const answered = await waitFor('the call to be answered', async () => {
    const detail = await detailOf(ctx, call.id);
    const state = String(detail.state);
    if (state !== last) ctx.narrator.say(`state: ${last} -> ${state}`);
    last = state;
    if (state === 'ended') throw new DemoFailure(`the call ended before it was answered: ${String(detail.end_reason)} (SIP ${String(detail.sip_status)})`);
    return state === 'active' ? detail : undefined;
  });
  const session = (answered.session ?? {}) as { remote?: Json; agent?: Json };
  ctx.narrator.exchange(`GET /v1/calls/${call.id}`, 200, {
    state: answered.state, answered_at: answered.answered_at,
    session: { remote: pick(session.remote ?? {}, ['codec', 'local_rtp_port', 'remote_rtp']), agent: pick(session.agent ?? {}, ['connected', 'codec', 'agent_input']) },
  });
  ctx.narrator.say('The agent greets the caller; the sandbox plays its own announcement, then echoes.');
  await ctx.agent.until('start');
  await ctx.agent.until('mark');
  await sleep(1500);
}

export async function showLiveList(ctx: DemoContext): Promise<void> {
  ctx.narrator.step('The live list', 'GET /v1/calls lists the tenant\'s calls that have not ended, newest first.');
  const page = (await ctx.api.request('GET', '/v1/calls')).body;
  const data = (page.data as Json[]).map((c) => ({ id: c.id, state: c.state, on_hold: c.on_hold, to: c.to }));
  ctx.narrator.exchange('GET /v1/calls', 200, { data, has_more: page.has_more });
}

export async function hold(ctx: DemoContext, call: PlacedCall): Promise<void> {
  ctx.narrator.step('Hold',
    'Both legs are muted and the recording pauses. The call stays active with on_hold: true,\n' +
    'and the agent gets a `hold` event and no caller audio until unhold.');
  const held = await ctx.api.show('POST', `/v1/calls/${call.id}/hold`, ['state', 'on_hold']);
  if (held.on_hold !== true) throw new DemoFailure('hold answered without on_hold: true');
  await ctx.agent.until('hold');
  const detail = await detailOf(ctx, call.id);
  const session = (detail.session ?? {}) as Json;
  ctx.narrator.exchange(`GET /v1/calls/${call.id}`, 200, { on_hold: detail.on_hold, session: { recording: session.recording } });
  await sleep(1500);
}

export async function unhold(ctx: DemoContext, call: PlacedCall): Promise<void> {
  ctx.narrator.step('Unhold', 'Audio flows again: the agent gets `unhold` and echoes what it hears once more.');
  const unheld = await ctx.api.show('POST', `/v1/calls/${call.id}/unhold`, ['state', 'on_hold']);
  if (unheld.on_hold !== false) throw new DemoFailure('unhold answered without on_hold: false');
  await ctx.agent.until('unhold');
  await sleep(1500);
}

export async function transfer(ctx: DemoContext, call: PlacedCall): Promise<void> {
  ctx.narrator.step('Transfer',
    `POST /v1/calls/transfer hands the far end to ${DEMO_NUMBERS.transferTo}, another sandbox number. The gateway dials it\n` +
    'and, once it answers, bridges the two and releases the agent (which gets `stop`).');
  const started = await ctx.api.show('POST', '/v1/calls/transfer', ['id', 'state', 'transfer'], { call_control_id: call.callControlId, to: DEMO_NUMBERS.transferTo });
  if (started.transfer === null) throw new DemoFailure('the transfer answer has no transfer');
  const connected = await waitFor('the transfer to connect', async () => {
    const detail = await detailOf(ctx, call.id);
    const t = detail.transfer as { state: string } | null;
    if (t?.state === 'failed' || detail.state === 'ended') throw new DemoFailure(`the transfer failed: ${JSON.stringify(detail.transfer)} (${String(detail.end_reason)})`);
    return t?.state === 'connected' ? detail : undefined;
  });
  ctx.narrator.exchange(`GET /v1/calls/${call.id}`, 200, { state: connected.state, transfer: connected.transfer });
  await ctx.agent.until('close');
  ctx.narrator.say('The far end now talks with the transfer target; the agent is out of the call.');
  await sleep(1000);
}

export async function hangup(ctx: DemoContext, call: PlacedCall): Promise<void> {
  ctx.narrator.step('Hang up', 'POST /v1/calls/{id}/hangup sends BYE to both parties and ends the call.');
  const ended = await ctx.api.show('POST', `/v1/calls/${call.id}/hangup`, ['state', 'end_reason', 'transfer']);
  if (ended.state !== 'ended') throw new DemoFailure(`hangup answered with state ${String(ended.state)}`);
}

export async function showCdr(ctx: DemoContext, call: PlacedCall): Promise<void> {
  ctx.narrator.step('The call detail record', 'Once the call has ended, GET /v1/calls/{id} carries its CDR and says whether a recording exists.');
  const detail = await waitFor('the recording to be stored', async () => {
    const d = await detailOf(ctx, call.id);
    return (d.recording as { available: boolean }).available ? d : undefined;
  });
  ctx.narrator.exchange(`GET /v1/calls/${call.id}`, 200, { state: detail.state, cdr: detail.cdr, recording: detail.recording });
  if (detail.cdr === null) throw new DemoFailure('an ended call has no CDR');
}

export async function showRecording(ctx: DemoContext, call: PlacedCall, kept: boolean): Promise<void> {
  ctx.narrator.step('The recording', 'A stereo WAV in the data folder: the far end on the left channel, the agent on the right.\nHold is left out of it.');
  const tenant = (await ctx.api.request('GET', '/v1/tenant')).body;
  // `recordings.dir` is `<data_dir>/recordings` unless configured (docs/CONFIGURATION.md).
  const path = join(ctx.gateway.dataDir, 'recordings', recordingPathOf({ tenant_id: String(tenant.id) as TenantId, id: call.id as CallId }));
  const info = readWavInfo(path);
  ctx.narrator.say(`recording path: ${path}`);
  ctx.narrator.say(`size: ${info.bytes} bytes; ${info.channels} channels, ${info.sampleRate} Hz, ${info.bitsPerSample}-bit; duration ${info.durationS.toFixed(2)} s`);
  const served = await ctx.api.fetchRaw(`/v1/calls/${call.id}/recording`);
  const body = await served.arrayBuffer();
  ctx.narrator.say(`GET /v1/calls/${call.id}/recording -> ${served.status} ${served.headers.get('content-type') ?? ''}, ${body.byteLength} bytes`);
  if (!kept) ctx.narrator.say('(the data folder is removed when the demo ends; run `npm run demo -- --keep` to keep it)');
}
