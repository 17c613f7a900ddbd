/**
 * Offers in early and confirmed dialogs of an outbound call, against sipp as the carrier's far end
 * (RFC 3311 5.1 and 5.2 with RFC 3262, RFC 6337 3.1, RFC 3261 14.2): see
 * scenarios/calls-uas-early-update.xml for the exchange sipp checks step by step.
 */
import t from 'tap';
import { toneLevel } from '../support/audio-probe.js';
import { needPeer } from '../support/peers.js';
import { agentSays, callState, placeCall, rig } from '../support/calls-sipp-rig.js';

t.test('RFC 3311 5.1: an UPDATE offer after a reliable 183 and its PRACK is answered 200 with SDP and moves the media; 491 while our offer is unanswered; a re-INVITE offer is answered too', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-early-update.xml');
  const placed = await placeCall(r);
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const active = await callState(r.gw, placed.body.id, 'active');
  t.ok(active.answered_at, 'answered by the 200 without SDP');
  await r.bot.core.until(() => r.bot.events().includes('start'));
  agentSays(r.bot, 1000, 800);
  // The 183's answer named 127.0.0.2, where nothing echoes: the tone comes back only because the
  // early UPDATE's offer moved the media to sipp's echo port.
  await r.bot.core.until(() => toneLevel(r.bot.receivedAudio(), 1000) > 1000);
  t.pass(`the agent hears its tone echoed from the address of the UPDATE (level ${toneLevel(r.bot.receivedAudio(), 1000).toFixed(0)})`);
  const ended = await callState(r.gw, placed.body.id, 'ended');
  t.match(ended.cdr, { end_reason: 'completed', hangup_by: 'callee' });
  const done = await r.sipp.done;
  t.equal(done.code, 0, `sipp: 491, then 200 with SDP to the UPDATE, 200 with SDP to the re-INVITE (${done.stderr.slice(0, 300)})`);
});
