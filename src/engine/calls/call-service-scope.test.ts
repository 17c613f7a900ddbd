/**
 * @module Node-level and call-level 503 of the call service (docs/CLUSTER.md "Drain"), answered
 * on the wire over loopback: a 503 about this engine (draining, at `cluster.capacity`) carries no
 * scope, so the SIP edge tries another engine; one about the call (a tenant's or carrier's limit)
 * carries `X-VGW-Scope: call`, which the edge relays to the carrier.
 */
import t from 'tap';
import type { SipResponse } from '../sip/index.js';
import { answeredCall, callRig, dialGateway, recordOf, TENANT, until, type CallRig } from '../../../test/support/call-engine-rig.js';

const request = { tenantId: TENANT, carrier: 'unit', from: '+15550100', to: '+15550199', record: false, agentUrl: 'wss://agent.example/stream' };

/** The final response the gateway gave to a new INVITE from the phone. */
async function refusal(rig: CallRig): Promise<SipResponse> {
  const dial = dialGateway(rig);
  const response = new Promise<SipResponse | undefined>((resolve) => dial.call.events.on('failed', (_s, _r, res) => resolve(res)));
  await until(() => dial.final !== null, 'the final response');
  const res = await response;
  if (!res) throw new Error(`no response, final ${dial.final}`);
  return res;
}

t.test('docs/CLUSTER.md "Drain": at cluster.capacity an INVITE gets a node-level 503 (Retry-After, no scope) and place() answers unavailable; the live call is untouched', async (t) => {
  const rig = await callRig(t, { service: { capacity: 1 } });
  const { id } = await answeredCall(rig);
  const res = await refusal(rig);
  t.equal(res.status, 503);
  t.equal(res.headers.get('Retry-After'), '5');
  t.equal(res.headers.has('X-VGW-Scope'), false, 'another engine may take it');
  t.match(await rig.service.place(request), { error: 'unavailable', detail: /capacity/ });
  t.equal(recordOf(rig, id).state, 'active');
});

t.test('docs/CLUSTER.md "Drain": while draining an INVITE gets a node-level 503 without scope', async (t) => {
  const rig = await callRig(t);
  rig.draining.value = true;
  const res = await refusal(rig);
  t.equal(res.status, 503);
  t.equal(res.headers.has('X-VGW-Scope'), false);
});

t.test('docs/CLUSTER.md "Drain": a tenant\'s concurrency refusal is a call-level 503 (X-VGW-Scope: call), under capacity', async (t) => {
  const rig = await callRig(t, { service: { maxConcurrentPerTenant: 1, capacity: 10 } });
  await answeredCall(rig);
  const res = await refusal(rig);
  t.equal(res.status, 503);
  t.equal(res.headers.get('X-VGW-Scope'), 'call', 'another engine would refuse it too');
  t.equal(res.headers.get('Retry-After'), '5');
});

t.test('docs/CLUSTER.md "Drain": a carrier\'s concurrency refusal is a call-level 503 too', async (t) => {
  const rig = await callRig(t, { carrier: { maxConcurrentCalls: 1 } });
  await answeredCall(rig);
  const res = await refusal(rig);
  t.equal(res.status, 503);
  t.equal(res.headers.get('X-VGW-Scope'), 'call');
});
