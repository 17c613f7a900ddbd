/**
 * Storage failures (docs/RELIABILITY.md, storage failures and the CDR journal): another process
 * holds the gateway's SQLite database with BEGIN EXCLUSIVE while calls end. The gateway must stay
 * up, end the call completely (BYE, media, agent, recording), free its concurrency slot, keep the
 * other calls' media flowing and /healthz fast, and write the CDR once the lock is gone, also
 * across a restart. Real SIP and RTP on loopback (a carrier's user agent calls in), real agent
 * WebSockets, a real second SQLite connection in a child process.
 */
import t, { type Test } from 'tap';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionDialog } from '../../src/engine/sip/index.js';
import { CDR_JOURNAL_FILE } from '../../src/storage/cdr-journal.js';
import { databasePath } from '../../src/storage/index.js';
import type { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { routeDidToFakeAgent, startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa, type SipPhone } from '../support/sip-phone.js';
import { holdExclusiveLock } from '../support/sqlite-lock.js';

const CARRIERS = "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n";
/** Three live calls at most: a slot that is never freed shows as a refused fourth call. */
const YAML = 'calls:\n  allow_private_agent_urls: true\n  max_concurrent_per_tenant: 3\n  record_inbound: true\nstorage:\n  busy_timeout_ms: 250\n  retry_seconds: 1';

interface InboundLeg {
  did: string;
  bot: FakeCustomAgent;
  phone: SipPhone;
  session: SessionDialog;
  byeReceived: () => boolean;
  id: string;
}

type Carrier = Awaited<ReturnType<typeof startSipPhoneUa>>;

/** A caller on `did` answered by the gateway, its agent started, its call id known. */
async function callIn(t: Test, gw: TestGateway, carrier: Carrier, did: string, bot: FakeCustomAgent): Promise<InboundLeg> {
  const phone = await carrier.phone();
  const { session, answer } = await answered(carrier.ua.invite({ target: `sip:${did}@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770001@127.0.0.1', sdp: phone.offer }));
  phone.useAnswer(answer);
  phone.startSending();
  let bye = false;
  session.events.on('bye', () => { bye = true; });
  await waitFor(`the agent of ${did} started`, () => bot.events().includes('start'));
  const id = await waitFor(`the call to ${did} listed active`, async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: gw.liveKey });
    return r.body.data.find((c) => c.to === did && c.state === 'active')?.id;
  });
  t.teardown(() => { if (!session.isEnded) void session.bye().catch(() => undefined); });
  return { did, bot, phone, session, byeReceived: () => bye, id };
}

/** How long /healthz takes, the slowest of `n` requests. */
async function slowestHealthz(gw: TestGateway, n: number): Promise<number> {
  let slowest = 0;
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    const r = await fetch(`${gw.base}/healthz`);
    await r.text();
    slowest = Math.max(slowest, performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return slowest;
}

const detail = async (gw: TestGateway, id: string, key: string): Promise<ApiBody> => (await gw.api('GET', `/v1/calls/${id}`, undefined, { key })).body;

async function routed(t: Test, gw: TestGateway, n: number): Promise<{ did: string; bot: FakeCustomAgent }[]> {
  const out = [];
  for (let i = 0; i < n; i++) {
    const did = `+1555010${i}`;
    const { bot } = await routeDidToFakeAgent(t, gw, { did, carrier: 'trunk', externalAgentId: `desk-${i}` });
    out.push({ did, bot });
  }
  return out;
}

t.test('storage failures: an agent hang-up and an API hang-up while another process holds the database lock end the call completely; the CDR lands once the lock is gone', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  const routes = await routed(t, gw, 4);
  const carrier = await startSipPhoneUa(t);
  const [agentEnded, other, apiEnded] = [
    await callIn(t, gw, carrier, routes[0]!.did, routes[0]!.bot),
    await callIn(t, gw, carrier, routes[1]!.did, routes[1]!.bot),
    await callIn(t, gw, carrier, routes[2]!.did, routes[2]!.bot),
  ];
  const baseline = await slowestHealthz(gw, 10);

  const lock = await holdExclusiveLock(t, databasePath(gw.dataDir));
  t.teardown(() => lock.release());
  agentEnded.bot.core.closeSocket(1000, 'goodbye');
  await waitFor('the BYE of the call the agent hung up', () => agentEnded.byeReceived(), 10_000);
  t.pass('BYE reaches the caller although the database refuses the call record');

  const hangup = await gw.api('POST', `/v1/calls/${apiEnded.id}/hangup`, undefined, { key: gw.liveKey });
  if (hangup.status === 503) {
    t.equal(hangup.body.code, 'unavailable');
    t.ok(hangup.headers.get('retry-after'), 'a 503 says when to retry');
  } else {
    t.equal(hangup.status, 200, `an API hang-up during the lock succeeds or answers 503: ${JSON.stringify(hangup.body)}`);
    t.equal(hangup.body.state, 'ended');
  }
  await waitFor('the BYE of the call hung up through the API', () => apiEnded.byeReceived(), 10_000);

  const heardBefore = other.phone.received.length;
  const lockedSlowest = await slowestHealthz(gw, 20);
  t.ok(other.phone.received.length > heardBefore + 20, `the other call's media keeps flowing during the lock (${other.phone.received.length - heardBefore} packets in about a second)`);
  t.ok(lockedSlowest < baseline + 2000, `/healthz stays fast during the lock: slowest ${lockedSlowest.toFixed(0)} ms, ${baseline.toFixed(0)} ms before it (a 5 s busy wait per write stalled it for seconds)`);
  t.ok(existsSync(join(gw.dataDir, CDR_JOURNAL_FILE)), 'the refused final records are in the CDR journal');
  t.equal((await detail(gw, agentEnded.id, gw.liveKey)).state, 'active', 'reads show what is stored: not ended yet');
  const phone = await carrier.phone();
  const refused = await answered(carrier.ua.invite({ target: `sip:${routes[3]!.did}@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770001@127.0.0.1', sdp: phone.offer }))
    .then(() => 200, (err: { status?: number }) => err.status);
  t.equal(refused, 503, 'RFC 3261 21.5.4: a new inbound call whose record cannot be written gets 503, so the carrier may try another route');
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: routes[3]!.bot.url });
  t.match({ status: placed.status, code: placed.body.code }, { status: 503, code: 'unavailable' }, 'placing a call whose record cannot be written: 503 unavailable, nothing placed');
  t.ok(placed.headers.get('retry-after'), 'with Retry-After');

  await lock.release();
  const ended = await waitFor('the agent-ended CDR written after the lock', async () => {
    const d = await detail(gw, agentEnded.id, gw.liveKey);
    return d.state === 'ended' ? d : undefined;
  }, 10_000);
  t.match(ended, { end_reason: 'completed', cdr: { hangup_by: 'agent' }, recording: { available: true } }, 'the CDR names the agent, with its recording');
  const apiCdr = await waitFor('the API-ended CDR', async () => {
    const d = await detail(gw, apiEnded.id, gw.liveKey);
    return d.state === 'ended' ? d : undefined;
  }, 10_000);
  t.match(apiCdr, { cdr: { hangup_by: 'api' } });
  await waitFor('the journal emptied', () => !existsSync(join(gw.dataDir, CDR_JOURNAL_FILE)));

  const retried = await gw.api('POST', `/v1/calls/${apiEnded.id}/hangup`, undefined, { key: gw.liveKey });
  t.equal(retried.status, 409, 'a retried hang-up answers that the call is over, not 500');
  t.equal(retried.body.code, 'call_not_active');

  // Two slots freed: a new call is taken while the third is still up (limit 3).
  const fourth = await callIn(t, gw, carrier, routes[3]!.did, routes[3]!.bot);
  t.ok(fourth.id, 'the slots of the ended calls are free again');
  t.equal((await detail(gw, other.id, gw.liveKey)).state, 'active', 'the other call is still up');
});

t.test('storage failures: a CDR refused by a locked database survives a restart in the CDR journal', async (t) => {
  // Outside the test folder: the second gateway's harness makes a fresh test folder.
  const dataDir = mkdtempSync(join(tmpdir(), 'vgw-outage-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML, dataDir });
  const [route] = await routed(t, gw, 1);
  const carrier = await startSipPhoneUa(t);
  const leg = await callIn(t, gw, carrier, route!.did, route!.bot);
  const lock = await holdExclusiveLock(t, databasePath(gw.dataDir));
  t.teardown(() => lock.release());
  leg.bot.core.closeSocket(1000, 'goodbye');
  await waitFor('the BYE', () => leg.byeReceived(), 10_000);
  await gw.gateway.stop('restart during the lock');
  t.ok(existsSync(join(gw.dataDir, CDR_JOURNAL_FILE)), 'the final record waits in the journal when the gateway stops');
  await lock.release();

  const again = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML, dataDir });
  const stored = await detail(again, leg.id, gw.liveKey);
  t.match(stored, { state: 'ended', end_reason: 'completed', cdr: { hangup_by: 'agent' }, recording: { available: true } },
    'replayed at start, before recovery could take it for a call a crash cut off (gateway_restart)');
  // The journal is rewritten on its own queue after the replay's write: emptied soon, not at once.
  await waitFor('the journal emptied once written', () => !existsSync(join(gw.dataDir, CDR_JOURNAL_FILE)), 10_000);
  t.pass('the journal is emptied once written');
});
