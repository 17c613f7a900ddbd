/**
 * docs/API.md "Answering-machine detection": `on_machine` and `wait_for_beep` are taken with
 * `machine_detection: hold_until_result` only (and `wait_for_beep` with `on_machine: connect`);
 * anything else is a 400 `machine_detection_mismatch` naming the field, and nothing is placed.
 */
import t, { type Test } from 'tap';
import type { HostResolver } from '../../src/common/outbound-policy.js';
import { buildApp } from '../support/build-app.js';
import { FakeCallControl } from '../support/fake-call-control.js';

const resolveHost: HostResolver = () => Promise.resolve([{ address: '93.184.215.14', family: 4 }]);
const CALL = { from: '+15550100', to: '+15550199', carrier: 'telnyx', agent_ws_url: 'wss://agent.example.com/stream' };

async function setup(t: Test) {
  let fake: FakeCallControl | undefined;
  const h = await buildApp(t, { resolveHost, callControl: ({ store, clock }) => (fake = new FakeCallControl(store.calls, clock)) });
  const acme = await h.createTenant('Acme');
  const place = (body: Record<string, unknown>) => h.request({ method: 'POST', url: '/v1/calls', payload: { ...CALL, ...body }, headers: acme.auth });
  return { fake: fake!, place, tenantId: acme.tenant.id };
}

t.test('docs/API.md "Answering-machine detection": on_machine and wait_for_beep without hold_until_result are 400 machine_detection_mismatch', async (t) => {
  const { fake, place } = await setup(t);
  const cases: [Record<string, unknown>, string][] = [
    [{ on_machine: 'connect' }, '/on_machine'],
    [{ machine_detection: 'off', wait_for_beep: true }, '/wait_for_beep'],
    [{ machine_detection: 'async', on_machine: 'hangup' }, '/on_machine'],
    [{ machine_detection: 'async', wait_for_beep: false }, '/wait_for_beep'],
    [{ machine_detection: 'hold_until_result', wait_for_beep: true }, '/wait_for_beep'],
    [{ machine_detection: 'hold_until_result', on_machine: 'hangup', wait_for_beep: true }, '/wait_for_beep'],
  ];
  for (const [body, path] of cases) {
    const res = await place(body);
    t.equal(res.statusCode, 400, JSON.stringify(body));
    t.equal(res.headers['content-type'], 'application/problem+json');
    const problem = JSON.parse(res.body) as { code: string; errors: { path: string }[] };
    t.equal(problem.code, 'machine_detection_mismatch');
    t.same(problem.errors.map((e) => e.path), [path]);
  }
  const first = JSON.parse((await place({ carrier: 'nowhere', on_machine: 'connect' })).body) as { code: string };
  t.equal(first.code, 'machine_detection_mismatch', 'docs/API.md "Call commands": a body check, before the carrier is looked up');
  t.same(fake.placed, [], 'nothing placed');
});

t.test('docs/API.md "Answering-machine detection": hold_until_result is placed with on_machine hangup and no beep wait by default', async (t) => {
  const { fake, place, tenantId } = await setup(t);
  t.equal((await place({ machine_detection: 'hold_until_result' })).statusCode, 200);
  t.equal((await place({ machine_detection: 'hold_until_result', on_machine: 'connect', wait_for_beep: true })).statusCode, 200);
  const base = { tenantId, from: CALL.from, to: CALL.to, carrier: 'telnyx', agentUrl: CALL.agent_ws_url, record: false, machineDetection: 'hold_until_result' };
  t.same(fake.placed, [{ ...base, onMachine: 'hangup', waitForBeep: false }, { ...base, onMachine: 'connect', waitForBeep: true }]);
  const bad = await place({ machine_detection: 'hold_until_result', on_machine: 'voicemail' });
  t.equal(JSON.parse(bad.body).code, 'validation_failed', 'an unknown on_machine is a schema violation');
});
