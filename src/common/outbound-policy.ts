/**
 * @module The one outbound-address policy (docs/SECURITY.md, "Outbound addresses"): which
 * addresses the gateway may connect to on a tenant's behalf (agent WebSocket URLs, the SIP
 * targets of sip_trunk agents, recording downloads), the operator's exceptions to it, the one
 * resolver of the names a tenant gives, the one resolve-and-check of a host, and the socket
 * `lookup`s that pin a connection to the address checked (agent sockets and recording downloads
 * alike).
 */
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { isAddressOrCidr, isNonPublicAddress, isNonPublicHost, stripBrackets } from './address-policy.js';
import { dnsResolver } from './dns-resolver.js';

/** One resolved address (A or AAAA) of a host name. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses; rejects when it does not resolve. Injected by tests. */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/**
 * The one resolver of the names a tenant gives (agent URLs, webhook endpoints, recording
 * downloads), shared so its answers are kept once: DNS by c-ares, A and AAAA (see dns-resolver),
 * never getaddrinfo(3), whose lookups of a name with silent DNS servers would each hold one of
 * libuv's four threads for seconds, and with them every file write of the process (recordings).
 */
export const tenantHostResolver: HostResolver = dnsResolver();

export interface OutboundPolicyOptions {
  /** Every non-public address is allowed (development on one machine). */
  allowPrivate: boolean;
  /** Non-public networks (CIDR, or one address) allowed anyway: an on-premises agent or PBX. */
  allowedPrivateNetworks?: readonly string[];
  /**
   * One more exception, decided per address: only the recording downloader's test seam sets it,
   * so a loopback server can stand in for a provider's public host.
   */
  allowAddress?: (address: string) => boolean;
}

/**
 * Why an address check failed: the host is or resolved to a refused `address`, or did not
 * resolve (`code`: the resolver's error code, `no addresses` for an empty answer).
 */
export type AddressRefusal =
  | { ok: false; reason: 'refused'; detail: string; address: string }
  | { ok: false; reason: 'unresolved'; detail: string; code: string };

/** A checked host: every answer allowed, and the one address to connect to. */
export type AddressCheck = { ok: true; address: string; family: 4 | 6 } | AddressRefusal;

/** Addresses whose decision {@link OutboundAddressPolicy} keeps; past this the oldest is dropped. */
const MAX_DECISIONS_KEPT = 1_024;

/**
 * The policy: public addresses are allowed; loopback, private, link-local (cloud metadata
 * included) and the other non-public ranges of common/address-policy only when the operator
 * allows them, all of them (`allowPrivate`) or some networks (`allowedPrivateNetworks`).
 */
export class OutboundAddressPolicy {
  readonly #allowPrivate: boolean;
  readonly #allowed = new BlockList();
  readonly #allowAddress: ((address: string) => boolean) | undefined;
  /**
   * Decisions already taken, by address text: the policy never changes once built, and a webhook
   * endpoint or agent host is checked again at every delivery or call (node:net's BlockList
   * builds an address object per check). Not kept when a per-address exception is set.
   */
  readonly #decided = new Map<string, boolean>();

  /** Throws on an entry of `allowedPrivateNetworks` that is not an address or CIDR (config validates it first). */
  constructor(o: OutboundPolicyOptions) {
    this.#allowPrivate = o.allowPrivate;
    this.#allowAddress = o.allowAddress;
    for (const entry of o.allowedPrivateNetworks ?? []) {
      if (!isAddressOrCidr(entry)) throw new Error(`not an address or CIDR: ${entry}`);
      const [network = '', prefix] = entry.split('/');
      const family = isIP(network);
      this.#allowed.addSubnet(network, prefix === undefined ? (family === 4 ? 32 : 128) : Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
    }
  }

  /** True when the gateway may connect to `address` (a literal IP, brackets allowed) for a tenant. */
  permits(address: string): boolean {
    if (this.#allowPrivate) return true;
    if (this.#allowAddress) return this.#decide(address);
    let permitted = this.#decided.get(address);
    if (permitted === undefined) {
      permitted = this.#decide(address);
      if (this.#decided.size >= MAX_DECISIONS_KEPT) this.#decided.delete(this.#decided.keys().next().value!);
      this.#decided.set(address, permitted);
    }
    return permitted;
  }

  #decide(address: string): boolean {
    const bare = stripBrackets(address).split('%')[0]!;
    if (!isNonPublicAddress(bare) || this.#allowAddress?.(bare) === true) return true;
    const family = isIP(bare);
    return family !== 0 && this.#allowed.check(bare, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** Decidable from the text alone: a refused literal address, or a `localhost` name (it means loopback). */
  refusesHostText(host: string): boolean {
    const bare = stripBrackets(host);
    if (isIP(bare) !== 0) return !this.permits(bare);
    return isNonPublicHost(bare) && !(this.permits('127.0.0.1') && this.permits('::1'));
  }
}

/**
 * Resolves `host` (a literal address stands for itself) and checks every answer: one refused
 * answer refuses the host, so a name with one private record among public ones is refused. The
 * address to connect to is the first answer.
 */
export async function resolveChecked(host: string, policy: OutboundAddressPolicy, resolver: HostResolver = tenantHostResolver): Promise<AddressCheck> {
  const bare = stripBrackets(host);
  if (policy.refusesHostText(bare)) return { ok: false, reason: 'refused', detail: `${bare} is not a public address`, address: bare };
  let answers: readonly ResolvedAddress[];
  if (isIP(bare) !== 0) answers = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      answers = await resolver(bare);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'lookup failed';
      return { ok: false, reason: 'unresolved', detail: `${bare}: ${code}`, code };
    }
  }
  const refused = answers.find((a) => !policy.permits(a.address));
  if (refused) return { ok: false, reason: 'refused', detail: `${bare} resolves to ${refused.address}`, address: refused.address };
  const first = answers[0];
  const family = first ? isIP(first.address) : 0;
  if (!first || (family !== 4 && family !== 6)) return { ok: false, reason: 'unresolved', detail: `${bare}: no addresses`, code: 'no addresses' };
  return { ok: true, address: first.address, family };
}

/** The error a {@link checkedLookup} fails a connection with. */
export class OutboundAddressError extends Error {
  readonly code: 'EADDRREFUSED' | 'ENOTFOUND';

  /** Thrown (passed to the socket's callback) when a host is refused by the policy or does not resolve. */
  constructor(refusal: AddressRefusal) {
    super(`outbound address ${refusal.reason}: ${refusal.detail}`);
    this.name = 'OutboundAddressError';
    this.code = refusal.reason === 'refused' ? 'EADDRREFUSED' : 'ENOTFOUND';
  }
}

/**
 * A socket `lookup` that answers every name with `address`, checked just before: the connection
 * goes there and nowhere else, without a second lookup that could answer differently. TLS still
 * checks the certificate against the URL's host name.
 */
export function pinnedLookup(address: string, family: number): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * A socket `lookup` (the option of net, tls, http and ws): every name the socket looks up is
 * resolved with `resolver` and all its answers checked, and the socket gets the first one, so it
 * connects to a checked address and nowhere else. `pinned` answers one name with the address
 * checked just before, without a second lookup that could answer differently.
 */
export function checkedLookup(policy: OutboundAddressPolicy, resolver: HostResolver, pinned?: { host: string; address: string; family: number }): LookupFunction {
  const pinnedHost = pinned && pinnedLookup(pinned.address, pinned.family);
  return (hostname, options, callback) => {
    if (pinned && pinnedHost && stripBrackets(hostname) === pinned.host) return pinnedHost(hostname, options, callback);
    void resolveChecked(hostname, policy, resolver).then((checked) => {
      if (checked.ok) pinnedLookup(checked.address, checked.family)(hostname, options, callback);
      else callback(new OutboundAddressError(checked), '', 0);
    });
  };
}

/**
 * Resolves and checks `host` once, then pins it: the lookup answers `host` with the address just
 * checked and checks every other name a socket opens (a platform's signed URL) as it comes. The
 * agent sockets' rule (docs/SECURITY.md, "Outbound addresses"): a DNS answer that changes between
 * the check and the connection cannot redirect it.
 */
export async function pinHost(host: string, policy: OutboundAddressPolicy, resolver: HostResolver): Promise<{ ok: true; address: string; lookup: LookupFunction } | AddressRefusal> {
  const bare = stripBrackets(host);
  const checked = await resolveChecked(bare, policy, resolver);
  if (!checked.ok) return checked;
  return { ok: true, address: checked.address, lookup: checkedLookup(policy, resolver, { host: bare, address: checked.address, family: checked.family }) };
}
