/**
 * @module docs/API.md "Answering-machine detection", `hold_until_result`: what the held-back agent
 * side is told to do for each result, on RTP packets of synthetic tones and silence (the decisions
 * on real speech are test/interop/amd-hold-sipp.test.ts's).
 */
import t from 'tap';
import { systemClock } from '../../../../common/clock.js';
import { linearToUlaw, serializeRtp, type AmdDecision, type NegotiatedAudio, type RtpSession, type RtpSessionOwner } from '../../../media/index.js';
import { AmdHold, type AmdHoldOptions } from './amd-hold.js';

/** A session whose owner the test drives: `owner` while taken, `released` once given back. */
function fakeSession() {
  const state: { owner: RtpSessionOwner | null; released: boolean } = { owner: null, released: false };
  const rtp = { take: (owner: RtpSessionOwner) => { state.owner = owner; return () => { state.released = true; state.owner = null; }; } };
  return { state, rtp: rtp as unknown as RtpSession };
}

const PCMU = { codec: { encoding: 'PCMU', payloadType: 0, clockRate: 8000 }, receivePayloadType: 0, telephoneEvent: null } as unknown as NegotiatedAudio;

/** `ms` of 20 ms PCMU packets, a sine at `hz` (or silence), to the session's owner. */
function play(state: { owner: RtpSessionOwner | null }, ms: number, hz = 0, from = 0): number {
  let seq = from;
  for (let f = 0; f < ms / 20 && state.owner; f++, seq++) {
    const payload = Uint8Array.from({ length: 160 }, (_, n) => linearToUlaw(hz ? Math.round(8000 * Math.sin((2 * Math.PI * hz * (seq * 160 + n)) / 8000)) : 0));
    state.owner.onRtp?.(serializeRtp({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 7 }, payload), undefined as unknown as RtpSession);
  }
  return seq;
}

function hold(onMachine: AmdHoldOptions['onMachine']) {
  const { state, rtp } = fakeSession();
  const results: AmdDecision[] = [];
  const h = new AmdHold({
    clock: systemClock, rtp, audio: PCMU, thresholds: {}, beepWait: { greetingEndSilenceMs: 1500, maxBeepWaitMs: 20_000 }, onMachine,
    onResult: (d) => results.push({ ...d }),
  });
  return { h, state, results };
}

t.test('docs/API.md "Answering-machine detection": a fax is a machine: on_machine hangup ends the call, and the RTP is given back', async (t) => {
  const { h, state, results } = hold({ action: 'hangup', waitForBeep: false });
  await h.start();
  t.ok(state.owner, 'the detection owns the callee\'s RTP while the agent is held back');
  play(state, 200);
  play(state, 600, 1100, 10);
  t.match(await h.outcome, { action: 'hangup', decision: { result: 'fax' } });
  t.match(results, [{ result: 'fax' }], 'the result reported for the call');
  t.ok(state.released, 'the session given back');
  t.equal(h.takeDetector(), null, 'no detector is left over after a hang-up');
});

t.test('docs/DECISIONS.md "Answering-machine detection": a fax with on_machine connect and wait_for_beep is connected at once', async (t) => {
  const { h, state } = hold({ action: 'connect', waitForBeep: true });
  await h.start();
  play(state, 600, 1100);
  t.match(await h.outcome, { action: 'connect', decision: { result: 'fax', beepAtMs: null } });
  t.ok(state.released);
  h.takeDetector()?.close();
});

t.test('docs/API.md "Answering-machine detection": a beep is a machine; with wait_for_beep it is connected then, the beep dated', async (t) => {
  const { h, state } = hold({ action: 'connect', waitForBeep: true });
  await h.start();
  play(state, 400, 1000);
  t.match(await h.outcome, { action: 'connect', decision: { result: 'machine', beepAtMs: 0 } });
  h.takeDetector()?.close();
});

t.test('docs/DECISIONS.md "Answering-machine detection": nothing heard (unknown) connects the agent, whatever on_machine says', async (t) => {
  const { h, state } = hold({ action: 'hangup', waitForBeep: false });
  await h.start();
  play(state, 5000);
  t.match(await h.outcome, { action: 'connect', decision: { result: 'unknown', decidedAfterMs: 4500 } });
  h.takeDetector()?.close();
});

t.test('a call that ends while the agent is held back cancels the detection: released, RTP given back, later packets ignored', async (t) => {
  const { h, state, results } = hold({ action: 'connect', waitForBeep: false });
  await h.start();
  play(state, 400);
  h.cancel();
  t.same(await h.outcome, { action: 'released' });
  t.ok(state.released);
  t.equal(h.takeDetector(), null, 'the detector was closed with the hold');
  t.same(results, []);
});
