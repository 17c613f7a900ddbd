/**
 * Transfers the agent asks for (docs/API.md "Transfers asked by the agent"), against sipp as the
 * sip_trunk agent edge, the carrier and the transfer target: a REFER on the agent's leg is
 * accepted (RFC 3515 202 and NOTIFY sipfrag) when the agent's transfer policy allows its target,
 * the caller is bridged to the target over the call's carrier and the agent's leg released; a
 * target outside the policy, or any target of an agent with no policy, is refused with 403 and no
 * NOTIFY, and nothing is dialled.
 */
import t from 'tap';
import { detailWhen, ended, inboundCall, requestsIn, sippMessages, sippPassed, sippPeer, startInboundRig } from '../support/inbound-sipp-rig.js';
import type { ApiBody } from '../support/gateway-harness.js';
import { needPeer } from '../support/peers.js';

const received = (log: string, method: string): string[] => requestsIn(log, method).filter((block) => /message received/.test(block));

t.test('RFC 3515 2.4.2, 2.4.5: the agent edge REFERs the caller to a number its policy allows; 202, NOTIFY 100 then 200, the caller bridged to the target, the edge released with BYE', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, {
    edgeScenario: 'inbound-edge-refer.xml', edgeArgs: ['-d', '1500', '-key', 'refer_to', 'sip:+15559990001@127.0.0.1;user=phone'],
    transferTarget: true, transferPolicy: { allow: ['+1555999*'], max_per_call: 1 },
  });
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  const connected = await detailWhen(rig.gw, live.id, 'transfer connected', (d) => d.transfer?.state === 'connected');
  t.match(connected.transfer, { to: '+15559990001', state: 'connected' }, 'the call carries the transfer as an API transfer does');
  await sippPassed(t, rig.edge, 'the edge (202, NOTIFY 100 Trying, NOTIFY 200 OK terminated, then BYE)');
  t.match(received(sippMessages(rig.target!), 'INVITE')[0] ?? '', /^INVITE sip:\+15559990001@/m, 'the target was dialled over the call\'s carrier');
  // With the edge gone, only the bridge to the target sends RTP to the caller (the target echoes
  // the caller's audio): the caller leg's sent count grows only if audio flows both ways.
  const sent = (d: ApiBody): number => ((d.session as { remote?: { packets_sent?: number } } | undefined)?.remote?.packets_sent ?? 0);
  const atConnect = sent(connected);
  await detailWhen(rig.gw, live.id, 'the target\'s audio at the caller', (d) => sent(d) >= atConnect + 25);
  const hung = await rig.gw.api('POST', `/v1/calls/${live.id}/hangup`, undefined, { key: rig.gw.liveKey });
  t.equal(hung.body.state, 'ended');
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  await sippPassed(t, rig.target!, 'the target (BYE from the gateway)');
});

for (const [name, policy, referTo] of [
  ['a target outside the agent\'s policy', { allow: ['+1555999*'], max_per_call: 1 }, 'tel:+19005550100'],
  ['any target of an agent with no transfer policy (the default)', undefined, 'sip:+15559990001@127.0.0.1'],
] as const) {
  t.test(`RFC 3515 2.4.2: a REFER to ${name} is refused with 403, no NOTIFY, nothing dialled; the call goes on until the edge hangs up`, async (t) => {
    if (!needPeer(t, 'sipp')) return;
    const rig = await startInboundRig(t, {
      edgeScenario: 'inbound-edge-refer-refused.xml', edgeArgs: ['-d', '1000', '-key', 'refer_to', referTo], transferTarget: true,
      ...(policy ? { transferPolicy: { allow: [...policy.allow], max_per_call: policy.max_per_call } } : {}),
    });
    const carrier = await rig.call('inbound-uac-wait-bye.xml');
    const live = await inboundCall(rig.gw, rig.did);
    await sippPassed(t, rig.edge, 'the edge (403 to its REFER, no NOTIFY, its BYE answered)');
    await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
    const done = await ended(rig.gw, live.id);
    t.match(done.cdr, { end_reason: 'completed', hangup_by: 'agent' }, 'the agent hung up; nothing was transferred');
    t.equal(done.transfer ?? null, null, 'no transfer on the record');
    t.equal(received(sippMessages(rig.target!), 'INVITE').length, 0, 'the target got no INVITE');
    t.ok(rig.gw.logs.some((l) => l.msg === 'agent transfer refused' && l.call_id === live.id), 'the refusal is logged with the call id');
  });
}

t.test('docs/API.md "Transfers asked by the agent": an agent with no policy of its own follows its tenant\'s default; 202, NOTIFY 200, the caller bridged to the target', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, {
    edgeScenario: 'inbound-edge-refer.xml', edgeArgs: ['-d', '1500', '-key', 'refer_to', 'tel:+15559990001'], transferTarget: true,
  });
  const set = await rig.gw.api('PUT', '/v1/tenant/transfer-policy', { transfer_policy: { allow: ['+1555999*'], max_per_call: 1 } }, { key: rig.gw.liveKey });
  t.equal(set.status, 200, JSON.stringify(set.body));
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  const connected = await detailWhen(rig.gw, live.id, 'transfer connected', (d) => d.transfer?.state === 'connected');
  t.match(connected.transfer, { to: '+15559990001', state: 'connected' });
  await sippPassed(t, rig.edge, 'the edge (202, NOTIFY 100 Trying, NOTIFY 200 OK terminated, then BYE)');
  t.equal(received(sippMessages(rig.target!), 'INVITE').length, 1, 'the target was dialled');
  await rig.gw.api('POST', `/v1/calls/${live.id}/hangup`, undefined, { key: rig.gw.liveKey });
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  await sippPassed(t, rig.target!, 'the target (BYE from the gateway)');
});

t.test('docs/DECISIONS.md "Transfer policy defaults": an agent\'s own policy replaces the tenant default; a target only the default allows is refused with 403', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, {
    edgeScenario: 'inbound-edge-refer-refused.xml', edgeArgs: ['-d', '1000', '-key', 'refer_to', 'tel:+15559990001'], transferTarget: true,
    transferPolicy: { allow: ['+1444*'], max_per_call: 1 },
  });
  await rig.gw.api('PUT', '/v1/tenant/transfer-policy', { transfer_policy: { allow: ['+1555999*'], max_per_call: 1 } }, { key: rig.gw.liveKey });
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, rig.edge, 'the edge (403 to its REFER, no NOTIFY, its BYE answered)');
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  const done = await ended(rig.gw, live.id);
  t.equal(done.transfer ?? null, null, 'no transfer on the record');
  t.equal(received(sippMessages(rig.target!), 'INVITE').length, 0, 'the target got no INVITE');
});

t.test('docs/API.md "Transfers asked by the agent": a REFER to a SIP address the policy allows dials it directly, not through the carrier; the caller is bridged to it with audio both ways', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const pbx = await sippPeer(t, ['-sn', 'uas', '-rtp_echo']);
  const desk = `sip:desk@127.0.0.1:${pbx.port}`;
  const rig = await startInboundRig(t, {
    edgeScenario: 'inbound-edge-refer.xml', edgeArgs: ['-d', '1500', '-key', 'refer_to', `${desk};transport=udp`],
    transferPolicy: { allow: [desk], max_per_call: 1 },
  });
  const carrier = await rig.call('inbound-uac-wait-bye.xml');
  const live = await inboundCall(rig.gw, rig.did);
  const connected = await detailWhen(rig.gw, live.id, 'transfer connected', (d) => d.transfer?.state === 'connected');
  t.match(connected.transfer, { to: `${desk};transport=udp`, state: 'connected' }, 'the call carries the SIP address as its transfer target');
  await sippPassed(t, rig.edge, 'the edge (202, NOTIFY 100 Trying, NOTIFY 200 OK terminated, then BYE)');
  t.match(received(sippMessages(pbx), 'INVITE')[0] ?? '', new RegExp(`^INVITE sip:desk@127\\.0\\.0\\.1:${pbx.port};transport=udp SIP/2\\.0`, 'm'), 'the PBX got the INVITE for its address');
  const sent = (d: ApiBody): number => ((d.session as { remote?: { packets_sent?: number } } | undefined)?.remote?.packets_sent ?? 0);
  const atConnect = sent(connected);
  await detailWhen(rig.gw, live.id, 'the PBX\'s audio at the caller', (d) => sent(d) >= atConnect + 25);
  await rig.gw.api('POST', `/v1/calls/${live.id}/hangup`, undefined, { key: rig.gw.liveKey });
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  await sippPassed(t, pbx, 'the PBX (BYE from the gateway)');
});

t.test('RFC 3515 2.4.5, RFC 5589 6: a carrier set for REFER gets the agent\'s REFER; its NOTIFYs reach the agent before its BYE', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, {
    edgeScenario: 'inbound-edge-refer-relayed.xml', edgeArgs: ['-d', '1500', '-key', 'refer_to', 'tel:+15559990001'],
    carrierTransfer: 'refer', transferPolicy: { allow: ['+1555999*'], max_per_call: 1 },
  });
  const carrier = await rig.call('inbound-uac-accepts-refer.xml');
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, carrier, 'the carrier (REFER naming the target, 202, NOTIFY 180 and 200, then BYE from the gateway)');
  await sippPassed(t, rig.edge, 'the edge (202, NOTIFY 100, 180 relayed, 200 terminated, then BYE)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'transferred', hangup_by: 'agent' }, 'the carrier completed the transfer the agent asked for');
  t.match(done.transfer, { to: '+15559990001', state: 'connected' }, 'the same transfer field as an API transfer');
});
