/**
 * @module `npm run demo`: the whole product in under a minute. A gateway process on a temporary
 * data folder, its sandbox tenant, a small echo agent, and one sandbox call driven over the
 * control API (place, list, hold, unhold, transfer, hang up), ending with the CDR and recording.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAnnouncement } from '../../src/engine/calls/index.js';
import { DemoAgent } from './demo-agent.js';
import { awaitAnswer, hangup, hold, placeCall, showCdr, showLiveList, showRecording, transfer, unhold, type DemoContext } from './demo-steps.js';
import { GatewayProcess } from './gateway-process.js';
import { ControlApi, DemoFailure, Narrator } from './narration.js';

const USAGE = `usage: npm run demo -- [--keep] [--tones]
  --keep    keep the temporary data folder (database, recording, config) and print where it is
  --tones   use tones instead of flite speech for the agent's greeting and the sandbox announcement
`;
const GREETING = 'Hi, I am the demo agent. I will repeat what you say.';
/** The sandbox far end rings this long before it answers. */
const RING_MS = 1000;

interface DemoOptions {
  keep: boolean;
  tones: boolean;
}

function parseArgs(args: readonly string[]): DemoOptions {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const unknown = args.filter((a) => a !== '--keep' && a !== '--tones');
  if (unknown.length > 0) {
    process.stderr.write(`unknown option ${unknown.join(' ')}\n${USAGE}`);
    process.exit(2);
  }
  return { keep: args.includes('--keep'), tones: args.includes('--tones') };
}

function hasFlite(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v flite'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Everything the demo started, so that any exit can undo it. */
interface Started {
  workDir: string;
  gateway?: GatewayProcess;
  agent?: DemoAgent;
}

async function startGateway(narrator: Narrator, started: Started, options: DemoOptions): Promise<GatewayProcess> {
  narrator.step('Start the gateway',
    `A fresh data folder: ${started.workDir}\n` +
    'The gateway runs from its TypeScript sources (`node --import tsx src/main.ts`, the code `npm start` runs built\n' +
    'from dist/), with VGW_CONFIG=config.yaml, on loopback ' +
    'with free ports. On its first start with an empty database it creates a sandbox tenant and prints its key once.');
  const gateway = await GatewayProcess.start({ workDir: started.workDir, ringMs: RING_MS, announcement: options.tones ? '' : undefined });
  started.gateway = gateway;
  narrator.say(`gateway pid ${gateway.pid ?? '?'}, control API at ${gateway.baseUrl}`);
  narrator.say(`sandbox key from its first-start output: ${gateway.sandboxKey.slice(0, 13)}… (sandbox keys call only the sandbox carrier)`);
  return gateway;
}

async function startAgent(narrator: Narrator, started: Started, options: DemoOptions): Promise<DemoAgent> {
  const speech = !options.tones && hasFlite();
  narrator.step('Start the demo agent',
    'A WebSocket server speaking the agent protocol (Twilio Media Streams messages, µ-law 8 kHz, plus hold/unhold).\n' +
    'It greets the caller, then echoes what it hears at half volume.');
  const greeting = await loadAnnouncement(speech ? GREETING : '');
  const agent = await DemoAgent.start({ greeting, log: (line) => narrator.agent(line) });
  started.agent = agent;
  narrator.say(`agent at ${agent.url}; greeting: ${speech ? `"${GREETING}" (flite)` : 'three beeps (tones)'}`);
  return agent;
}

async function runCall(ctx: DemoContext, options: DemoOptions): Promise<void> {
  const call = await placeCall(ctx);
  await awaitAnswer(ctx, call);
  await showLiveList(ctx);
  await hold(ctx, call);
  await unhold(ctx, call);
  await transfer(ctx, call);
  await hangup(ctx, call);
  await showCdr(ctx, call);
  await showRecording(ctx, call, options.keep);
}

async function stopGateway(narrator: Narrator, gateway: GatewayProcess): Promise<void> {
  narrator.step('Stop the gateway', 'SIGTERM: it stops taking work, drains, hangs up what is left, and exits 0.');
  const code = await gateway.stop();
  narrator.say(`gateway exited with code ${code ?? 'null (killed)'}`);
  if (code !== 0) throw new DemoFailure(`the gateway exited with code ${code ?? 'null'} on SIGTERM`);
}

async function cleanUp(started: Started, keep: boolean): Promise<void> {
  await started.agent?.close();
  if (started.gateway?.running) await started.gateway.stop();
  if (!keep) rmSync(started.workDir, { recursive: true, force: true });
}

function reportFailure(narrator: Narrator, started: Started, err: unknown): void {
  const message = err instanceof Error ? (err instanceof DemoFailure ? err.message : (err.stack ?? err.message)) : String(err);
  narrator.raw(`\nDEMO FAILED during "${narrator.current}": ${message}\n`);
  const lines = started.gateway?.lastLines() ?? [];
  if (lines.length > 0) {
    narrator.raw('\nThe gateway\'s last output lines:\n');
    for (const line of lines) narrator.raw(`  ${line.length > 400 ? `${line.slice(0, 400)}…` : line}\n`);
  }
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  const narrator = new Narrator((text) => process.stdout.write(text));
  const started: Started = { workDir: mkdtempSync(join(tmpdir(), 'vgw-demo-')) };
  const interrupted = (): void => {
    narrator.raw('\ninterrupted: stopping the gateway\n');
    void cleanUp(started, options.keep).finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  let code = 0;
  try {
    const gateway = await startGateway(narrator, started, options);
    const agent = await startAgent(narrator, started, options);
    const api = new ControlApi(gateway.baseUrl, gateway.sandboxKey, narrator);
    await runCall({ narrator, api, gateway, agent }, options);
    await stopGateway(narrator, gateway);
    narrator.raw('\nDemo complete: placed, answered, listed, held, unheld, transferred and hung up one sandbox call.\n');
  } catch (err) {
    reportFailure(narrator, started, err);
    code = 1;
  }
  await cleanUp(started, options.keep);
  if (options.keep) narrator.raw(`Data folder kept: ${started.workDir}\n`);
  return code;
}

main().then((code) => process.exit(code), (err: unknown) => {
  process.stderr.write(`demo: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
