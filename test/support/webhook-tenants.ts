/**
 * @module Tenants set up for post-call webhook tests: an imported agent of a provider, a DID
 * routed to it since an hour ago, and one inbound call from a caller that ended recently.
 */
import { isoTime } from '../../src/common/time.js';
import type { AgentSettings, CallRecord } from '../../src/storage/index.js';
import type { AppHarness, TestTenant } from './build-app.js';
import { callRecord } from './call-records.js';

const SETTINGS: AgentSettings = {
  name: null, connection_mode: 'sip_trunk', region: 'us', sip_credential_id: null, sip_uri: null,
  sip_transport: null, sip_region: null, websocket_url: null,
};

export interface WebhookTenant extends TestTenant {
  did: string;
  caller: string;
  call: CallRecord;
  /** Epoch milliseconds of the call's end. */
  endMs: number;
}

export async function webhookTenant(
  h: Pick<AppHarness, 'store' | 'clock' | 'createTenant'>,
  name: string,
  o: { provider: string; externalAgentId: string; did: string; caller: string; endedAgoMs?: number },
): Promise<WebhookTenant> {
  const tenant = await h.createTenant(name);
  const now = h.clock.now();
  const agent = await h.store.agents.insert(tenant.tenant.id, { provider: o.provider, external_agent_id: o.externalAgentId, settings: SETTINGS, apiKey: null, verifiedAt: null });
  const route = await h.store.routes.insert(tenant.tenant.id, { didNumber: o.did, carrier: 'sandbox', agentId: agent.id });
  await h.store.db.run('UPDATE routes SET created_at = ? WHERE id = ?', [isoTime(now - 3_600_000), route.id]);
  const endMs = now - (o.endedAgoMs ?? 60_000);
  const call = callRecord(tenant.tenant.id, isoTime(endMs - 30_000), {
    direction: 'inbound', state: 'ended', from_number: o.caller, to_number: o.did, agent_type: 'imported', agent_id: agent.id,
    ended_at: isoTime(endMs), end_reason: 'completed', hangup_by: 'caller',
  });
  await h.store.calls.insert(call);
  return { ...tenant, did: o.did, caller: o.caller, call, endMs };
}
