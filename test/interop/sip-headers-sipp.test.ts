/**
 * SIP headers carried through, on the wire (docs/API.md "SIP headers carried through"): sipp as
 * the carrier sends X- headers, Diversion (RFC 5806) and User-to-User (RFC 7433) to a DID; a sipp
 * sip_trunk agent edge checks its INVITE carries them (sipp `ereg` with `check_it`), a WebSocket
 * agent finds them in `start.customParameters.sip_headers`, and the call detail shows them. The
 * other way, the tenant's `sip_headers` of POST /v1/calls reach the sipp carrier's INVITE, and
 * header injection (CR/LF, names outside X-, oversized values) is refused with 400 before
 * anything is sent.
 */
import t, { type Test } from 'tap';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { callState, placeCall, rig, sippMessages as callsSippMessages } from '../support/calls-sipp-rig.js';
import { ended, inboundCall, requestsIn, sippMessages, sippPassed, startCarrier, startInboundRig } from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';

/** What inbound-uac-headers-bye.xml sends that the default carry_headers lets through, as received. */
const CARRIED = {
  'X-Campaign': 'spring-42',
  'x-customer-id': 'C-7788',
  Diversion: '<sip:+15550111@carrier.example>;reason=unconditional;counter=1',
  'User-to-User': '56a390f3d2b7310023a2fb;encoding=hex',
};

/** A gateway whose carrier `trunk` takes calls from 127.0.0.1, with `did` routed to a WebSocket agent imported as `custom` media_bridge. */
async function startCustomBridgeRig(t: Test, did: string, carrierCalls = ''): Promise<{ gw: TestGateway; bot: FakeCustomAgent }> {
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const gw = await startTestGateway(t, {
    carriers: `carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n${carrierCalls}`,
    yaml: 'calls:\n  allow_private_agent_urls: true',
  });
  await gw.gateway.store.numbers.add(gw.tenantId, did, 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'ws-bot', connection_mode: 'media_bridge', websocket_url: bot.url, did_number: did,
  }, { key: gw.liveKey });
  if (imported.status !== 200) throw new Error(`import: ${JSON.stringify(imported.body)}`);
  return { gw, bot };
}

const startParameters = (bot: FakeCustomAgent): Record<string, unknown> | undefined =>
  (bot.core.jsonMessages().find((m) => m.event === 'start') as { start?: { customParameters?: Record<string, unknown> } } | undefined)?.start?.customParameters;

t.test('docs/API.md "SIP headers carried through": the carrier\'s X-, Diversion and User-to-User headers reach the sip_trunk edge\'s INVITE; Subject, not allowed, does not; the call detail shows what was received', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-headers.xml' });
  const carrier = await rig.call('inbound-uac-headers-bye.xml', ['-d', '1500']);
  const live = await inboundCall(rig.gw, rig.did);
  await sippPassed(t, carrier, 'the carrier (answered, its BYE answered 200)');
  await sippPassed(t, rig.edge, 'the edge (every carried header checked, BYE received)');
  const invite = requestsIn(sippMessages(rig.edge), 'INVITE')[0] ?? '';
  t.match(invite, /^X-Campaign: spring-42\r?$/m, 'the X- header as received');
  t.notMatch(invite, /^Subject:/im, 'a header outside carry_headers stays with the gateway');
  t.equal(invite.match(/^Diversion:/gim)?.length, 1, 'Diversion once: the identity rules write it, not a second copy');
  const done = await ended(rig.gw, live.id);
  t.same(done.sip_headers, CARRIED, 'the detail shows the headers received, by name as received');
});

t.test('docs/API.md "SIP headers carried through": a WebSocket agent finds the carried headers in start.customParameters.sip_headers', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const did = '+15550131';
  const { gw, bot } = await startCustomBridgeRig(t, did);
  const carrier = await startCarrier(t, gw, did, 'inbound-uac-headers-bye.xml', ['-d', '1500']);
  await bot.core.until(() => startParameters(bot) !== undefined);
  const params = startParameters(bot)!;
  t.same(params.sip_headers, CARRIED, 'the allowed headers, values as strings');
  t.equal(params.direction, 'inbound');
  await sippPassed(t, carrier, 'the carrier');
  const live = await inboundCall(gw, did);
  t.same((await ended(gw, live.id)).sip_headers, CARRIED);
});

t.test('docs/CONFIGURATION.md carriers calls.carry_headers: a carrier that carries only X-Campaign gives the agent only that', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const did = '+15550132';
  const { gw, bot } = await startCustomBridgeRig(t, did, '    calls:\n      carry_headers: [x-campaign]\n');
  const carrier = await startCarrier(t, gw, did, 'inbound-uac-headers-bye.xml', ['-d', '1000']);
  await bot.core.until(() => startParameters(bot) !== undefined);
  t.same(startParameters(bot)!.sip_headers, { 'X-Campaign': 'spring-42' }, 'the allow list is the carrier\'s, case-insensitive');
  await sippPassed(t, carrier, 'the carrier');
});

t.test('docs/CONFIGURATION.md carriers calls.carry_headers: a carrier that carries X- headers only keeps Diversion and User-to-User from the edge too', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml', carryHeaders: ['X-*'] });
  const carrier = await rig.call('inbound-uac-headers-bye.xml', ['-d', '1000']);
  await sippPassed(t, carrier, 'the carrier');
  await sippPassed(t, rig.edge, 'the edge');
  const invite = requestsIn(sippMessages(rig.edge), 'INVITE').at(-1) ?? '';
  t.match(invite, /^X-Campaign: spring-42\r?$/m, 'the X- header is carried');
  t.notMatch(invite, /^(Diversion|User-to-User):/im, 'Diversion and User-to-User are not');
  const live = await inboundCall(rig.gw, rig.did);
  t.same((await ended(rig.gw, live.id)).sip_headers, { 'X-Campaign': 'spring-42', 'x-customer-id': 'C-7788' }, 'nor kept with the call');
});

t.test('docs/API.md "SIP headers carried through": POST /v1/calls sip_headers reach the carrier\'s INVITE; injection attempts are 400 and place no call', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-headers.xml');
  const refused: [string, Record<string, unknown>, string][] = [
    ['a CR LF in a value (RFC 3261 7.3.1: a header is one line)', { sip_headers: { 'X-Campaign': 'a\r\nX-Injected: 1' } }, 'sip_header_not_allowed'],
    ['a bare LF', { sip_headers: { 'X-Campaign': 'a\nX-Injected: 1' } }, 'sip_header_not_allowed'],
    ['a name that is not X-', { sip_headers: { Via: 'SIP/2.0/UDP 10.0.0.1' } }, 'sip_header_not_allowed'],
    ['Call-ID', { sip_headers: { 'Call-ID': 'x' } }, 'sip_header_not_allowed'],
    ['Contact', { sip_headers: { Contact: '<sip:evil@10.0.0.1>' } }, 'sip_header_not_allowed'],
    ['a name with a colon', { sip_headers: { 'X-Injected: 1\r\nX-A': 'b' } }, 'sip_header_not_allowed'],
    ['an oversized value', { sip_headers: { 'X-Campaign': 'a'.repeat(257) } }, 'sip_header_not_allowed'],
    ['a reserved custom parameter', { custom_parameters: { call_id: 'spoofed' } }, 'custom_parameter_not_allowed'],
    ['a nested custom parameter', { custom_parameters: { tier: { gold: true } } }, 'validation_failed'],
  ];
  for (const [what, body, code] of refused) {
    const answer = await placeCall(r, body);
    t.equal(answer.status, 400, `${what}: 400`);
    t.equal(answer.body.code, code, `${what}: ${code}`);
  }
  const list = await r.gw.api('GET', '/v1/calls?state=ended', undefined, { key: r.gw.liveKey });
  t.equal(list.body.data.length, 0, 'no refused request placed a call');

  const placed = await placeCall(r, { sip_headers: { 'X-Campaign': 'spring-42', 'X-Ticket': 'T-1001 priority=high' }, custom_parameters: { customer_tier: 'gold' } });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await r.bot.core.until(() => startParameters(r.bot) !== undefined);
  t.match(startParameters(r.bot), { customer_tier: 'gold', call_id: placed.body.id, direction: 'outbound' }, 'custom_parameters beside the gateway\'s own keys');
  const done = await callState(r.gw, placed.body.id, 'ended');
  t.match(done.cdr, { hangup_by: 'callee' }, 'the far end (which checked the headers) hung up');
  t.equal((await r.sipp.done).code, 0, 'sipp found X-Campaign and X-Ticket on the INVITE, and no X-Injected');
  const invites = callsSippMessages(r.cwd).filter((m) => /^INVITE /m.test(m));
  t.equal(invites.length > 0 && invites.every((m) => !/X-Injected/i.test(m)), true, 'nothing of the refused requests is on the wire');
});
