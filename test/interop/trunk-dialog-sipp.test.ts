/**
 * Dialog rules real trunks hold the gateway to, against sipp: no BYE on a dialog the peer already
 * ended (RFC 3261 15.1.2), on the sip_trunk agent edge leg; the caller's identity and privacy
 * (RFC 3325, RFC 3323) from the carrier to the call record and to the agent edge; the caller's
 * UPDATE offer in the early dialog of an inbound call (RFC 3311 5.1).
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

/** The INVITE that reached the edge with credentials (the one it answered), as text. */
const edgeInvite = (rig: { edge: Parameters<typeof sippMessages>[0] }): string =>
  received(sippMessages(rig.edge), 'INVITE').find((m) => /^Authorization:/im.test(m)) ?? '';

t.test('RFC 3325 5 and RFC 3323: a trusted carrier\'s anonymous caller with Privacy: id is recorded by its asserted number, marked private, and stays anonymous toward the agent edge', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml', trustAssertedIdentity: true });
  const carrier = await rig.call('inbound-uac-private.xml', ['-d', '1000']);
  const live = await inboundCall(rig.gw, rig.did);
  t.equal(live.from, '+15557770077', 'from is the number the trusted carrier asserted');
  t.equal(live.caller_privacy, true, 'and the record says the caller asked for privacy');
  await sippPassed(t, carrier, 'the carrier');
  await sippPassed(t, rig.edge, 'the edge');
  const invite = edgeInvite(rig);
  t.match(invite, /^From: "Anonymous" <sip:anonymous@anonymous\.invalid>;tag=/m, 'RFC 3323 4.1: the edge sees an anonymous From');
  t.notMatch(invite, /P-Asserted-Identity/i, 'RFC 3325 5: no asserted identity toward a peer outside the trust domain');
  t.notMatch(invite, /7770077|7770088/, 'neither the caller\'s nor the diverting number anywhere in the INVITE');
  t.match(invite, /^Privacy: id$/m, 'Privacy: id tells the edge why');
});

t.test('RFC 3325 5: without privacy, the asserted identity and the Diversion reach the agent edge; From stays the caller\'s', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml', trustAssertedIdentity: true });
  const carrier = await rig.call('inbound-uac-asserted.xml', ['-d', '1000']);
  const live = await inboundCall(rig.gw, rig.did);
  t.equal(live.from, '+15557770020', 'a From with a number is kept');
  t.equal(live.caller_privacy, false);
  await sippPassed(t, carrier, 'the carrier');
  await sippPassed(t, rig.edge, 'the edge');
  const invite = edgeInvite(rig);
  t.match(invite, /^From: <sip:\+15557770020@/m, 'the caller\'s number in From');
  t.match(invite, /^P-Asserted-Identity: <sip:\+15557770077@/m, 'the asserted identity passed on');
  t.match(invite, /^Diversion: <sip:\+15557770088@127\.0\.0\.1>;reason=unconditional$/m, 'the Diversion as received');
});

t.test('RFC 3325 5: a carrier not trusted (the default) has its P-Asserted-Identity ignored: the anonymous caller stays anonymous', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const carrier = await rig.call('inbound-uac-private.xml', ['-d', '1000']);
  const live = await inboundCall(rig.gw, rig.did);
  t.equal(live.from, 'anonymous');
  t.equal(live.caller_privacy, true);
  await sippPassed(t, carrier, 'the carrier');
  await sippPassed(t, rig.edge, 'the edge');
  t.notMatch(edgeInvite(rig), /P-Asserted-Identity|7770077/, 'nothing of the untrusted assertion reaches the edge');
});

t.test('RFC 3311 5.1: the caller\'s UPDATE offer in the early dialog of our 183 with early media gets 200 with an answer; the call goes on to the answer', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-early-media.xml' });
  const carrier = await rig.call('inbound-uac-early-update.xml', ['-d', '1000']);
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, carrier, 'the carrier (183, UPDATE answered 200 with PCMA, 200, BYE answered)');
  await sippPassed(t, rig.edge, 'the edge (early media, answer, BYE received)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
  t.ok(done.answered_at, 'answered after the early UPDATE');
});
