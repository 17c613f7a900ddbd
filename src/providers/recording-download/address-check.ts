/**
 * @module Resolving a recording host once, with the one system resolver of the outbound-address
 * policy (common/outbound-policy); which answers are refused is common/address-policy's rule
 * (IPv4, IPv6 and every IPv6 form that embeds an IPv4 address).
 */
import type { HostResolver, ResolvedAddress } from '../../common/outbound-policy.js';

export { systemResolver } from '../../common/outbound-policy.js';
export type { ResolvedAddress };

/** Resolves a host name to all its addresses. Injectable so tests can answer without DNS. */
export type Resolver = HostResolver;
