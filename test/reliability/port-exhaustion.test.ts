/**
 * @module RTP port exhaustion: a gateway with two port pairs is filled by one sandbox call (our leg
 * and the sandbox far end's), then a new outbound call gets a 503 problem and an inbound INVITE a
 * 503 over real SIP; once the call hangs up every port binds again and both kinds of call go
 * through. Short form: 3 cycles under `npm test`; 200 under `npm run test:reliability`.
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';
import { LONG_RUN, scaled } from './scale.js';
import { DID, freeRtpRange, portsFree, startMediaGateway } from './support/media-gateway.js';

const CYCLES = scaled(3, 200);
const QUICK_HANGUPS = scaled(5, 100);

/** Recordings (.wav) this process holds open, read from /proc/self/fd; null where there is no /proc. */
function openRecordingFiles(): number | null {
  if (!existsSync('/proc/self/fd')) return null;
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).endsWith('.wav');
    } catch {
      return false;
    }
  }).length;
}

const udpHandles = (): number => process.getActiveResourcesInfo().filter((r) => r === 'UDPWrap').length;

/** Waits for a call's state, read with the key of its kind (docs/SANDBOX.md: a key sees only calls of its kind). */
async function callState(gw: TestGateway, id: string, state: string, key = gw.sandboxKey): Promise<ApiBody> {
  return waitFor(`call ${id} ${state}`, async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`, undefined, { key });
    return r.body.state === state ? r.body : undefined;
  });
}

/** Places an outbound sandbox call (the far end answers and echoes). */
function placeSandbox(gw: TestGateway, agentUrl: string): ReturnType<TestGateway['api']> {
  return gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: agentUrl });
}

t.test('RFC 3261 21.5.4: with every RTP port taken, new calls get 503 both ways, and everything comes back once the call ends', async (t) => {
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const range = await freeRtpRange(4);
  const gw = await startMediaGateway(t, { rtp: range, agentUrl: bot.url });
  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const target = `sip:${DID}@127.0.0.1:${gw.gateway.sip.udpPort}`;
  const invite = () => carrier.ua.invite({ target, from: 'sip:+15557770001@127.0.0.1', sdp: phone.offer });
  const handlesAtStart = udpHandles();
  const tally = { cycles: 0, outbound503: 0, inbound503: 0, outboundOk: 0, inboundOk: 0 };

  for (let cycle = 0; cycle < CYCLES; cycle++) {
    // One sandbox call holds both pairs: our carrier leg and the far end's.
    const first = await placeSandbox(gw, bot.url);
    if (first.status !== 200) return t.fail(`cycle ${cycle}: the call that fills the pool was refused: ${JSON.stringify(first.body)}`);
    await callState(gw, first.body.id, 'active');
    tally.outboundOk++;

    const refused = await placeSandbox(gw, bot.url);
    if (refused.status !== 503 || refused.body.code !== 'unavailable') {
      return t.fail(`cycle ${cycle}: POST /v1/calls with no port free answered ${refused.status} ${JSON.stringify(refused.body)}`);
    }
    tally.outbound503++;
    const status = await answered(invite()).then(() => 200, (error: { status?: number }) => error.status ?? 0);
    if (status !== 503) return t.fail(`cycle ${cycle}: an INVITE with no port free got ${status}, not 503`);
    tally.inbound503++;

    const hung = await gw.api('POST', `/v1/calls/${first.body.id}/hangup`);
    if (hung.body.state !== 'ended') return t.fail(`cycle ${cycle}: hangup left the call ${hung.body.state}`);
    await waitFor(`cycle ${cycle}: every port of ${range.min}-${range.max} binds again`, () => portsFree(range.min, range.max));

    // Recovery: an inbound call goes through (the phone hangs up), then the next cycle's outbound one.
    const { session } = await answered(invite());
    tally.inboundOk++;
    const inbound = await waitFor('the inbound call in the list', async () => {
      const r = await gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: gw.liveKey });
      return r.body.data.find((c) => c.state === 'active');
    });
    await session.bye();
    await callState(gw, inbound.id, 'ended', gw.liveKey);
    await waitFor(`cycle ${cycle}: ports free after the inbound call`, () => portsFree(range.min, range.max));
    tally.cycles++;
  }

  t.equal(tally.cycles, CYCLES, `${CYCLES} exhaustion and recovery cycles`);
  t.equal(tally.outbound503, CYCLES, 'every outbound call beyond the pool got a 503 problem with code unavailable');
  t.equal(tally.inbound503, CYCLES, 'every INVITE beyond the pool got 503 Service Unavailable');
  t.equal(tally.inboundOk, CYCLES, 'and after each hang-up an inbound call was answered');
  const last = await placeSandbox(gw, bot.url);
  t.equal(last.status, 200, 'after the last cycle an outbound call goes through');
  await callState(gw, last.body.id, 'active');
  await gw.api('POST', `/v1/calls/${last.body.id}/hangup`);
  await waitFor('ports free at the end', () => portsFree(range.min, range.max));
  await waitFor('no UDP socket left beyond those at the start', () => udpHandles() === handlesAtStart);
  t.pass(`UDP handles back to ${handlesAtStart}`);
  t.comment(JSON.stringify({ long: LONG_RUN, range, ...tally, handlesAtStart, handlesAtEnd: udpHandles() }));
});

t.test('RFC 3261 15.1.2: a BYE right after the 200 OK, while the recording opens, still finishes the recording and leaves no file open', async (t) => {
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const gw = await startMediaGateway(t, { rtp: await freeRtpRange(8), agentUrl: bot.url });
  const carrier = await startSipPhoneUa(t);
  const target = `sip:${DID}@127.0.0.1:${gw.gateway.sip.udpPort}`;
  for (let i = 0; i < QUICK_HANGUPS; i++) {
    const phone = await carrier.phone();
    const { session } = await answered(carrier.ua.invite({ target, from: 'sip:+15557770001@127.0.0.1', sdp: phone.offer }));
    await session.bye();
    phone.close();
  }
  const ended = await waitFor(`${QUICK_HANGUPS} calls ended with their recording`, async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound&state=ended&limit=200', undefined, { key: gw.liveKey });
    const details = await Promise.all(r.body.data.map((c) => gw.api('GET', `/v1/calls/${c.id}`, undefined, { key: gw.liveKey })));
    return details.length === QUICK_HANGUPS && details.every((d) => d.body.recording.available) ? details : undefined;
  });
  t.equal(ended.length, QUICK_HANGUPS, 'every call ended and has its recording');
  const dir = join(gw.dataDir, 'recordings', gw.tenantId);
  const sidecars = readdirSync(dir).filter((f) => f.endsWith('.wav.json')).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as { finalized: boolean });
  t.equal(sidecars.length, QUICK_HANGUPS);
  t.equal(sidecars.filter((m) => m.finalized).length, QUICK_HANGUPS, 'every recording finalized (its header written and its file closed)');
  const open = openRecordingFiles();
  if (open !== null) t.equal(open, 0, 'no recording file left open');
});
