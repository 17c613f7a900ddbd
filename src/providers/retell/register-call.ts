/**
 * @module Retell's custom-telephony flow: register the call at call time with the tenant's key
 * (`POST /v2/register-phone-call`, answered with a `call_id` valid for 5 minutes), then dial
 * `sip:{call_id}@sip.retellai.com`. Vendor reference: https://docs.retellai.com/deploy/custom-telephony
 */
import type { SipTransport } from '../provider-adapter.js';
import { buildSipUri } from '../sip-uri.js';

export interface RetellRegistration {
  apiBaseUrl: string;
  sipHost: string;
  apiKey: string;
  agentId: string;
  from: string;
  to: string;
  /** Whose call it is for Retell: the carrier's caller reaching the agent, or the agent calling out. */
  direction?: 'inbound' | 'outbound';
  transport: SipTransport;
  timeoutMs: number;
}

/** The SIP URI to dial for this call, or why there is none (the key is never in the message). */
export async function registerRetellCall(r: RetellRegistration): Promise<{ uri: string; callId: string } | { error: string }> {
  let response: Response;
  try {
    response = await fetch(`${r.apiBaseUrl}/v2/register-phone-call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${r.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: r.agentId, from_number: r.from, to_number: r.to, direction: r.direction ?? 'inbound' }),
      signal: AbortSignal.timeout(r.timeoutMs),
      redirect: 'error',
    });
  } catch (err) {
    return { error: `retell: register-phone-call failed: ${(err as Error).name}` };
  }
  const body = (await response.json().catch(() => null)) as { call_id?: unknown } | null;
  if (!response.ok) return { error: `retell: register-phone-call answered ${response.status}` };
  const callId = body?.call_id;
  if (typeof callId !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(callId)) return { error: 'retell: register-phone-call gave no usable call_id' };
  return { uri: buildSipUri({ user: callId, host: r.sipHost, transport: r.transport }), callId };
}
