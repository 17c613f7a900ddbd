/**
 * Transfers and hang-ups a WebSocket agent asks for (docs/API.md "Transfers asked by the agent"
 * and "Agent WebSocket protocol"), against sipp as the carrier's far end and the transfer target
 * behind an RTP tap: a `transfer` event to a number the tenant's default policy allows dials the
 * target over the call's carrier and bridges the far end to it; one outside the policy (or with
 * no policy at all, the default) is refused with `transfer_refused` and the call goes on; a
 * `hangup` event ends the call with `hangup_by: agent`.
 */
import t from 'tap';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { detailWhen, inboundCall, requestsIn as requestBlocks, sippMessages as sippLog, sippPassed, sippPeer, startCarrier } from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';
import { mulawTone, toneLevel } from '../support/audio-probe.js';
import { callState, gatewayRtpPort, placeCall, requestsIn, rig, sippMessages, sleep, type Rig } from '../support/calls-sipp-rig.js';

async function activeCall(r: Rig): Promise<{ id: string; farLeg: number }> {
  const placed = await placeCall(r);
  if (placed.status !== 200) throw new Error(JSON.stringify(placed.body));
  await callState(r.gw, placed.body.id, 'active');
  await r.bot.core.until(() => r.bot.events().includes('start'));
  const farLeg = await gatewayRtpPort(r, placed.body.id);
  await waitFor('the gateway sends to the far end', () => r.tap!.legs.has(farLeg));
  return { id: placed.body.id, farLeg };
}

const eventsNamed = (r: Rig, name: string) => r.bot.core.jsonMessages().filter((m) => m.event === name);

async function setTenantPolicy(r: Rig, policy: unknown): Promise<void> {
  const set = await r.gw.api('PUT', '/v1/tenant/transfer-policy', { transfer_policy: policy }, { key: r.gw.liveKey });
  if (set.status !== 200) throw new Error(JSON.stringify(set.body));
}

t.test('docs/API.md "Transfers asked by the agent": a transfer event to a number the tenant\'s default policy allows dials it over the carrier and bridges the far end to it', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-tap.xml', { tap: true, calls: 2 });
  await setTenantPolicy(r, { allow: ['+1555014*'], max_per_call: 1 });
  const { id, farLeg } = await activeCall(r);
  r.bot.transfer('+15550142');
  const connected = await waitFor('transfer connected', async () => {
    const d = await r.gw.api('GET', `/v1/calls/${id}`, undefined, { key: r.gw.liveKey });
    return d.body.transfer?.state === 'connected' ? d.body : undefined;
  });
  t.match(connected, { state: 'active', transfer: { to: '+15550142', state: 'connected' } }, 'the call carries the transfer as an API transfer does');
  t.same(requestsIn(sippMessages(r.cwd), 'INVITE').map((uri) => /^sip:([^@]+)@/.exec(uri)?.[1]), ['+15550199', '+15550142'], 'the target was dialled over the call\'s carrier');
  await r.bot.core.until(() => r.bot.core.closedWith !== undefined, 'the agent socket closed');
  t.ok(r.bot.events().includes('stop'), 'the agent was released with stop once the target answered');
  t.ok(r.gw.logs.some((l) => l.msg === 'agent transfer started' && l.call_id === id), 'the transfer is logged with the call id');

  // The far end speaks; the target (sipp's echo) hears it through the bridge and its echo comes back.
  const tap = r.tap!;
  const farHeardFrom = tap.legs.get(farLeg)!.toFar.length;
  const speaking = tap.inject(farLeg, mulawTone(1000, 1500));
  const targetLeg = await waitFor('RTP on the target leg', () => [...tap.legs.keys()].find((p) => p !== farLeg));
  await speaking;
  await sleep(300);
  t.ok(toneLevel(tap.heardByFarEnd(targetLeg), 1000) > 1000, 'the target heard the far end through the bridge');
  t.ok(toneLevel(tap.heardByFarEnd(farLeg, farHeardFrom), 1000) > 1000, 'the far end heard the target through the bridge');

  const hung = await r.gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: r.gw.liveKey });
  t.equal(hung.body.state, 'ended');
  const done = await r.sipp.done;
  t.equal(done.code, 0, `both legs ended with BYE (${done.stderr.slice(0, 200)})`);
});

for (const [name, policy, to, code] of [
  ['with no policy (the default), any target', null, '+15550142', 'not_allowed'],
  ['a number outside the tenant\'s default policy', { allow: ['+1555014*'], max_per_call: 1 }, '+15550200', 'not_allowed'],
  ['an operator-denied premium number, whatever the policy', { allow: ['+1*'], max_per_call: 1 }, '+19005550100', 'not_allowed'],
  ['a target that is no address', { allow: ['+1*'], max_per_call: 1 }, 'call my manager', 'invalid_target'],
] as const) {
  t.test(`docs/API.md "Transfers asked by the agent": ${name} is refused with transfer_refused; nothing is dialled and the call goes on`, async (t) => {
    if (!needPeer(t, 'sipp')) return;
    const r = await rig(t, 'calls-uas-tap.xml', { tap: true, calls: 1 });
    if (policy) await setTenantPolicy(r, policy);
    const { id } = await activeCall(r);
    r.bot.transfer(to);
    await r.bot.core.until(() => eventsNamed(r, 'transfer_refused').length === 1, 'the transfer_refused event');
    t.match(eventsNamed(r, 'transfer_refused')[0], { transfer_refused: { to, code } }, `the agent is told why (${code})`);
    t.ok(r.gw.logs.some((l) => l.msg === 'agent transfer refused' && l.call_id === id), 'the refusal is logged with the call id');
    await sleep(300);
    const still = await r.gw.api('GET', `/v1/calls/${id}`, undefined, { key: r.gw.liveKey });
    t.match(still.body, { state: 'active', transfer: null }, 'the call is untouched');
    t.equal(r.bot.core.closedWith, undefined, 'the agent keeps its socket');
    t.equal(requestsIn(sippMessages(r.cwd), 'INVITE').length, 1, 'no INVITE but the call\'s own');
    await r.gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: r.gw.liveKey });
    t.equal((await r.sipp.done).code, 0, 'the far end got its BYE');
  });
}

t.test('docs/API.md "Agent WebSocket protocol": a hangup event ends the call with hangup_by agent and BYE to the far end', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-tap.xml', { tap: true, calls: 1 });
  const { id } = await activeCall(r);
  r.bot.hangup();
  const ended = await callState(r.gw, id, 'ended');
  t.match(ended.cdr, { end_reason: 'completed', hangup_by: 'agent' }, 'the agent ended the call');
  t.equal((await r.sipp.done).code, 0, 'the far end got its BYE');
  t.equal(requestsIn(sippMessages(r.cwd), 'BYE').length, 1, 'one BYE at the far end');
  await r.bot.core.until(() => r.bot.core.closedWith !== undefined, 'the agent socket closed');
  t.equal(r.bot.core.closedWith, 1000, 'the gateway closed the agent socket normally');
});

t.test('docs/SECURITY.md "Outbound addresses": a SIP address the transfer policy allows but that resolves to a private address is not dialled; the agent gets transfer_failed 403 and keeps the call', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-tap.xml', { tap: true, calls: 1 });
  await setTenantPolicy(r, { allow: ['sip:desk@127.0.0.1:5999'], max_per_call: 1 });
  const { id } = await activeCall(r);
  r.bot.transfer('sip:desk@127.0.0.1:5999');
  await r.bot.core.until(() => eventsNamed(r, 'transfer_failed').length === 1, 'the transfer_failed event');
  t.match(eventsNamed(r, 'transfer_failed')[0], { transfer_failed: { to: 'sip:desk@127.0.0.1:5999', sip_status: 403 } }, 'refused by the outbound-address policy');
  t.ok(r.gw.logs.some((l) => l.msg === 'transfer target refused by the outbound-address policy' && l.call_id === id), 'logged with the call id');
  const still = await r.gw.api('GET', `/v1/calls/${id}`, undefined, { key: r.gw.liveKey });
  t.match(still.body, { state: 'active', transfer: { to: 'sip:desk@127.0.0.1:5999', state: 'failed' } }, 'the call goes on, its transfer failed');
  t.equal(r.bot.core.closedWith, undefined, 'the agent keeps its socket');
  await r.gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: r.gw.liveKey });
  t.equal((await r.sipp.done).code, 0, 'the far end got its BYE');
});

t.test('docs/DECISIONS.md "Transfer policy defaults": an imported WebSocket agent (custom, media_bridge) transfers under its own policy, which replaces the tenant default', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const target = await sippPeer(t, ['-sn', 'uas', '-rtp_echo']);
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const gw = await startTestGateway(t, {
    carriers: `carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n    outbound:\n      uri: "sip:127.0.0.1:${target.port};transport=udp"\n    options_ping_s: 0\n`,
    yaml: 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 10',
  });
  const did = '+15550121';
  await gw.gateway.store.numbers.add(gw.tenantId, did, 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'ws-bot', connection_mode: 'media_bridge', websocket_url: bot.url, did_number: did,
    transfer_policy: { allow: ['+1555999*'], max_per_call: 1 },
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  await gw.api('PUT', '/v1/tenant/transfer-policy', { transfer_policy: { allow: ['+1*'], max_per_call: 3 } }, { key: gw.liveKey });
  const carrier = await startCarrier(t, gw, did, 'inbound-uac-wait-bye.xml');
  await bot.core.until(() => bot.events().includes('start'), 'the agent started');
  const live = await inboundCall(gw, did);

  bot.transfer('+15550142');
  await bot.core.until(() => bot.core.jsonMessages().some((m) => m.event === 'transfer_refused'), 'the transfer_refused event');
  t.match(bot.core.jsonMessages().find((m) => m.event === 'transfer_refused'), { transfer_refused: { to: '+15550142', code: 'not_allowed' } }, 'a number only the tenant default allows is refused');

  bot.transfer('tel:+15559990001');
  const connected = await detailWhen(gw, live.id, 'transfer connected', (d) => d.transfer?.state === 'connected');
  t.match(connected.transfer, { to: '+15559990001', state: 'connected' }, 'a number the agent\'s own policy allows is dialled and bridged');
  t.match(requestBlocks(sippLog(target), 'INVITE').find((b) => /message received/.test(b)) ?? '', /^INVITE sip:\+15559990001@/m, 'the target was dialled over the carrier');
  await bot.core.until(() => bot.core.closedWith !== undefined, 'the agent socket closed');
  await gw.api('POST', `/v1/calls/${live.id}/hangup`, undefined, { key: gw.liveKey });
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  await sippPassed(t, target, 'the target (BYE from the gateway)');
});
