/**
 * DTMF signalled out of band, against sipp as a carrier that sends SIP INFO instead of RFC 4733
 * packets: to a WebSocket agent (contract section 5: the agent receives the caller's digits as
 * `dtmf`), and across a sip_trunk bridge to an agent edge.
 */
import t from 'tap';
import { needPeer } from '../support/peers.js';
import { callState, placeCall, rig } from '../support/calls-sipp-rig.js';
import { ended, inboundCall, sippPassed, startInboundRig } from '../support/inbound-sipp-rig.js';

t.test('contract 5: digits the far end sends by SIP INFO (application/dtmf-relay and application/dtmf) reach the agent as dtmf events', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-info-dtmf.xml');
  const placed = await placeCall(r);
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await r.bot.core.until(() => r.bot.events().includes('start'));
  const ended = await callState(r.gw, placed.body.id, 'ended');
  t.match(ended.cdr, { end_reason: 'completed', hangup_by: 'callee' }, 'the far end hung up after its digits');
  const done = await r.sipp.done;
  t.equal(done.code, 0, `sipp got 200 for both INFOs and its BYE (${done.stderr.slice(0, 200)})`);
  const digits = r.bot.core.jsonMessages().filter((m) => m.event === 'dtmf').map((m) => (m.dtmf as { digit?: string } | undefined)?.digit);
  t.same(digits, ['5', '#'], 'the agent got "5" (Signal=5) and then "#" (application/dtmf), once each, in order');
});

t.test('contract 4: on a sip_trunk call, a key the carrier sends by INFO reaches an edge without telephone-event as an INFO', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth-info.xml' });
  const carrier = await rig.call('inbound-uac-info.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, carrier, 'the carrier (its INFO answered 200, then its BYE)');
  await sippPassed(t, rig.edge, 'the edge (an INFO with Signal=5, then the BYE)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
});
