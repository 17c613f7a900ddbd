/**
 * docs/WEBHOOKS.md "Raw payload caps", through the whole gateway over real HTTP on 127.0.0.1:
 * webhooks.max_raw_bytes_per_call and max_raw_bytes_total bound what raw bodies add to the
 * database, while every delivery is still applied.
 */
import t from 'tap';
import { isoTime } from '../../src/common/time.js';
import { startTestGateway } from '../support/gateway-harness.js';
import { callRecord } from '../support/call-records.js';
import { postWebhook, retellCall } from '../support/fake-providers/post-call-sender.js';
import { sqliteOf } from '../support/sqlite-of.js';

const DID = '+16465550100';
const AGENT = 'retell_agent_cap';
const MIB = 1024 * 1024;
const PAD = 'x'.repeat(900 * 1024);

t.test('WEBHOOKS raw payload caps: bodies beyond the per-call and total caps are not kept; every delivery is applied', async (t) => {
  const gw = await startTestGateway(t, {
    yaml: [
      'http:', '  webhook_body_limit_bytes: 4194304',
      'webhooks:', `  max_raw_bytes_per_call: ${MIB}`, `  max_raw_bytes_total: ${2.5 * MIB}`,
    ].join('\n'),
  });
  const { store } = gw.gateway;
  const agent = await store.agents.insert(gw.tenantId, {
    provider: 'retell', external_agent_id: AGENT, apiKey: null, verifiedAt: null,
    settings: { name: null, connection_mode: 'sip_trunk', region: 'us', sip_credential_id: null, sip_uri: null, sip_transport: null, sip_region: null, websocket_url: null },
  });
  const route = await store.routes.insert(gw.tenantId, { didNumber: DID, carrier: 'sandbox', agentId: agent.id });
  const now = Date.now();
  sqliteOf(store).prepare('UPDATE routes SET created_at = ? WHERE id = ?').run(isoTime(now - 3_600_000), route.id);
  const calls = await Promise.all(Array.from({ length: 5 }, async (_, i) => {
    const call = callRecord(gw.tenantId, isoTime(now - 90_000), {
      direction: 'inbound', state: 'ended', from_number: `+1646555020${i}`, to_number: DID, ended_at: isoTime(now - 60_000), end_reason: 'completed',
    });
    await store.calls.insert(call);
    return call;
  }));
  const pageSize = sqliteOf(store).pragma('page_size', { simple: true }) as number;
  const size = (): number => (sqliteOf(store).pragma('page_count', { simple: true }) as number) * pageSize;
  const before = size();

  // The first call gets two events of one conversation; the others one each: 6 bodies of 900 KiB.
  const sent: [number, 'call_ended' | 'call_analyzed'][] = [[0, 'call_ended'], [0, 'call_analyzed'], [1, 'call_ended'], [2, 'call_ended'], [3, 'call_ended'], [4, 'call_ended']];
  for (const [i, event] of sent) {
    const body = retellCall({
      conversationId: `retell-cap-${i}`, agentId: AGENT, did: DID, caller: calls[i]!.from_number, endMs: now - 60_000, turns: [['agent', `Call ${i}, hello.`]],
    }, event, { metadata: { notes: PAD } });
    t.same(await postWebhook(gw.base, 'retell', body), { http: 200, status: 'accepted' }, `call ${i} ${event}`);
  }
  for (const [i, call] of calls.entries()) {
    t.same((await store.transcripts.get(gw.tenantId, call.id, 'provider'))?.map((turn) => turn.text), [`Call ${i}, hello.`], `call ${i}: the transcript is applied`);
  }
  const rows = sqliteOf(store).prepare('SELECT call_id, event, body_bytes, payload_omitted, payload_json IS NOT NULL AS kept FROM webhook_deliveries ORDER BY id').all() as
    { call_id: string; event: string; body_bytes: number; payload_omitted: string | null; kept: number }[];
  t.same(rows.map((r) => [r.call_id, r.event, r.payload_omitted, r.kept]), [
    [calls[0]!.id, 'call_ended', null, 1],
    [calls[0]!.id, 'call_analyzed', 'per_call_cap', 0],
    [calls[1]!.id, 'call_ended', null, 1],
    [calls[2]!.id, 'call_ended', 'total_cap', 0],
    [calls[3]!.id, 'call_ended', 'total_cap', 0],
    [calls[4]!.id, 'call_ended', 'total_cap', 0],
  ], 'two bodies kept; the rest left out, each saying which cap');
  t.ok(rows.every((r) => r.body_bytes > 900 * 1024), 'the size received is recorded for every delivery');

  const sentBytes = rows.reduce((sum, r) => sum + r.body_bytes, 0);
  const grown = size() - before;
  t.ok(grown < 2.5 * MIB + 256 * 1024, `the database grew ${grown} bytes for ${sentBytes} bytes received (caps: 1 MiB per call, 2.5 MiB in all)`);
  t.ok(gw.logs.some((l) => l.msg === 'post-call webhook accepted' && l.payload_omitted === 'total_cap'), 'the log says a body was left out');
});
