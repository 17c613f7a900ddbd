/**
 * @module Connections kept open to webhook endpoints between deliveries (docs/EVENTS.md
 * "Delivery"): a TCP and TLS handshake for every event cost more than the rest of its delivery.
 * One keep-alive agent per endpoint origin and address checked, so a connection is reused only to
 * the address the outbound-address policy has just checked again for this delivery: a DNS answer
 * that changes gets a new agent, and a new connection, to the new address once it passes.
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/**
 * How long an idle connection is kept: under the 5 s Node servers close theirs after, so a
 * delivery seldom meets one the endpoint is closing (a server's `Keep-Alive: timeout` hint, when
 * shorter, wins: node:http reads it).
 */
export const IDLE_MS = 4_000;
/** Agents kept at most; past this the least recently used is closed. */
const MAX_AGENTS = 256;
/** Connections per agent at most: an endpoint's deliveries in flight are bounded lower. */
const MAX_SOCKETS = 64;
/** Idle connections kept per agent. */
const MAX_FREE_SOCKETS = 16;

export class EndpointConnections {
  /** By origin and address, least recently used first. */
  readonly #agents = new Map<string, HttpAgent>();

  /** The agent for `origin` (`https://host:port`) connected to `address`. */
  agent(origin: URL, address: string): HttpAgent {
    const key = `${origin.protocol}//${origin.host} ${address}`;
    let agent = this.#agents.get(key);
    if (agent) this.#agents.delete(key);
    else {
      const options = { keepAlive: true, timeout: IDLE_MS, maxSockets: MAX_SOCKETS, maxFreeSockets: MAX_FREE_SOCKETS };
      agent = origin.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
    }
    this.#agents.set(key, agent);
    if (this.#agents.size > MAX_AGENTS) {
      const [oldest, idle] = this.#agents.entries().next().value as [string, HttpAgent];
      this.#agents.delete(oldest);
      idle.destroy();
    }
    return agent;
  }

  /** Closes every connection kept. */
  close(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
  }
}
