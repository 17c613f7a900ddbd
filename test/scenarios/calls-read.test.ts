/** docs/API.md "Calls": GET /v1/calls and GET /v1/calls/{id} over stored call records. */
import t from 'tap';
import { isoTime } from '../../src/common/time.js';
import { buildApp } from '../support/build-app.js';
import { callRecord } from '../support/call-records.js';
import { assertTenantIsolation } from '../support/tenant-isolation.js';

const STATES = ['initiated', 'ringing', 'active', 'ended'] as const;

t.test('docs/API.md "Calls": list filters, newest-first order and keyset paging over 1,200 calls', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const other = await h.createTenant('Other');
  const now = h.clock.now();
  const live: string[] = [];
  await h.store.transaction(async (tx) => {
    for (let i = 0; i < 1200; i++) {
      const state = STATES[i % 4]!;
      // Calls created one per second; the ended ones ended 1 s after creation.
      const createdAt = isoTime(now - (1200 - i) * 1000);
      const call = callRecord(acme.tenant.id, createdAt, {
        state, direction: i % 3 === 0 ? 'inbound' : 'outbound',
        ...(state === 'ended' ? { ended_at: isoTime(now - (1200 - i) * 1000 + 1000), end_reason: 'completed', hangup_by: 'caller' as const } : {}),
      });
      await tx.calls.insert(call);
      if (state !== 'ended') live.push(call.id);
    }
    await tx.calls.insert(callRecord(other.tenant.id, isoTime(now)));
  });
  const get = async (query: string) => JSON.parse((await h.request({ method: 'GET', url: `/v1/calls${query}`, headers: acme.auth })).body);

  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await get(`?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    ids.push(...page.data.map((c: { id: string }) => c.id));
    if (pages === 0) await h.store.calls.insert(callRecord(acme.tenant.id, isoTime(now + 5000))); // a new call while paging
    cursor = page.next_cursor;
    t.equal(page.has_more, cursor !== null);
    pages++;
  } while (cursor);
  t.equal(pages, 2, '900 live calls in pages of 500');
  t.same(ids, [...live].reverse(), 'every live call once, newest first, unshifted by the insert');

  const ringing = await get('?state=ringing&limit=500');
  t.equal(ringing.data.length, 300);
  t.ok(ringing.data.every((c: { state: string }) => c.state === 'ringing'));
  const inboundActive = await get('?state=active&direction=inbound&limit=500');
  t.ok(inboundActive.data.length > 0 && inboundActive.data.every((c: { direction: string; state: string }) => c.direction === 'inbound' && c.state === 'active'));
  const dates = ringing.data.map((c: { created_at: string }) => c.created_at);
  t.same(dates, [...dates].sort().reverse(), 'newest first');

  const ended = await get('?state=ended&limit=500');
  // Ended calls are i ≡ 3 (mod 4), ending at now − (1199 − i) s: those with i ≥ 299 ended within 15 minutes (the edge included).
  t.equal(ended.data.length, 226, 'only calls ended within the 15-minute live window');
  t.ok(ended.data.every((c: { ended_at: string }) => Date.parse(c.ended_at) >= now - 15 * 60_000));
  for (const bad of ['?limit=0', '?limit=501', '?state=held', '?direction=sideways', '?cursor=%%%']) {
    const res = await h.request({ method: 'GET', url: `/v1/calls${bad}`, headers: acme.auth });
    t.equal(res.statusCode, 400, bad);
  }
  t.equal((await get('?limit=1')).data[0].id !== undefined, true);
  const otherList = JSON.parse((await h.request({ method: 'GET', url: '/v1/calls', headers: other.auth })).body);
  t.equal(otherList.data.length, 1, "a tenant sees only its own calls");
});

t.test('docs/API.md "Calls": call detail merges the call, CDR, transcript and recording presence', async (t) => {
  const h = await buildApp(t);
  const acme = await h.createTenant('Acme');
  const intruder = await h.createTenant('Intruder');
  const start = h.clock.now() - 65_500;
  const ended = callRecord(acme.tenant.id, isoTime(start), {
    state: 'ended', answered_at: isoTime(start + 4_000), ended_at: isoTime(start + 65_500), end_reason: 'completed', sip_status: null,
    hangup_by: 'callee', recording_path: '/data/recordings/x.wav', record: true,
  });
  const active = callRecord(acme.tenant.id, isoTime(start + 1), { on_hold: true });
  await h.store.calls.insert(ended);
  await h.store.calls.insert(active);
  await h.store.transcripts.save(ended.id, 'gateway', [{ role: 'caller', text: 'hello', offset_s: 1.2 }]);
  await h.store.transcripts.save(ended.id, 'provider', [{ role: 'agent', text: 'hi there', offset_s: 0.4 }]);

  const detail = JSON.parse((await h.request({ method: 'GET', url: `/v1/calls/${ended.id}`, headers: acme.auth })).body);
  t.match(detail, {
    id: ended.id, call_control_id: ended.call_control_id, state: 'ended', on_hold: false, from: '+15550100', to: '+15550199', record: true,
    agent: { type: 'websocket', url: 'wss://agent.example.com/stream' }, session: null,
    cdr: { started_at: ended.created_at, answered_at: ended.answered_at, ended_at: ended.ended_at, duration_s: 65.5, billable_s: 62, end_reason: 'completed', hangup_by: 'callee' },
    transcript: { available: true, source: 'provider' }, recording: { available: true },
  });
  t.not(detail.call_control_id, detail.id, 'docs/API.md "Requests and responses": the control id is not the call id');
  const live = JSON.parse((await h.request({ method: 'GET', url: `/v1/calls/${active.id}`, headers: acme.auth })).body);
  t.match(live, { state: 'active', on_hold: true, cdr: null, transcript: { available: false, source: null }, recording: { available: false } });
  const transcript = JSON.parse((await h.request({ method: 'GET', url: `/v1/calls/${ended.id}/transcript`, headers: acme.auth })).body);
  t.same(transcript, { call_id: ended.id, source: 'provider', turns: [{ role: 'agent', text: 'hi there', offset_s: 0.4 }] });
  t.equal((await h.request({ method: 'GET', url: `/v1/calls/${active.id}/transcript`, headers: acme.auth })).statusCode, 404);

  await assertTenantIsolation(t, h, acme, intruder, [
    { name: 'GET call', request: { method: 'GET', url: `/v1/calls/${ended.id}` }, missing: { method: 'GET', url: '/v1/calls/call_never' }, ownerStatus: 200 },
    { name: 'GET transcript', request: { method: 'GET', url: `/v1/calls/${ended.id}/transcript` }, missing: { method: 'GET', url: '/v1/calls/call_never/transcript' }, ownerStatus: 200 },
  ]);
});
