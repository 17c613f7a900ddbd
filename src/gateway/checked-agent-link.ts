/**
 * @module An agent's streaming session under the outbound-address policy (docs/SECURITY.md,
 * "Outbound addresses"): before anything connects, the agent URL's host is resolved, checked and
 * pinned by common/outbound-policy's `pinHost`; the session's sockets then resolve through that
 * lookup, so they reach the address just checked, and every other name they open is checked too.
 */
import type { LookupFunction } from 'node:net';
import { stripBrackets } from '../common/address-policy.js';
import { checkedLookup, pinHost, tenantHostResolver, type HostResolver, type OutboundAddressPolicy } from '../common/outbound-policy.js';
import type { AgentAudioFormat, AgentConnectObserver, AgentLink, HoldSource } from '../engine/calls/index.js';

export type { AgentConnectObserver } from '../engine/calls/index.js';
import { ProviderError, type AgentSession } from '../providers/index.js';

export interface CheckedAgentLinkOptions {
  /** The provider, for errors. */
  provider: string;
  /** The endpoint the session connects to first. */
  url: string;
  policy: OutboundAddressPolicy;
  /** Name resolution (tests inject one); the outbound-address policy's by default. */
  resolve?: HostResolver;
  /** Builds the session with the lookup its sockets must use; opens nothing. */
  open(lookup: LookupFunction): AgentSession;
  /** Told how {@link CheckedAgentLink.start} ended, for the connect metrics (docs/API.md "Operational endpoints"). */
  observe?: AgentConnectObserver;
}

export class CheckedAgentLink implements AgentLink {
  readonly #o: CheckedAgentLinkOptions;
  readonly #inner: AgentSession;
  readonly #resolve: HostResolver;
  #lookup: LookupFunction;
  #closed = false;

  constructor(o: CheckedAgentLinkOptions) {
    this.#o = o;
    this.#resolve = o.resolve ?? tenantHostResolver;
    this.#lookup = checkedLookup(o.policy, this.#resolve);
    this.#inner = o.open((hostname, options, callback) => this.#lookup(hostname, options, callback));
  }

  get inputFormat(): AgentAudioFormat {
    return this.#inner.inputFormat;
  }

  get outputFormat(): AgentAudioFormat {
    return this.#inner.outputFormat;
  }

  /** Checks the URL's host (a literal address too: sockets skip `lookup` for those), then starts the session. */
  async start(): Promise<void> {
    const started = performance.now();
    try {
      await this.#start();
      this.#o.observe?.(this.#o.provider, { connected: true, seconds: (performance.now() - started) / 1000 });
    } catch (err) {
      this.#o.observe?.(this.#o.provider, { connected: false, reason: err instanceof ProviderError ? err.kind : 'other' });
      throw err;
    }
  }

  async #start(): Promise<void> {
    const { provider } = this.#o;
    let host: string;
    try {
      host = stripBrackets(new URL(this.#o.url).hostname);
    } catch {
      this.#inner.close('bad agent URL');
      throw new ProviderError(provider, 'rejected', 'the agent URL does not parse');
    }
    const pinned = await pinHost(host, this.#o.policy, this.#resolve);
    if (!pinned.ok) {
      this.#inner.close('agent address refused');
      if (pinned.reason === 'unresolved') throw new ProviderError(provider, 'unreachable', `agent host ${pinned.detail} does not resolve`);
      throw new ProviderError(provider, 'rejected', `agent host refused by the outbound-address policy: ${pinned.detail}`);
    }
    if (this.#closed) throw new ProviderError(provider, 'unreachable', 'closed before connecting');
    this.#lookup = pinned.lookup;
    await this.#inner.start();
  }

  sendAudio(frame: Buffer): void {
    this.#inner.sendAudio(frame);
  }

  get audioFramesDropped(): number {
    return this.#inner.audioFramesDropped;
  }

  sendDtmf(digit: string): boolean {
    return this.#inner.sendDtmf(digit);
  }

  hold(source?: HoldSource): void {
    this.#inner.hold(source);
  }

  unhold(source?: HoldSource): void {
    this.#inner.unhold(source);
  }

  markPlayed(name: string): void {
    this.#inner.markPlayed(name);
  }

  notify(event: string, body: Record<string, unknown>): void {
    this.#inner.notify?.(event, body);
  }

  close(reason: string): void {
    this.#closed = true;
    this.#inner.close(reason);
  }
}
