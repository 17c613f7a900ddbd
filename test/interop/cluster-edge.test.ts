/**
 * docs/CLUSTER.md "The SIP edge" and "Drain": two engines (all-in-one gateways with the same
 * inventory, SIP on 127.0.0.42 and 127.0.0.43) behind Kamailio started from
 * sbc-config/kamailio/kamailio.cfg on 127.0.0.41, sipp as the carrier on 127.0.0.44. Inbound calls
 * spread over both engines and their BYEs reach the owner through the edge; an engine's outbound
 * call leaves through the edge (`sip.outbound_proxy`); a tenant-limit refusal reaches the carrier
 * as 503 without the scope header; a draining engine takes itself out of the edge's rotation by
 * JSON-RPC and new calls go to the other one; with none left the edge answers 503 itself.
 */
import t, { type Test } from 'tap';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { routeDidToFakeAgent, startTestGateway, waitFor, type TestGateway } from '../support/gateway-harness.js';
import { requestsIn, responsesIn, sippMessages, type SippPeer } from '../support/inbound-sipp-rig.js';
import { edgeAddress, startKamailioCluster, type KamailioCluster } from '../support/kamailio-cluster.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { freeMediaPort, freePort, SCENARIOS, startSipp } from '../support/sip-sipp.js';

t.setTimeout(300_000);

const EDGE_IP = '127.0.0.41';
const ENGINE_IPS = ['127.0.0.42', '127.0.0.43'] as const;
const CARRIER_IP = '127.0.0.44';
const DID = '+15550140';

interface Engine { gw: TestGateway; bot: FakeCustomAgent; destination: string }
interface ClusterRig { edge: KamailioCluster; engines: Engine[]; carrierUas: SippPeer }

/** A sipp carrier on CARRIER_IP: `args` after the scenario; its own folder and ports. */
async function carrier(t: Test, scenario: string, args: string[], ms = 90_000): Promise<SippPeer> {
  const cwd = tempWorkdir(t);
  symlinkSync('/usr/share/sip-tester', join(cwd, 'pcap'));
  const [port, media] = [await freePort(), await freeMediaPort()];
  const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, scenario), '-i', CARRIER_IP, '-p', String(port), '-mp', String(media), '-trace_msg', ...args], ms);
  return { run, cwd, port };
}

/** The carrier calling DID through the edge `count` times, `limit` at once, each held `holdMs`. */
async function callsThroughEdge(t: Test, rig: ClusterRig, o: { count: number; limit: number; holdMs: number; scenario?: string }): Promise<SippPeer> {
  return carrier(t, o.scenario ?? 'cluster-uac-rr.xml', [
    `${rig.edge.ip}:${rig.edge.port}`, '-s', DID, '-m', String(o.count), '-l', String(o.limit), '-r', '10', '-d', String(o.holdMs), '-timeout', '60s', '-timeout_error',
  ]);
}

/** The tenant's inbound calls on an engine, live and ended. */
async function inboundCalls(gw: TestGateway): Promise<{ id: string; state: string; carrier: string }[]> {
  const all = [];
  for (const query of ['direction=inbound&limit=100', 'direction=inbound&state=ended&limit=100']) {
    const r = await gw.api('GET', `/v1/calls?${query}`, undefined, { key: gw.liveKey });
    all.push(...(r.body.data as unknown as { id: string; state: string; carrier: string }[]));
  }
  return all;
}

/** Every inbound call on the engines, once each has ended. */
async function endedCalls(rig: ClusterRig, expected: number): Promise<Awaited<ReturnType<typeof inboundCalls>>[]> {
  return waitFor(`${expected} ended inbound calls`, async () => {
    const lists = await Promise.all(rig.engines.map((e) => inboundCalls(e.gw)));
    const calls = lists.flat();
    return calls.length === expected && calls.every((c) => c.state === 'ended') ? lists : undefined;
  }, 30_000);
}

async function startClusterRig(t: Test, capacity = 20): Promise<ClusterRig> {
  const at = await edgeAddress(EDGE_IP);
  const carrierUas = await carrier(t, 'cluster-uas-rr.xml', ['-m', '1', '-timeout', '120s']);
  const engines: Engine[] = [];
  for (const [i, ip] of ENGINE_IPS.entries()) {
    const gw = await startTestGateway(t, {
      logLevel: 'info',
      carriers: `carriers:\n  - name: trunk\n    inbound:\n      sources: ['${CARRIER_IP}']\n    outbound:\n      uri: "sip:${CARRIER_IP}:${carrierUas.port}"\n    options_ping_s: 0\n`,
      yaml: [
        `node_id: engine-${i}`,
        `sip:\n  host: ${ip}\n  trusted_proxies: ['${EDGE_IP}']\n  outbound_proxy: "${at.uri}"`,
        'calls:\n  allow_private_agent_urls: true\n  max_concurrent_per_tenant: 2',
        'shutdown:\n  drain_seconds: 15',
        `cluster:\n  capacity: ${capacity}\n  edge:\n    rpc_url: "${at.rpcUrl}"`,
      ].join('\n'),
    });
    const { bot } = await routeDidToFakeAgent(t, gw, { did: DID, carrier: 'trunk', externalAgentId: `bot-${i}` });
    engines.push({ gw, bot, destination: `sip:${ip}:${gw.gateway.sip.udpPort}` });
  }
  const edge = await startKamailioCluster(t, at, engines.map((e, i) => ({ destination: e.destination, duid: `engine-${i}` })));
  return { edge, engines, carrierUas };
}

t.test('docs/CLUSTER.md "The SIP edge": two engines behind Kamailio', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const rig = await startClusterRig(t);
  let total = 0;

  await t.test('docs/CLUSTER.md "The SIP edge": inbound calls go round robin over both engines, matched to the carrier by X-VGW-Source; their BYEs reach the owner through the edge', async (t) => {
    const run = await callsThroughEdge(t, rig, { count: 4, limit: 1, holdMs: 300 });
    const done = await run.run.done;
    t.equal(done.code, 0, `the carrier's 4 calls completed: ${done.stderr.slice(0, 300)}`);
    const log = sippMessages(run);
    t.equal(responsesIn(log, 200, 'BYE').length, 4, 'every BYE was answered 200 by the engine that owns the call');
    t.ok(requestsIn(log, 'BYE').every((b) => new RegExp(`^Route: <sip:${EDGE_IP.replaceAll('.', '\\.')}:${rig.edge.port};lr`, 'm').test(b)), 'the BYEs followed the edge\'s Record-Route');
    total = 4;
    const lists = await endedCalls(rig, total);
    t.same(lists.map((l) => l.length), [2, 2], 'each engine took two calls');
    for (const [i, list] of lists.entries()) {
      const gw = rig.engines[i]!.gw;
      for (const call of list) {
        t.equal(call.carrier, 'trunk', 'matched by the carrier\'s address the edge forwarded');
        const detail = await gw.api('GET', `/v1/calls/${call.id}`, undefined, { key: gw.liveKey });
        t.match(detail.body.cdr, { end_reason: 'completed', hangup_by: 'caller' }, 'ended by the carrier\'s BYE');
      }
    }
  });

  await t.test('docs/CLUSTER.md "The SIP edge" / RFC 3261 8.1.2: an engine\'s outbound call leaves through the edge; the carrier sees the edge\'s Via and Record-Route', async (t) => {
    const gw = rig.engines[0]!.gw;
    const placed = await gw.api('POST', '/v1/calls', { from: DID, to: '+15550199', carrier: 'trunk', agent_ws_url: rig.engines[0]!.bot.url }, { key: gw.liveKey });
    t.equal(placed.status, 200, JSON.stringify(placed.body));
    const id = placed.body.id;
    await waitFor('the outbound call answered', async () => (await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey })).body.state === 'active', 20_000);
    t.equal((await gw.api('POST', `/v1/calls/${id}/hangup`, {}, { key: gw.liveKey })).status, 200);
    const done = await rig.carrierUas.run.done;
    t.equal(done.code, 0, `the carrier answered and got the BYE: ${done.stderr.slice(0, 300)}`);
    const log = sippMessages(rig.carrierUas);
    const invite = requestsIn(log, 'INVITE')[0] ?? '';
    t.match(invite, new RegExp(`^Via: SIP/2\\.0/UDP ${EDGE_IP.replaceAll('.', '\\.')}:${rig.edge.port};`, 'm'), 'the top Via is the edge\'s');
    t.match(invite, new RegExp(`^Record-Route: <sip:${EDGE_IP.replaceAll('.', '\\.')}:${rig.edge.port};lr`, 'm'), 'the edge record-routed');
    t.notMatch(invite, /^Route:/m, 'the engine\'s pre-loaded Route stopped at the edge');
    t.notMatch(invite, /^X-VGW-/m, 'no internal header reaches the carrier');
    t.match(requestsIn(log, 'BYE')[0] ?? '', new RegExp(`^Via: SIP/2\\.0/UDP ${EDGE_IP.replaceAll('.', '\\.')}:${rig.edge.port};`, 'm'), 'the engine\'s BYE came through the edge');
  });

  await t.test('docs/CLUSTER.md "Drain": a tenant-limit refusal is call-level: the carrier gets the engine\'s 503, without X-VGW-Scope and without trying the other engine', async (t) => {
    const held = await callsThroughEdge(t, rig, { count: 4, limit: 4, holdMs: 8000 });
    await waitFor('two live calls on each engine', async () => {
      const live = await Promise.all(rig.engines.map(async (e) => (await e.gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: e.gw.liveKey })).body.data.length));
      return live.every((n) => n === 2);
    }, 20_000);
    const refused = await callsThroughEdge(t, rig, { count: 1, limit: 1, holdMs: 0, scenario: 'cluster-uac-503.xml' });
    const done = await refused.run.done;
    t.equal(done.code, 0, `the carrier got 503: ${done.stderr.slice(0, 300)}`);
    const reply = responsesIn(sippMessages(refused), 503)[0] ?? '';
    t.notMatch(reply, /^X-VGW-Scope/im, 'the edge removed the scope header');
    t.notMatch(reply, /No engine available/, 'the engine\'s own 503, not the edge\'s');
    t.match(reply, /^Retry-After: 5$/m);
    const refusals = rig.engines.flatMap((e) => e.gw.logs.filter((l) => l.msg === 'inbound call refused: over a concurrency limit'));
    t.equal(refusals.length, 1, 'one engine refused it: the edge did not try the other');
    t.equal((await held.run.done).code, 0, 'the held calls completed');
    total += 4;
    await endedCalls(rig, total);
  });

  await t.test('docs/CLUSTER.md "Drain": a draining engine sets itself inactive at the edge by JSON-RPC; new INVITEs go to the other engine', async (t) => {
    const before = await Promise.all(rig.engines.map(async (e) => (await inboundCalls(e.gw)).length));
    const long = await callsThroughEdge(t, rig, { count: 1, limit: 1, holdMs: 6000 });
    const owner = await waitFor('the long call on one engine', async () => {
      const now = await Promise.all(rig.engines.map(async (e) => (await inboundCalls(e.gw)).length));
      const i = now.findIndex((n, k) => n > before[k]!);
      return i >= 0 ? i : undefined;
    }, 20_000);
    const draining = rig.engines[owner]!;
    const other = rig.engines[1 - owner]!;
    // What SIGTERM does (src/main.ts): stop, which drains while the live call goes on.
    const stopped = draining.gw.gateway.stop('SIGTERM');
    await waitFor('the edge marks the draining engine inactive', async () => (await rig.edge.stateOf(draining.destination))?.startsWith('I'), 10_000);
    t.ok(draining.gw.logs.some((l) => l.msg === 'inactive at the SIP edge'), 'by the engine\'s own JSON-RPC call');
    t.match(await rig.edge.stateOf(other.destination), /^A/, 'the other engine stays active');
    const otherBefore = (await inboundCalls(other.gw)).length;
    const after = await callsThroughEdge(t, rig, { count: 2, limit: 1, holdMs: 300 });
    const done = await after.run.done;
    t.equal(done.code, 0, `both new calls completed: ${done.stderr.slice(0, 300)}`);
    t.equal(responsesIn(sippMessages(after), 200).length, 2, 'both answered');
    await waitFor('both on the other engine', async () => (await inboundCalls(other.gw)).length === otherBefore + 2, 10_000);
    t.equal((await long.run.done).code, 0, 'the draining engine\'s live call went on to its end');
    t.match(await rig.edge.stateOf(draining.destination), /^I/, 'still inactive: its OPTIONS answers (503 while draining) do not bring it back');
    await stopped;
  });

  await t.test('docs/CLUSTER.md "The SIP edge": with every engine drained the edge answers 503 with Retry-After: 5 itself', async (t) => {
    for (const e of rig.engines) await e.gw.gateway.stop('SIGTERM');
    const refused = await callsThroughEdge(t, rig, { count: 1, limit: 1, holdMs: 0, scenario: 'cluster-uac-503.xml' });
    const done = await refused.run.done;
    t.equal(done.code, 0, `the carrier got 503: ${done.stderr.slice(0, 300)}`);
    const reply = responsesIn(sippMessages(refused), 503)[0] ?? '';
    t.match(reply, /^SIP\/2\.0 503 No engine available$/m, 'the edge\'s own answer');
    t.match(reply, /^Retry-After: 5$/m);
  });
});

t.test('docs/CLUSTER.md "Drain": an engine at cluster.capacity answers a node-level 503 and the edge gives the INVITE to the other engine', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const rig = await startClusterRig(t, 1);
  const long = await callsThroughEdge(t, rig, { count: 1, limit: 1, holdMs: 8000 });
  const full = await waitFor('the long call on one engine', async () => {
    const live = await Promise.all(rig.engines.map(async (e) => (await e.gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: e.gw.liveKey })).body.data.length));
    const i = live.indexOf(1);
    return i >= 0 ? i : undefined;
  }, 20_000);
  const other = rig.engines[1 - full]!;
  // Round robin: of two calls one on each engine, the full one refusing its turn.
  const more = await callsThroughEdge(t, rig, { count: 2, limit: 1, holdMs: 300 });
  const done = await more.run.done;
  t.equal(done.code, 0, `both calls completed: ${done.stderr.slice(0, 300)}`);
  t.equal(responsesIn(sippMessages(more), 200).length, 2, 'both answered');
  t.notOk(/^SIP\/2\.0 503/m.test(sippMessages(more)), 'the carrier never saw the node-level 503');
  t.ok(rig.engines[full]!.gw.logs.some((l) => l.msg === 'inbound call refused: this engine is at capacity'), 'the full engine refused its turn');
  await waitFor('both on the other engine', async () => (await inboundCalls(other.gw)).length === 2, 10_000);
  t.equal((await long.run.done).code, 0);
});
