/**
 * @module CallFlow, what every flow shares, through a minimal flow: commands before the answer,
 * hang-up and shutdown before the answer (the end reasons of docs/DECISIONS.md "End reasons"),
 * and a flow that throws ending its call `failed` without rejecting.
 */
import t from 'tap';
import { Call } from '../call.js';
import { CallFlow } from './call-flow.js';
import type { EndReason } from '../ending/end-reason.js';
import type { SetupSessionSnapshot } from '../session-snapshot.js';
import { callContext, TENANT } from '../../../../test/support/call-engine-rig.js';

/** A flow whose setup waits until told, and records what CallFlow asked of it. */
class ScriptedFlow extends CallFlow {
  readonly stops: EndReason[] = [];
  readonly failures: EndReason[] = [];
  readonly #setup: () => Promise<void>;

  constructor(call: Call, setup: () => Promise<void>) {
    super(call);
    this.#setup = setup;
  }

  protected proceed(): Promise<void> {
    return this.#setup();
  }

  protected stopBeforeAnswer(reason: EndReason): void {
    this.stops.push(reason);
    // As the real flows do once the far end confirmed the stop (487 to our CANCEL).
    queueMicrotask(() => this.call.end({ ...reason, reason: reason.reason === 'completed' ? 'canceled' : reason.reason, sipStatus: 487 }));
  }

  protected failBeforeAnswer(reason: EndReason): void {
    this.failures.push(reason);
    this.call.end(reason);
  }

  protected setupSession(): Omit<SetupSessionSnapshot, 'phase'> {
    return { local_rtp_port: 40000 };
  }
}

function newCall() {
  const ctx = callContext();
  const call = new Call({ tenantId: TENANT, direction: 'outbound', from: '+15550100', to: '+15550199', carrier: 'unit', record: false, agent: { type: 'websocket', url: 'wss://a.example' } }, ctx);
  return { call, store: ctx.store };
}

t.test('docs/API.md "Call commands": before the answer, hold, unhold and transfer answer call_not_active; the session shows the setup', (t) => {
  const { call } = newCall();
  const flow = new ScriptedFlow(call, () => new Promise(() => undefined));
  void flow.run();
  t.same(flow.hold(), { error: 'call_not_active' });
  t.same(flow.unhold(), { error: 'call_not_active' });
  t.same(flow.transfer('+15550777'), { error: 'call_not_active' });
  t.same(flow.session(), { phase: 'setup', local_rtp_port: 40000 });
  t.end();
});

t.test('docs/DECISIONS.md "End reasons": a hang-up before the answer stops the setup as the api, and resolves once the call ended', async (t) => {
  const { call, store } = newCall();
  const flow = new ScriptedFlow(call, () => new Promise(() => undefined));
  void flow.run();
  await flow.hangup();
  t.same(flow.stops, [{ reason: 'completed', sipStatus: null, hangupBy: 'api' }]);
  t.match(store.final(call.id), { state: 'ended', end_reason: 'canceled', hangup_by: 'api' });
  await flow.hangup();
  t.equal(flow.stops.length, 1, 'a second hang-up of an ended call stops nothing');
});

t.test('docs/DECISIONS.md "End reasons": shutdown before the answer stops the setup gateway_shutdown', async (t) => {
  const { call, store } = newCall();
  const flow = new ScriptedFlow(call, () => new Promise(() => undefined));
  void flow.run();
  await flow.shutdown();
  t.same(flow.stops, [{ reason: 'gateway_shutdown', sipStatus: null, hangupBy: 'gateway' }]);
  t.match(store.final(call.id), { end_reason: 'gateway_shutdown', hangup_by: 'gateway' });
});

t.test('CallFlow.run "never rejects": a setup that throws ends the call failed by the gateway, and run() does not reject', async (t) => {
  const { call, store } = newCall();
  const flow = new ScriptedFlow(call, () => Promise.reject(new Error('bug in the flow')));
  await flow.run();
  t.same(flow.failures, [{ reason: 'failed', sipStatus: null, hangupBy: 'gateway' }]);
  t.match(store.final(call.id), { end_reason: 'failed', hangup_by: 'gateway' });
});
