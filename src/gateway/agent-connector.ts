/**
 * @module The call layer's AgentConnector, built from the providers' streaming sessions. A
 * tenant's `agent_ws_url` is checked again when the call connects (contract section 4: no
 * loopback, private or link-local address unless configuration allows it), and the socket is
 * pinned to the address that passed, so a DNS answer that changes in between cannot redirect it.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { isNonPublicAddress } from '../common/address-policy.js';
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { AgentAudioFormat, AgentCallInfo, AgentConnector, AgentLink, AgentLinkHandlers, HoldSource } from '../engine/calls/index.js';
import { MULAW_8000, ProviderError, type AgentSession, type AgentSessionFactory, type AgentSessionOptions } from '../providers/index.js';

export interface AgentConnectorOptions {
  clock: Clock;
  logger: Logger;
  /** The `custom` factory (contract section 5 protocol) for `agent_ws_url` calls. */
  websocketAgent: AgentSessionFactory;
  allowPrivateAgentUrls: boolean;
  connectTimeoutMs: number;
  /** media_bridge agents: the platform's streaming session for an imported agent. */
  importedAgent(request: { tenantId: TenantId; agentId: string; call: AgentCallInfo; handlers: AgentLinkHandlers }): AgentLink;
  /** Name resolution (tests inject one); node:dns `lookup` with all addresses by default. */
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
}

const systemResolve = (host: string) => dnsLookup(host, { all: true, verbatim: true });

/** A lookup that answers every query with one address: the one that was checked. */
function pinnedLookup(address: string, family: number): LookupFunction {
  return (_host, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/**
 * An AgentLink whose session is created in start(), after the URL's address has been resolved
 * and checked; until then its formats are the contract's µ-law 8 kHz.
 */
class CheckedWebSocketAgent implements AgentLink {
  readonly #o: AgentConnectorOptions;
  readonly #session: Omit<AgentSessionOptions, 'lookup'>;
  #inner: AgentSession | null = null;
  #closed = false;

  constructor(o: AgentConnectorOptions, session: Omit<AgentSessionOptions, 'lookup'>) {
    this.#o = o;
    this.#session = session;
  }

  get inputFormat(): AgentAudioFormat {
    return this.#inner?.inputFormat ?? MULAW_8000;
  }

  get outputFormat(): AgentAudioFormat {
    return this.#inner?.outputFormat ?? MULAW_8000;
  }

  async start(): Promise<void> {
    const url = new URL(this.#session.endpoint.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await (this.#o.resolve ?? systemResolve)(host).catch(() => []);
    const first = addresses[0];
    if (!first) throw new ProviderError('custom', 'unreachable', `agent host ${host} does not resolve`);
    if (!this.#o.allowPrivateAgentUrls && addresses.some((a) => isNonPublicAddress(a.address))) {
      throw new ProviderError('custom', 'rejected', `agent host ${host} resolves to a non-public address`);
    }
    if (this.#closed) throw new ProviderError('custom', 'unreachable', 'closed before connecting');
    this.#inner = this.#o.websocketAgent({ ...this.#session, lookup: pinnedLookup(first.address, first.family) });
    await this.#inner.start();
  }

  sendAudio(frame: Buffer): void {
    this.#inner?.sendAudio(frame);
  }

  get audioFramesDropped(): number {
    return this.#inner?.audioFramesDropped ?? 0;
  }

  sendDtmf(digit: string): boolean {
    return this.#inner?.sendDtmf(digit) ?? false;
  }

  hold(source?: HoldSource): void {
    this.#inner?.hold(source);
  }

  unhold(source?: HoldSource): void {
    this.#inner?.unhold(source);
  }

  markPlayed(name: string): void {
    this.#inner?.markPlayed(name);
  }

  close(reason: string): void {
    this.#closed = true;
    this.#inner?.close(reason);
  }
}

export function createAgentConnector(o: AgentConnectorOptions): AgentConnector {
  return ({ call, tenantId, agent, handlers }): AgentLink => {
    const log = o.logger.child({ call_id: call.callId, tenant_id: tenantId });
    if (agent.kind === 'imported') return o.importedAgent({ tenantId, agentId: agent.agentId, call, handlers });
    return new CheckedWebSocketAgent(o, {
      call, endpoint: { url: agent.url, externalAgentId: '' }, clock: o.clock, connectTimeoutMs: o.connectTimeoutMs,
      handlers, log: (level, message, fields) => log[level](fields ?? {}, `agent: ${message}`),
    });
  };
}
