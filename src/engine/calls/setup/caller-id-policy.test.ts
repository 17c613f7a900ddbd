/**
 * @module The carriers' caller-ID policy (docs/API.md "Caller IDs"): which `from` a tenant may
 * present, checked before anything is sent or recorded.
 */
import t from 'tap';
import type { TenantId } from '../../../common/ids.js';
import { callRig, OTHER_TENANT, TENANT } from '../../../../test/support/call-engine-rig.js';
import type { CallerIdDirectory } from '../ports.js';
import { isCallerIdAllowed, SANDBOX_REFUSED_CALLER_ID } from './caller-id-policy.js';

/** TENANT holds +15550100 on `unit` and +15550122 on `other`; the operator verified +15550133 for it. */
const directory: CallerIdDirectory = {
  holds: (tenantId, number, carrier) => Promise.resolve(tenantId === TENANT && ((number === '+15550100' && carrier === 'unit') || (number === '+15550122' && carrier === 'other'))),
  isVerified: (tenantId, number) => Promise.resolve(tenantId === TENANT && number === '+15550133'),
};
const allowed = (policy: 'owned' | 'verified' | 'any' | undefined, from: string, tenantId: TenantId = TENANT) =>
  isCallerIdAllowed({ name: 'unit', sandbox: false, callerIdPolicy: policy }, tenantId, from, directory);

t.test('docs/API.md "Caller IDs": owned (the default) takes a number held on that carrier or a verified one, nothing else', async (t) => {
  for (const policy of ['owned', undefined] as const) {
    t.ok(await allowed(policy, '+15550100'), 'held on the carrier');
    t.ok(await allowed(policy, '+15550133'), 'verified');
    t.notOk(await allowed(policy, '+15550122'), 'held, but on another carrier');
    t.notOk(await allowed(policy, '+15550199'), 'neither held nor verified');
  }
  t.end();
});

t.test('docs/API.md "Caller IDs": verified takes verified caller IDs only; any takes every number', async (t) => {
  t.ok(await allowed('verified', '+15550133'));
  t.notOk(await allowed('verified', '+15550100'), 'holding the number is not enough under verified');
  t.ok(await allowed('any', '+15550199'));
  t.end();
});

t.test('docs/API.md "Caller IDs": one tenant cannot present the numbers another holds or verified', async (t) => {
  t.notOk(await allowed('owned', '+15550100', OTHER_TENANT));
  t.notOk(await allowed('owned', '+15550133', OTHER_TENANT));
  t.notOk(await allowed('verified', '+15550133', OTHER_TENANT));
  t.end();
});

t.test('docs/SANDBOX.md "Caller IDs": the sandbox takes any number but its reserved refused one', async (t) => {
  const sandbox = { name: 'sandbox', sandbox: true, callerIdPolicy: 'owned' as const };
  t.ok(await isCallerIdAllowed(sandbox, OTHER_TENANT, '+15550199', directory));
  t.notOk(await isCallerIdAllowed(sandbox, TENANT, SANDBOX_REFUSED_CALLER_ID, directory));
  t.end();
});

t.test('docs/API.md "Caller IDs": a refused from is caller_id_not_allowed before any INVITE, record or RTP port', async (t) => {
  const rig = await callRig(t);
  const result = await rig.service.place({ tenantId: TENANT, carrier: 'unit', from: '+15550199', to: '+15550188', record: false, agentUrl: 'wss://agent.example/stream' });
  t.same(result, { error: 'caller_id_not_allowed' });
  t.equal(rig.store.records.size, 0, 'no call was recorded');
  t.equal(rig.ports.inUse, 0, 'no RTP port was taken');
  t.equal(rig.phone.invites.length, 0, 'no INVITE was sent');
});
