/**
 * @module The carrier side of the cluster suites (test/interop/cluster-failover, cluster-restart):
 * sipp calling a DID through the Kamailio edge of a {@link FailoverCluster}, the API process's
 * view of the calls, and what the carrier's sipp message log says about each dialog.
 */
import type { Test } from 'tap';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { FailoverCluster } from './failover-cluster.js';
import { requestsIn, responsesIn, type SippPeer } from './inbound-sipp-rig.js';
import { tempWorkdir } from './peers.js';
import { freeMediaPort, freePort, SCENARIOS, startSipp } from './sip-sipp.js';

/** One request to the cluster's API process with its tenant's key. */
export async function clusterApi<T>(c: FailoverCluster, method: string, path: string): Promise<{ status: number; body: T }> {
  const res = await fetch(`${c.api.base}${path}`, { method, headers: { authorization: `Bearer ${c.key}` } });
  return { status: res.status, body: (await res.json()) as T };
}

/** The carrier: sipp on `at.ip` calling `at.did` through the edge with `scenario`. */
export async function clusterCarrier(t: Test, c: FailoverCluster, at: { ip: string; did: string }, scenario: string, args: string[]): Promise<SippPeer> {
  const cwd = tempWorkdir(t);
  symlinkSync('/usr/share/sip-tester', join(cwd, 'pcap'));
  const [port, media] = [await freePort(), await freeMediaPort()];
  const run = startSipp(t, cwd, [
    `${c.edge.ip}:${c.edge.port}`, '-sf', join(SCENARIOS, scenario), '-i', at.ip, '-p', String(port), '-mp', String(media),
    '-s', at.did, '-trace_msg', '-r', '10', '-timeout', '120s', '-timeout_error', ...args,
  ], 150_000);
  return { run, cwd, port };
}

export const callIdOf = (message: string): string => /^Call-ID:\s*(\S+)/im.exec(message)?.[1] ?? '';

/** Each answered dialog's Call-ID and the engine whose Contact its 200 names. */
export function answeredBy(log: string, engineIps: readonly string[]): Map<string, string> {
  const owners = new Map<string, string>();
  for (const ok of responsesIn(log, 200)) {
    const contact = /^Contact:.*@([\d.]+):/m.exec(ok)?.[1];
    const ip = engineIps.find((e) => e === contact);
    if (ip) owners.set(callIdOf(ok), ip);
  }
  return owners;
}

/** The Call-IDs the carrier got a BYE for, and each BYE (retransmissions included). */
export function byesByCallId(log: string): Map<string, string[]> {
  const byes = new Map<string, string[]>();
  for (const bye of requestsIn(log.replace(/\r/g, ''), 'BYE')) {
    const id = callIdOf(bye);
    byes.set(id, [...(byes.get(id) ?? []), bye]);
  }
  return byes;
}
