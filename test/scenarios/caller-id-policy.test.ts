/**
 * @module The carriers' caller-ID policy end to end (docs/API.md "Caller IDs"): a real gateway with
 * live carriers whose far end is a SIP user agent on loopback, the operator's `vgw caller-id add`
 * against its data folder, and POST /v1/calls and GET /v1/caller-ids over HTTP for two tenants.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { systemClock } from '../../src/common/clock.js';
import { SandboxFarEnd } from '../../src/engine/calls/sandbox/sandbox-far-end.js';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { testPortPool } from '../support/rtp-peer.js';

const run = promisify(execFile);

async function vgw(gw: TestGateway, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/vgw.ts', ...args], { env: { ...process.env, VGW_DATA_DIR: gw.dataDir } });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const carrier = (name: string, uri: string, policy?: string) =>
  `  - name: ${name}\n    outbound:\n      uri: "${uri}"\n    codecs: [PCMU]\n    options_ping_s: 0\n${policy ? `    caller_id_policy: ${policy}\n` : ''}`;

t.test('docs/API.md "Caller IDs": owned, verified and any carriers; verified caller IDs are per tenant and listed only to their tenant', async (t) => {
  const farEnd = await SandboxFarEnd.start({ clock: systemClock, ports: testPortPool(), ringMs: 100, announcement: new Int16Array(800) });
  t.teardown(() => farEnd.stop());
  const gw = await startTestGateway(t, {
    yaml: 'calls:\n  allow_private_agent_urls: true',
    carriers: `carriers:\n${carrier('owned', farEnd.uri)}${carrier('strict', farEnd.uri, 'verified')}${carrier('open', farEnd.uri, 'any')}`,
  });
  const other = await gw.gateway.store.tenants.create('globex');
  const otherKey = (await gw.gateway.store.apiKeys.create(other.id, 'live')).apiKey;
  const place = (from: string, carrierName: string, key = gw.liveKey) =>
    gw.api('POST', '/v1/calls', { from, to: '+15550199', carrier: carrierName, agent_ws_url: 'ws://127.0.0.1:9/agent' }, { key });
  const refused = async (from: string, carrierName: string, key: string | undefined, why: string) => {
    const answer = await place(from, carrierName, key);
    t.equal(answer.status, 400, `${why}: 400`);
    t.equal(answer.body.code, 'caller_id_not_allowed', why);
    t.match(answer.body.errors, [{ path: '/from' }], 'the field is named');
  };
  const placed = async (from: string, carrierName: string, key: string | undefined, why: string) => {
    const answer = await place(from, carrierName, key);
    t.equal(answer.status, 200, `${why}: ${JSON.stringify(answer.body)}`);
    await gw.api('POST', `/v1/calls/${answer.body.id}/hangup`, undefined, { key });
  };

  await refused('+15550100', 'owned', gw.liveKey, 'a number nobody holds, on an owned carrier');
  t.same((await gw.api('GET', '/v1/calls', undefined, { key: gw.liveKey })).body.data, [], 'a refused call leaves no call');
  await placed('+15550100', 'open', gw.liveKey, 'any number on an any carrier');

  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'owned');
  await placed('+15550100', 'owned', gw.liveKey, 'a number the tenant holds on that carrier');
  await refused('+15550100', 'strict', gw.liveKey, 'holding the number is not enough on a verified carrier');
  await refused('+15550100', 'owned', otherKey, "another tenant's held number");

  const added = await vgw(gw, 'caller-id', 'add', gw.tenantId, '+15550177');
  t.equal(added.code, 0, added.stderr);
  t.match(JSON.parse(added.stdout), { tenant_id: gw.tenantId, phone_number: '+15550177' });
  const again = await vgw(gw, 'caller-id', 'add', gw.tenantId, '+15550177');
  t.equal(again.code, 1, 'verifying twice is an error');
  t.match(again.stderr, /"code":"already_verified"/);
  const bad = await vgw(gw, 'caller-id', 'add', gw.tenantId, '5550177');
  t.equal(bad.code, 2, 'a number that is not E.164 is a usage error');
  t.match((await vgw(gw, 'caller-id', 'add', 'ten_nobody', '+15550177')).stderr, /"code":"tenant_not_found"/);

  await placed('+15550177', 'owned', gw.liveKey, 'a verified caller ID on an owned carrier');
  await placed('+15550177', 'strict', gw.liveKey, 'a verified caller ID on a verified carrier');
  await refused('+15550177', 'strict', otherKey, "another tenant's verified caller ID");

  const mine = await gw.api('GET', '/v1/caller-ids', undefined, { key: gw.liveKey });
  t.equal(mine.status, 200);
  t.match(mine.body.data, [{ phone_number: '+15550177' }]);
  t.equal(mine.body.data.length, 1);
  const theirs = await gw.api('GET', '/v1/caller-ids', undefined, { key: otherKey });
  t.same(theirs.body.data, [], "the other tenant sees none of this tenant's caller IDs");
});

t.test('docs/SANDBOX.md "Caller IDs": a sandbox key presents any number except the reserved refused one', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true' });
  const ok = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: 'ws://127.0.0.1:9/agent' });
  t.equal(ok.status, 200, JSON.stringify(ok.body));
  await gw.api('POST', `/v1/calls/${ok.body.id}/hangup`);
  const refused = await gw.api('POST', '/v1/calls', { from: '+15005550001', to: '+15550199', carrier: 'sandbox', agent_ws_url: 'ws://127.0.0.1:9/agent' });
  t.equal(refused.status, 400);
  t.equal(refused.body.code, 'caller_id_not_allowed');
});
