/**
 * Dialog rules real trunks hold the gateway to, against sipp: no BYE on a dialog the peer already
 * ended (RFC 3261 15.1.2), on the sip_trunk agent edge leg and on the carrier leg.
 */
import t from 'tap';
import { ended, inboundCall, requestsIn, sippMessages, sippPassed, startInboundRig } from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';

/** The `method` requests sipp received (its log holds what it sent as well). */
const received = (log: string, method: string): string[] => requestsIn(log, method).filter((block) => /message received/.test(block));

t.test('RFC 3261 15.1.2: the agent edge hangs up; the gateway BYEs the caller only, never the edge\'s ended dialog', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-bye-once.xml', edgeArgs: ['-d', '1000'] });
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, rig.edge, 'the strict edge (its BYE answered 200, no BYE back within 2 s)');
  await sippPassed(t, carrier, 'the carrier (the gateway\'s BYE answered)');
  t.equal(received(sippMessages(rig.edge), 'BYE').length, 0, 'the edge received no BYE');
  t.equal(received(sippMessages(carrier), 'BYE').length >= 1, true, 'the carrier received the BYE');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'agent' });
});
