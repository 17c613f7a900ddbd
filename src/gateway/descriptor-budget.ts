/**
 * @module The descriptor budget (docs/RELIABILITY.md, "Descriptor budget"): what the configured
 * SIP TCP/TLS caps may take of the process's open-file soft limit (RLIMIT_NOFILE), and the
 * warning at start when they leave too little for the API, the database, the files and the media.
 */
import { readFileSync } from 'node:fs';
import type { CarrierConfig } from '../config/carriers.js';
import type { Config } from '../config/schema.js';

/** Descriptors kept for everything but SIP connections and calls: listeners, SQLite, logs, API clients. */
export const DESCRIPTOR_RESERVE = 256;

/**
 * The soft RLIMIT_NOFILE of this process from `/proc/self/limits` (Linux; Node has no getrlimit),
 * or null where it cannot be read. "unlimited" is null too: there is nothing to warn about.
 */
export function softNofileLimit(read: () => string = () => readFileSync('/proc/self/limits', 'utf8')): number | null {
  try {
    const m = /^Max open files\s+(\d+)\s/m.exec(read());
    return m?.[1] ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The budget at start: the SIP connections' worst case and what is left for calls. */
export interface DescriptorBudget {
  softLimit: number;
  /** `max_connections` plus, per carrier source entry, `max_connections_per_carrier_source`. */
  sipConnections: number;
  /** Descriptors left for calls after the SIP caps and the reserve (negative when over). */
  leftForCalls: number;
}

/**
 * The budget for `config` and `carriers` under `softLimit`. A carrier source given as a CIDR
 * range counts as one address: the caps apply per address, so a range's worst case is larger.
 */
export function descriptorBudget(sip: Config['sip'], carriers: readonly CarrierConfig[], softLimit: number): DescriptorBudget {
  const carrierSources = carriers.reduce((n, c) => n + (c.inbound?.sources.length ?? 0), 0);
  const sipConnections = sip.tcp.max_connections + carrierSources * sip.tcp.max_connections_per_carrier_source;
  return { softLimit, sipConnections, leftForCalls: softLimit - sipConnections - DESCRIPTOR_RESERVE };
}
