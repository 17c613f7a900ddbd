/**
 * @module An API process's CallControl (docs/ARCHITECTURE.md "Process roles"): each command goes
 * to the engine that owns the call, a new call to the engine the directory picks (the least
 * loaded, round-robin among equals), over the engines' internal command endpoint. An engine that
 * cannot be reached is `unavailable` (503): the command is never run twice. An owner whose lease
 * expired (docs/CLUSTER.md "Live state in Redis") is 503 with Retry-After until its calls are reaped.
 */
import { ApiError } from '../common/errors.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { CallCommandResult, CallControl, PlaceCallRequest } from '../engine/calls/index.js';
import type { CallSessionSnapshot } from '../engine/calls/session-snapshot.js';
import { OWNER_GONE_RETRY_AFTER_S, type EngineDirectory, type EngineNode } from './engine-directory.js';
import { INTERNAL_PREFIX, type CommandArgs, type CommandName } from './internal-commands.js';

export interface RemoteCallControlOptions {
  /** Where engines and calls' owners are found. */
  directory: EngineDirectory;
  secret: string;
  /** Longest wait for an engine's answer; a hang-up waits for the call's end. */
  timeoutMs: number;
  logger: Logger;
}

const unreachable = (detail: string): CallCommandResult => ({ error: 'unavailable', detail });

export class RemoteCallControl implements CallControl {
  readonly #o: RemoteCallControlOptions;

  constructor(options: RemoteCallControlOptions) {
    this.#o = options;
  }

  #pick(): Promise<EngineNode | undefined> {
    return this.#o.directory.pick();
  }

  /** The engine that owns a call; a row that names none (from before roles) goes to any live engine. */
  async #owner(nodeId: string | null): Promise<EngineNode | undefined> {
    if (nodeId === null) return this.#pick();
    const node = await this.#o.directory.get(nodeId);
    if (node !== 'expired') return node;
    // Its engine is gone; the call ends when the reaper releases it, after which it answers as ended.
    throw new ApiError(503, 'unavailable', 'The call\'s engine is not answering; retry later.', { headers: { 'Retry-After': String(OWNER_GONE_RETRY_AFTER_S) } });
  }

  /** Sends one command; null when the engine could not be reached or did not answer as expected (logged). */
  async #send<C extends CommandName>(node: EngineNode, name: C, args: CommandArgs<C>): Promise<{ result: unknown } | null> {
    try {
      const res = await fetch(new URL(`${INTERNAL_PREFIX}${name}`, node.internal_url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.#o.secret}` },
        body: JSON.stringify(args),
        signal: AbortSignal.timeout(this.#o.timeoutMs),
      });
      const body = await res.json() as { result?: unknown };
      if (res.status === 200 && 'result' in body) return { result: body.result };
      this.#o.logger.error({ node_id: node.id, command: name, status: res.status }, 'engine refused an internal command');
      return null;
    } catch (err) {
      this.#o.logger.warn({ node_id: node.id, command: name, err }, 'engine unreachable');
      return null;
    }
  }

  async #command<C extends CommandName>(node: EngineNode | undefined, name: C, args: CommandArgs<C>): Promise<CallCommandResult> {
    if (!node) return unreachable('No call engine is running.');
    const answer = await this.#send(node, name, args);
    return answer ? (answer.result as CallCommandResult) : unreachable(`The call engine ${node.id} cannot be reached.`);
  }

  async #onCall(name: 'hold' | 'unhold' | 'hangup', tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    const owner = await this.#o.directory.ownerOf(tenantId, callId);
    if (owner === undefined) return { error: 'not_found' };
    return this.#command(await this.#owner(owner), name, { tenantId, callId });
  }

  async place(request: PlaceCallRequest): Promise<CallCommandResult> {
    return this.#command(await this.#pick(), 'place', request);
  }

  hold(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    return this.#onCall('hold', tenantId, callId);
  }

  unhold(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    return this.#onCall('unhold', tenantId, callId);
  }

  hangup(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    return this.#onCall('hangup', tenantId, callId);
  }

  async sendDigits(tenantId: TenantId, callId: string, digits: string): Promise<CallCommandResult> {
    const owner = await this.#o.directory.ownerOf(tenantId, callId);
    if (owner === undefined) return { error: 'not_found' };
    return this.#command(await this.#owner(owner), 'sendDigits', { tenantId, callId, digits });
  }

  async transfer(tenantId: TenantId, callControlId: string, to: string): Promise<CallCommandResult> {
    const owner = await this.#o.directory.ownerOfControlId(tenantId, callControlId);
    if (owner === undefined) return { error: 'not_found' };
    return this.#command(await this.#owner(owner), 'transfer', { tenantId, callControlId, to });
  }

  /** Null when the owner cannot be reached: the detail is still served, without its live part. */
  async sessionOf(tenantId: TenantId, callId: string): Promise<CallSessionSnapshot | null> {
    const owner = await this.#o.directory.ownerOf(tenantId, callId);
    const node = owner === undefined ? undefined : await this.#owner(owner);
    const answer = node && await this.#send(node, 'sessionOf', { tenantId, callId });
    return answer ? (answer.result as CallSessionSnapshot | null) : null;
  }

  /** A live engine's carriers (every engine reads the same carriers file); 503 when none answers. */
  async carrierNames(): Promise<readonly string[]> {
    const node = await this.#pick();
    const answer = node && await this.#send(node, 'carrierNames', {});
    if (!answer) throw new ApiError(503, 'unavailable', 'No call engine is reachable.');
    return answer.result as string[];
  }
}
