/**
 * @module Resolving a recording host once; which answers are refused is common/address-policy's
 * rule (IPv4, IPv6 and every IPv6 form that embeds an IPv4 address).
 */
import { lookup } from 'node:dns/promises';

/** One resolved address, as node:dns `lookup(host, {all: true})` returns it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses. Injectable so tests can answer without DNS. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });
