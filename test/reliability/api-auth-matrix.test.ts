/**
 * @module The authentication matrix (docs/API.md "Authentication") over real HTTP: every operation of the
 * OpenAPI document × every kind of credential, with the status each must get, printed as a table.
 * Unsafe operations are probed with a body they refuse (400 once authentication has passed), so
 * the matrix changes nothing; the few requests that must be real come from the tables below.
 */
import t from 'tap';
import type { InjectOptions } from 'light-my-request';
import { assertTenantIsolation, type IsolationCase } from '../support/tenant-isolation.js';
import { fillPath, startApiWorld, type ApiWorld } from './support/api-world.js';
import { CREDENTIALS, type Expected } from './support/api-credentials.js';
import type { HttpRequest } from './support/api-http.js';
import { operationsOf, type Operation } from './support/api-operations.js';

/** The operations that take no credentials, and why each is open. */
const UNAUTHENTICATED: Record<string, string> = {
  'GET /healthz': 'liveness probe for the orchestrator; says only that the process serves',
  'GET /readyz': 'readiness probe for the load balancer; says only whether new work is taken',
  'GET /metrics': 'Prometheus scrape; docs/API.md tells operators to expose it only to the monitoring network',
  'GET /v1/openapi.json': 'the public interface description (docs/API.md "Requests and responses")',
  'POST /v1/auth/login': 'exchanges the API key in its body for a session; refuses cross-site requests; limited per address',
  'POST /v1/webhooks/elevenlabs': 'provider post-call webhook: unsigned by docs/WEBHOOKS.md "Post-call webhooks", attributed only by a routed DID and a recent call',
  'POST /v1/webhooks/retell': 'as the ElevenLabs webhook',
  'POST /v1/webhooks/vapi': 'as the ElevenLabs webhook',
};

/** Operations that name a tenant's resource in the body rather than the path. */
const BODY_REFERENCES: Record<string, { owned(w: ApiWorld): object; missing: object }> = {
  transferCall: { owned: (w) => ({ call_control_id: w.owner.callControlId, to: '+15550123' }), missing: { call_control_id: 'v1:never', to: '+15550123' } },
  releaseNumber: { owned: (w) => ({ phone_number: w.owner.heldNumber, carrier: 'telnyx' }), missing: { phone_number: '+15559999', carrier: 'telnyx' } },
};

/** Valid bodies for requests the API must act on, where `{}` would not do. */
const VALID_BODIES: Record<string, object> = {
  updateAgent: { sip_uri: 'sip:agent@edge.example.net' }, sendCallDtmf: { digits: '1w2#' }, updateWebhookEndpoint: { description: 'billing' },
};

/** Probes that must reach the handler: login applies its CSRF rule after validating the body. */
const PROBE_BODIES: Record<string, object> = { login: { api_key: 'vgw_live_0000000000000000000000000000000000000000' } };

/** docs/API.md "Errors": a sandbox key places calls on the sandbox carrier only, a live key never there. */
const SANDBOX_RULES: Record<string, { carrier: string; live: number; sandbox: number }[]> = {
  placeCall: [{ carrier: 'telnyx', live: 200, sandbox: 403 }, { carrier: 'sandbox', live: 403, sandbox: 200 }],
};

const key = (op: Operation): string => `${op.method} ${op.path}`;
const isUnsafe = (op: Operation): boolean => !['GET', 'HEAD', 'OPTIONS'].includes(op.method);
const ownsResource = (op: Operation): boolean => op.path.includes('{') || op.operationId in BODY_REFERENCES;
const JSON_TYPE = { 'content-type': 'application/json' };

/** The matrix request: GETs as they are, unsafe methods with a body every operation refuses. */
function probe(op: Operation, w: ApiWorld): HttpRequest {
  const path = fillPath(op.path, w.owner.ids);
  const body = JSON.stringify(PROBE_BODIES[op.operationId] ?? { __probe: true });
  return isUnsafe(op) ? { method: op.method, path, headers: JSON_TYPE, body } : { method: op.method, path };
}

/** A request the API acts on, for the other tenant's column: it must find nothing. */
function realRequest(op: Operation, w: ApiWorld): HttpRequest {
  const ref = BODY_REFERENCES[op.operationId];
  const body = ref ? JSON.stringify(ref.owned(w)) : op.body ? JSON.stringify(VALID_BODIES[op.operationId] ?? {}) : undefined;
  return { method: op.method, path: fillPath(op.path, w.owner.ids), ...(body ? { headers: JSON_TYPE, body } : {}) };
}

function verdict(expected: Expected, baseline: number, answer: { status: number; json: unknown; headers: Record<string, unknown> }): string | undefined {
  const { status } = answer;
  if (expected === 'as-owner') return status === baseline ? undefined : `${status}, the owner gets ${baseline}`;
  if (expected === 'own-scope') return status < 500 && status !== 401 && status !== 403 ? undefined : `${status} in its own scope`;
  const code = (answer.json as { code?: string } | undefined)?.code;
  if (status !== expected.status || code !== expected.code) return `${status} ${code ?? ''}, expected ${expected.status} ${expected.code}`;
  if (status === 401 && answer.headers['www-authenticate'] !== 'Bearer realm="voice-gateway"') return '401 without WWW-Authenticate';
  return undefined;
}

t.test('docs/API.md "Authentication": every operation × every credential gets the status docs/API.md gives it', async (t) => {
  const w = await startApiWorld(t);
  const ops = operationsOf(w.document);
  t.same(ops.filter((op) => !op.secured).map(key).sort(), Object.keys(UNAUTHENTICATED).sort(), 'the open operations are exactly the listed ones');
  const before = w.storeSnapshot();
  const rows: string[] = [];
  for (const op of ops) {
    const request = probe(op, w);
    const baseline = (await w.send({ ...request, headers: { ...request.headers, ...(op.secured ? w.owner.auth : {}) } })).status;
    if (op.secured && !isUnsafe(op)) t.ok(baseline >= 200 && baseline < 300, `${key(op)}: the owner reads it (${baseline})`);
    const cells: string[] = [];
    for (const c of CREDENTIALS) {
      const expected = op.secured ? c.onSecured(isUnsafe(op), ownsResource(op), op.path) : c.onOpen(op.operationId);
      const sent = expected !== 'as-owner' && expected !== 'own-scope' && expected.code === 'not_found' ? realRequest(op, w) : request;
      const answer = await w.send({ ...sent, headers: { ...sent.headers, ...c.headers(w) } });
      const fault = verdict(expected, baseline, answer);
      if (fault) t.fail(`${key(op)} with ${c.label}: ${fault}`);
      cells.push(fault ? `**${answer.status}**` : String(answer.status));
    }
    rows.push(`| ${key(op)} | ${baseline} | ${cells.join(' | ')} |`);
  }
  t.equal(w.storeSnapshot(), before, 'nothing in the matrix changed stored data');
  const header = `| operation | owner | ${CREDENTIALS.map((c) => c.label).join(' | ')} |`;
  t.comment(['Authentication matrix (status per operation × credential; owner = the live key with the same request):', header,
    `|${'---|'.repeat(CREDENTIALS.length + 2)}`, ...rows, '', 'Open operations:', ...Object.entries(UNAUTHENTICATED).map(([k, why]) => `- ${k}: ${why}`)].join('\n'));
});

t.test('docs/API.md "Errors": a sandbox key places calls on the sandbox carrier only, a live key never there', async (t) => {
  const w = await startApiWorld(t);
  for (const op of operationsOf(w.document).filter((o) => o.operationId in SANDBOX_RULES)) {
    for (const rule of SANDBOX_RULES[op.operationId]!) {
      const body = JSON.stringify({ from: '+15550100', to: '+15550199', carrier: rule.carrier, agent_ws_url: 'wss://agent.example.com/stream' });
      const row: string[] = [];
      for (const [label, auth, status] of [
        ['live key', w.owner.auth, rule.live], ['sandbox key', { authorization: `Bearer ${w.owner.sandboxKey}` }, rule.sandbox],
        ['live cookie', { cookie: w.owner.liveCookie }, rule.live], ['sandbox cookie', { cookie: w.owner.sandboxCookie }, rule.sandbox],
      ] as const) {
        const answer = await w.send({ method: op.method, path: op.path, headers: { ...JSON_TYPE, ...auth }, body });
        t.equal(answer.status, status, `${key(op)} carrier ${rule.carrier} with a ${label}`);
        if (status === 403) t.equal((answer.json as { code?: string }).code, 'sandbox_mismatch');
        row.push(`${label} ${answer.status}`);
      }
      t.comment(`${key(op)} carrier ${rule.carrier}: ${row.join(', ')}`);
    }
  }
});

t.test('docs/API.md "Authentication": another tenant\'s resource answers like a missing one on every operation that names one', async (t) => {
  const w = await startApiWorld(t);
  const inject = (r: HttpRequest): InjectOptions => ({ method: r.method as InjectOptions['method'], url: r.path, ...(r.body ? { headers: JSON_TYPE, payload: r.body } : {}) });
  const cases: IsolationCase[] = operationsOf(w.document).filter((op) => op.secured && ownsResource(op)).map((op) => {
    const ref = BODY_REFERENCES[op.operationId];
    const real = realRequest(op, w);
    const missing = { ...real, path: fillPath(op.path, w.owner.ids, true), ...(ref ? { body: JSON.stringify(ref.missing) } : {}) };
    return { name: key(op), request: inject(real), missing: inject(missing), ownerStatus: op.successStatus };
  });
  t.ok(cases.length >= 14, `${cases.length} operations name a tenant's resource`);
  await assertTenantIsolation(t, w.h, w.owner, w.intruder, cases);
});
