/**
 * README.md "A first call", for real (docs/CONFIGURATION.md "Operator surface", the quick start): the gateway started as the
 * README says on a fresh data folder, `npm run agent:echo`, then every curl of the section run
 * with sh as written (only the ports, the key and the call id substituted), each answer checked
 * against the shape the README shows.
 */
import t from 'tap';
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { startGatewayProcess } from '../support/gateway-process.js';

const run = promisify(execFile);
t.setTimeout(300_000);

const readme = readFileSync('README.md', 'utf8');
const section = readme.slice(readme.indexOf('### A first call'), readme.indexOf('### Your own tenant'));
const blocks = [...section.matchAll(/```sh\n([^]*?)```/g)].map((m) => m[1]!.trim().split('\n'));

/** `"key":value` pairs the README shows; a value with … is a prefix. */
function shownPairs(answer: string): [string, string | boolean | null | number][] {
  return [...answer.matchAll(/"(\w+)":("[^"]*"|true|false|null|-?\d+)/g)].map((m) => [m[1]!, JSON.parse(m[2]!.replace('…', ''))]);
}

function hasPair(value: unknown, key: string, shown: unknown, prefix: boolean): boolean {
  if (Array.isArray(value)) return value.some((v) => hasPair(v, key, shown, prefix));
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  if (key in record && (prefix ? typeof record[key] === 'string' && record[key].startsWith(shown as string) : record[key] === shown)) return true;
  return Object.values(record).some((v) => hasPair(v, key, shown, prefix));
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

t.test('README "A first call": the sandbox key, the echo agent, and the curls answer as shown', async (t) => {
  t.equal(blocks.length, 3, 'the section has its three sh blocks');
  t.match(readme, /VGW_ALLOW_PRIVATE_AGENT_URLS=true npm start/, 'the quick start starts the gateway so it may reach the local agent');
  const dataDir = t.testdir({});
  const gw = await startGatewayProcess(t, { VGW_DATA_DIR: dataDir, VGW_HTTP_PORT: '0', VGW_SIP_HOST: '127.0.0.1', VGW_SIP_PORT: '0', VGW_ALLOW_PRIVATE_AGENT_URLS: 'true' });
  const key = /sandbox key: (vgw_test_\w+)/.exec(gw.output())?.[1];
  if (!key) return t.fail(`no sandbox key printed:\n${gw.output()}`);

  // Block 1: the agent, by the README's own command.
  const agentPort = await freePort();
  t.match(blocks[0]![0], /^npm run agent:echo\s+# echo agent listening on ws:\/\/127\.0\.0\.1:8090\/agent$/);
  const agent = spawn('npm', ['run', '-s', 'agent:echo'], { env: { ...process.env, VGW_ECHO_AGENT_PORT: String(agentPort) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  t.teardown(() => { try { process.kill(-agent.pid!, 'SIGTERM'); } catch { /* already gone */ } });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the echo agent did not start: ${out}`)), 60_000);
    agent.stdout.on('data', (d: Buffer) => { out += d.toString(); if (out.includes(`echo agent listening on ws://127.0.0.1:${agentPort}/agent`)) { clearTimeout(timer); resolve(); } });
  });

  const env: Record<string, string> = { ...process.env as Record<string, string> };
  const substitute = (command: string): string => command.replaceAll('127.0.0.1:8080', `127.0.0.1:${gw.port}`).replaceAll('127.0.0.1:8090', `127.0.0.1:${agentPort}`);
  let lastAnswer: Record<string, unknown> = {};
  for (const lines of blocks.slice(1)) {
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      const exported = /^export (\w+)=(.*)$/.exec(line);
      if (exported) {
        // The reader pastes the key the gateway printed and the id the call answered.
        env[exported[1]!] = exported[1] === 'KEY' ? key : String(lastAnswer.id);
        t.match(exported[2], exported[1] === 'KEY' ? /^vgw_test_…$/ : /^call_…$/);
        if (exported[1] === 'CALL') await waitActive(gw.base, key, String(lastAnswer.id));
        continue;
      }
      if (!line.startsWith('curl ')) continue;
      const shown = lines[i + 1] ?? '';
      t.match(shown, /^# \{/, `the README shows the answer of: ${line}`);
      const { stdout } = await run('sh', ['-c', substitute(line)], { env });
      lastAnswer = JSON.parse(stdout) as Record<string, unknown>;
      for (const [k, v] of shownPairs(shown)) {
        const prefix = typeof v === 'string' && shown.includes(`"${k}":"${v}…"`);
        t.ok(hasPair(lastAnswer, k, v, prefix), `${line.slice(0, 60)}…: "${k}" is ${JSON.stringify(v)}${prefix ? '…' : ''} as shown (got ${stdout.slice(0, 300)})`);
      }
    }
  }
  t.equal(lastAnswer.state, 'ended', 'the walk-through ends with the call hung up');
});

async function waitActive(base: string, key: string, id: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${base}/v1/calls/${id}`, { headers: { authorization: `Bearer ${key}` } });
    if ((await r.json() as { state: string }).state === 'active') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`call ${id} never became active`);
}
