/**
 * @module Kamailio (Debian) as the SIP edge in front of several engines, on loopback, for interop
 * tests: sbc-config/kamailio/kamailio.cfg as shipped, started with its defines (EDGE_IP,
 * EDGE_PORT, RPC_PORT, DISPATCHER_LIST) and a dispatcher list written in a temporary folder;
 * stopped by its pid. Its JSON-RPC endpoint tells the state of each engine.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { edgeRpc } from '../../src/gateway/edge-control.js';
import { tempWorkdir } from './peers.js';
import { freePort } from './sip-sipp.js';

const CONFIG = join(import.meta.dirname, '..', '..', 'sbc-config', 'kamailio', 'kamailio.cfg');

/** Where the edge will listen: chosen before the engines start, since their config names it. */
export interface EdgeAddress {
  ip: string;
  port: number;
  rpcPort: number;
  /** `sip:ip:port`, the engines' `sip.outbound_proxy`. */
  uri: string;
  /** `http://ip:rpcPort/RPC`, the engines' `cluster.edge.rpc_url`. */
  rpcUrl: string;
}

export interface KamailioCluster extends EdgeAddress {
  /** The dispatcher flags of a destination (`AP` active and probed, `IP` inactive...), from `dispatcher.list`. */
  stateOf(destination: string): Promise<string | undefined>;
  /** Its stderr so far (its log), for failure messages. */
  log(): string;
}

/** Free ports for the edge on `ip` (a loopback address of its own, apart from engines and carriers). */
export async function edgeAddress(ip: string): Promise<EdgeAddress> {
  const [port, rpcPort] = [await freePort(), await freePort()];
  return { ip, port, rpcPort, uri: `sip:${ip}:${port}`, rpcUrl: `http://${ip}:${rpcPort}/RPC` };
}

interface DispatcherList { RECORDS?: { SET?: { TARGETS?: { DEST?: { URI?: string; FLAGS?: string } }[] } }[] }

/** The flags of `destination` in a `dispatcher.list` result. */
function flagsIn(list: DispatcherList, destination: string): string | undefined {
  for (const record of list.RECORDS ?? []) {
    for (const target of record.SET?.TARGETS ?? []) if (target.DEST?.URI === destination) return target.DEST.FLAGS;
  }
  return undefined;
}

/**
 * Starts the edge at `at` in front of `engines` (dispatcher set 1, each `{ destination, duid }`);
 * resolves once its JSON-RPC answers and every engine is probed active; stopped at teardown.
 */
export async function startKamailioCluster(
  t: { teardown(fn: () => void | Promise<void>): void },
  at: EdgeAddress,
  engines: readonly { destination: string; duid: string }[],
): Promise<KamailioCluster> {
  const dir = tempWorkdir(t, 'vgw-edge-');
  const list = join(dir, 'dispatcher.list');
  writeFileSync(list, engines.map((e) => `1 ${e.destination} 0 0 duid=${e.duid}\n`).join(''));
  const child = spawn('kamailio', [
    '-f', CONFIG, '-DD', '-E', '-Y', dir, '-w', dir, '-m', '32', '-M', '4',
    '-A', `EDGE_IP=${at.ip}`, '-A', `EDGE_PORT=${at.port}`, '-A', `RPC_PORT=${at.rpcPort}`, '-A', `DISPATCHER_LIST="${list}"`,
  ], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr += d.toString(); });
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL');
    }
  });
  const stateOf = async (destination: string): Promise<string | undefined> => {
    const result = await edgeRpc(at.rpcUrl, 'dispatcher.list', []);
    return result instanceof Error ? undefined : flagsIn(result as DispatcherList, destination);
  };
  // OPTIONS probes every 2 s; an engine is active once it answered (threshold 2).
  const deadline = Date.now() + 20_000;
  for (;;) {
    const states = await Promise.all(engines.map((e) => stateOf(e.destination)));
    if (states.every((s) => s?.startsWith('A'))) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the edge did not take its engines (${states.join(', ')}): ${stderr.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { ...at, stateOf, log: () => stderr };
}
