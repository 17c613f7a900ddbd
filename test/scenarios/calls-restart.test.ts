/**
 * Restart safety (docs/RELIABILITY.md "Crash during live calls, and secrets", docs/API.md "Calls" and docs/CONFIGURATION.md "Operator surface"): the gateway process is
 * killed (SIGKILL, no drain) in the middle of a recorded sandbox call; started again on the same
 * data folder, it ends the call `gateway_restart`, writes its CDR, and repairs and keeps the
 * recording. And a process told to stop while a far end leaves its BYE unanswered still exits.
 */
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';
import { startGatewayProcess, writeGatewayConfig, type GatewayProcess } from '../support/gateway-process.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { freePort, SCENARIOS, startSipp } from '../support/sip-sipp.js';

const run = promisify(execFile);

/** Runs src/main.ts with VGW_CONFIG set to `configFile`; resolves once the control API listens. */
const startGateway = (t: Test, configFile: string): Promise<GatewayProcess> => startGatewayProcess(t, { VGW_CONFIG: configFile });

interface CallView {
  id: string;
  state: string;
  end_reason: string | null;
  record: boolean;
  cdr: { hangup_by: string; end_reason: string; answered_at: string | null; ended_at: string } | null;
  recording: { available: boolean };
}

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: CallView & { data?: CallView[] } }> {
  const res = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as CallView & { data?: CallView[] } };
}

/** A config file for a gateway on loopback, port 0, that allows agents on 127.0.0.1. */
/** The RIFF and data sizes a WAV header claims, and its channel count. */
function wavSizes(wav: Buffer): { riff: number; data: number; channels: number; rate: number } {
  return { riff: wav.readUInt32LE(4), data: wav.readUInt32LE(40), channels: wav.readUInt16LE(22), rate: wav.readUInt32LE(24) };
}

t.test('restart safety: a call cut off by SIGKILL ends gateway_restart with its CDR and a repaired recording', async (t) => {
  const { configFile, dataDir } = writeGatewayConfig(t.testdir({}));
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());

  const first = await startGateway(t, configFile);
  const key = /sandbox key: (vgw_test_[0-9A-Za-z]+)/.exec(first.output())?.[1];
  if (!key) return t.fail(`no sandbox key printed:\n${first.output()}`);
  const placed = await api(first.base, key, 'POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url, record: true });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const id = placed.body.id;
  await waitFor('call active', async () => (await api(first.base, key, 'GET', `/v1/calls/${id}`)).body.state === 'active', 20_000);
  // Three seconds of call audio reached the agent: the recorder has written chunks by now.
  await bot.core.until(() => bot.receivedAudio().length >= 3 * 8000);

  first.child.kill('SIGKILL');
  await once(first.child, 'exit');
  const tenantId = /tenant id:\s+(ten_\S+)/.exec(first.output())?.[1] ?? '';
  const file = join(dataDir, 'recordings', tenantId, `${id}.wav`);
  const before = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { finalized: boolean };
  t.equal(before.finalized, false, 'the crash left the recording unfinished');
  const cutSize = statSync(file).size;
  const cutHeader = wavSizes(readFileSync(file));
  t.comment(`left by the crash: ${cutSize} bytes on disk, header says data ${cutHeader.data}`);

  const second = await startGateway(t, configFile);
  t.match(second.output(), /ended calls left unfinished by a restart/, 'recovery ran at start');
  const ended = await api(second.base, key, 'GET', `/v1/calls/${id}`);
  t.equal(ended.status, 200);
  t.equal(ended.body.state, 'ended');
  t.equal(ended.body.end_reason, 'gateway_restart');
  t.ok(ended.body.cdr, 'a CDR was written');
  t.equal(ended.body.cdr?.hangup_by, 'gateway');
  t.equal(ended.body.cdr?.end_reason, 'gateway_restart');
  t.ok(ended.body.cdr?.answered_at, 'the CDR keeps the answer time');
  t.equal(ended.body.recording.available, true, 'the recording is kept');
  const list = await api(second.base, key, 'GET', '/v1/calls?state=ended');
  t.ok(list.body.data?.some((c) => c.id === id), 'listed among ended calls');
  t.notOk((await api(second.base, key, 'GET', '/v1/calls')).body.data?.some((c) => c.id === id), 'and no longer among live ones');

  const res = await fetch(`${second.base}/v1/calls/${id}/recording`, { headers: { authorization: `Bearer ${key}` } });
  t.equal(res.status, 200);
  const wav = Buffer.from(await res.arrayBuffer());
  const sizes = wavSizes(wav);
  t.match(sizes, { channels: 2, rate: 8000 });
  t.equal(sizes.data, wav.length - 44, "the repaired header's data size matches the file");
  t.equal(sizes.riff, wav.length - 8, 'and its RIFF size');
  t.equal(sizes.data % 4, 0, 'whole stereo 16-bit frames only');
  t.ok(sizes.data >= 32000, `at least a second of audio survived (${sizes.data / 32000} s)`);
  const after = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { finalized: boolean; repaired: boolean; durationMs: number };
  t.match(after, { finalized: true, repaired: true }, 'the sidecar says it was repaired');
  t.equal(after.durationMs, Math.round((sizes.data / 32000) * 1000), "the sidecar's duration is the file's");

  second.child.kill('SIGTERM');
  const [code] = await once(second.child, 'exit');
  t.equal(code, 0, 'the restarted gateway stops cleanly');
});

t.test('docs/CONFIGURATION.md "Operator surface": SIGTERM while the far end leaves our BYE unanswered still stops the process', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const dir = t.testdir({});
  const sipPort = await freePort();
  writeFileSync(join(dir, 'carriers.yaml'), `carriers:\n  - name: far\n    outbound:\n      uri: "sip:127.0.0.1:${sipPort}"\n    codecs: [PCMU]\n    options_ping_s: 0\n`);
  const { configFile } = writeGatewayConfig(dir, [`carriers_file: ${JSON.stringify(join(dir, 'carriers.yaml'))}`, 'shutdown:\n  drain_seconds: 1']);
  const cwd = tempWorkdir(t);
  const sipp = startSipp(t, cwd, ['-sf', join(SCENARIOS, 'calls-uas-silent-bye.xml'), '-i', '127.0.0.1', '-p', String(sipPort), '-m', '1', '-default_behaviors', 'none', '-timeout', '60s']);
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const gw = await startGateway(t, configFile);
  const created = await run(process.execPath, ['--import', 'tsx', 'src/cli/vgw.ts', 'tenant', 'create', 'acme'], { env: { ...process.env, VGW_CONFIG: configFile } });
  const { api_key: key, tenant } = JSON.parse(created.stdout) as { api_key: string; tenant: { id: string } };
  await run(process.execPath, ['--import', 'tsx', 'src/cli/vgw.ts', 'number', 'add', tenant.id, '+15550100', '--carrier', 'far'], { env: { ...process.env, VGW_CONFIG: configFile } });
  const placed = await api(gw.base, key, 'POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'far', agent_ws_url: bot.url });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await waitFor("the agent's start message", () => bot.events().includes('start'), 20_000);
  const hung = await api(gw.base, key, 'POST', `/v1/calls/${placed.body.id}/hangup`);
  t.equal(hung.body.state, 'ended');
  gw.child.kill('SIGTERM');
  // Drain is 1 s, the BYE's Timer F (64*T1 = 32 s) far longer: the process must neither wait for
  // it nor keep the call's RTP sockets open once the user agent is disposed.
  const exited = await Promise.race([once(gw.child, 'exit').then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 20_000))]);
  t.ok(exited, 'the process exits once drained (a BYE left unanswered must not keep its RTP sockets open)');
  t.match(gw.output(), /"msg":"stopped"/, 'stop() itself completes');
  if (!exited) gw.child.kill('SIGKILL');
  sipp.child.kill('SIGKILL');
});

t.test('restart safety: the speech recognizer\'s pipe folders a killed gateway left in <data_dir>/asr/ are removed at start', async (t) => {
  const dir = t.testdir({});
  const dataDir = join(dir, 'data');
  const stale = join(dataDir, 'asr', 'vgw-asr-left');
  mkdirSync(stale, { recursive: true });
  writeFileSync(join(stale, 'audio.raw'), '');
  await startTestGateway(t, { dataDir, yaml: 'transcription:\n  engine: pocketsphinx\n  channels: [caller]' });
  t.notOk(existsSync(stale), 'the left-over pipe folder is gone');
  t.same(readdirSync(join(dataDir, 'asr')), [], 'and the pipe folder is there, empty, for this run');
});
