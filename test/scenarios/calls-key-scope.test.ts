/**
 * docs/SANDBOX.md, Keys and calls: a sandbox key sees and commands only calls on the sandbox
 * carrier, a live key only calls on live carriers, on every call endpoint. Over the whole product:
 * a live carrier that is a separate SIP user agent on loopback, real calls, real HTTP.
 */
import t from 'tap';
import { systemClock } from '../../src/common/clock.js';
import { SandboxFarEnd } from '../../src/engine/calls/sandbox/sandbox-far-end.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type TestGateway } from '../support/gateway-harness.js';
import { testPortPool } from '../support/rtp-peer.js';

const ALLOW_LOCAL_AGENTS = 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 5';

/** The problem body without its request id, to compare two answers. */
const problemOf = (body: Record<string, unknown>): Record<string, unknown> => {
  const { request_id: _ignored, ...rest } = body;
  return rest;
};

async function activeCall(gw: TestGateway, key: string, carrier: string, agentUrl: string): Promise<{ id: string; controlId: string }> {
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier, agent_ws_url: agentUrl }, { key });
  if (placed.status !== 200) throw new Error(`placing on ${carrier}: ${placed.status} ${JSON.stringify(placed.body)}`);
  await waitFor(`the ${carrier} call active`, async () => (await gw.api('GET', `/v1/calls/${placed.body.id}`, undefined, { key })).body.state === 'active');
  return { id: placed.body.id, controlId: placed.body.call_control_id };
}

t.test('docs/SANDBOX.md: a key neither sees nor commands calls of the other kind; they answer like missing ids', async (t) => {
  const farEnd = await SandboxFarEnd.start({ clock: systemClock, ports: testPortPool(), ringMs: 100, announcement: new Int16Array(800) });
  t.teardown(() => farEnd.stop());
  const gw = await startTestGateway(t, {
    yaml: ALLOW_LOCAL_AGENTS,
    carriers: `carriers:\n  - name: far\n    outbound:\n      uri: "${farEnd.uri}"\n    codecs: [PCMU]\n    options_ping_s: 0\n`,
  });
  // The caller-ID policy `owned` (docs/API.md "Caller IDs"): the tenant holds the number it calls from.
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'far');
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const live = await activeCall(gw, gw.liveKey, 'far', bot.url);
  const sandbox = await activeCall(gw, gw.sandboxKey, 'sandbox', bot.url);
  t.equal(farEnd.activeCalls, 1, 'the live carrier holds the live call');

  const keys = { live: gw.liveKey, sandbox: gw.sandboxKey };
  for (const [kind, key, own, other] of [['sandbox', keys.sandbox, sandbox, live], ['live', keys.live, live, sandbox]] as const) {
    const listed = await gw.api('GET', '/v1/calls', undefined, { key });
    t.same(listed.body.data.map((c) => c.id), [own.id], `a ${kind} key lists only its own kind of call`);
    const missing = problemOf((await gw.api('GET', '/v1/calls/call_0000000000never', undefined, { key })).body);
    for (const path of [`/v1/calls/${other.id}`, `/v1/calls/${other.id}/transcript`, `/v1/calls/${other.id}/recording`]) {
      const answer = await gw.api('GET', path, undefined, { key });
      t.equal(answer.status, 404, `GET ${path.replace(other.id, '{id}')} with a ${kind} key`);
      t.equal(answer.body.code, 'not_found');
    }
    t.same(problemOf((await gw.api('GET', `/v1/calls/${other.id}`, undefined, { key })).body), missing, 'identical to a missing id');
    for (const command of ['hold', 'unhold', 'hangup']) {
      const answer = await gw.api('POST', `/v1/calls/${other.id}/${command}`, undefined, { key });
      t.equal(answer.status, 404, `POST /v1/calls/{id}/${command} with a ${kind} key`);
      t.same(problemOf(answer.body), missing, `${command}: identical to a missing id`);
    }
    const transfer = await gw.api('POST', '/v1/calls/transfer', { call_control_id: other.controlId, to: '+15550142' }, { key });
    t.equal(transfer.status, 404, `POST /v1/calls/transfer with a ${kind} key`);
    t.equal(transfer.body.code, 'not_found');
  }

  t.equal(farEnd.activeCalls, 1, 'no transfer INVITE reached the live carrier');
  for (const [call, key] of [[live, keys.live], [sandbox, keys.sandbox]] as const) {
    const detail = await gw.api('GET', `/v1/calls/${call.id}`, undefined, { key });
    t.match(detail.body, { state: 'active', on_hold: false, transfer: null }, 'each call is untouched');
  }

  const held = await gw.api('POST', `/v1/calls/${live.id}/hold`, undefined, { key: keys.live });
  t.equal(held.status, 200, 'the live key commands its live call');
  t.equal((await gw.api('POST', `/v1/calls/${sandbox.id}/hold`, undefined, { key: keys.sandbox })).status, 200, 'the sandbox key its sandbox call');
  for (const [call, key] of [[live, keys.live], [sandbox, keys.sandbox]] as const) {
    t.equal((await gw.api('POST', `/v1/calls/${call.id}/hangup`, undefined, { key })).body.state, 'ended');
  }
  for (const [kind, key, own] of [['sandbox', keys.sandbox, sandbox], ['live', keys.live, live]] as const) {
    const ended = await gw.api('GET', '/v1/calls?state=ended', undefined, { key });
    t.same(ended.body.data.map((c) => c.id), [own.id], `state=ended with a ${kind} key lists only its own kind`);
  }
});
