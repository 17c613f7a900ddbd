/**
 * docs/API.md "The session of a live call" and "Requests and responses" (snake_case everywhere):
 * the OpenAPI document declares every field of `GET /v1/calls/{id}`'s `session`, with a
 * description, and the session of a real call (sandbox carrier, a streaming agent on a real
 * WebSocket) validates against that schema, its keys all snake_case at every depth.
 */
import t, { type Test } from 'tap';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';

type Json = { [key: string]: unknown };
type Doc = { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> } };

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `session` schema of `GET /v1/calls/{id}`'s 200 answer. */
function sessionSchema(doc: Doc): Json {
  const ok = (doc.paths['/v1/calls/{id}']!.get!.responses as Record<string, Json>)['200']!;
  const schema = ((ok.content as Record<string, Json>)['application/json']!.schema) as Json;
  return ((schema.properties as Record<string, Json>).session)!;
}

/** `$ref`s into the components resolved, once each (the schema has no cycles). */
function resolve(node: unknown, doc: Doc): unknown {
  if (Array.isArray(node)) return node.map((n) => resolve(n, doc));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string') return resolve(doc.components.schemas[node.$ref.replace('#/components/schemas/', '')], doc);
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, resolve(v, doc)]));
}

/** Every property schema under `node`, with its path, at any depth (through anyOf and nested objects). */
function propertiesOf(node: unknown, path: string): { path: string; schema: Json }[] {
  if (!isObject(node)) return [];
  const found: { path: string; schema: Json }[] = [];
  for (const variant of (node.anyOf as unknown[] | undefined) ?? []) found.push(...propertiesOf(variant, path));
  for (const [name, schema] of Object.entries((node.properties as Record<string, Json> | undefined) ?? {})) {
    found.push({ path: `${path}.${name}`, schema }, ...propertiesOf(schema, `${path}.${name}`));
  }
  return found;
}

/** Keys that are not snake_case, with their paths, at every depth. */
function camelKeys(value: unknown, path = 'session'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => camelKeys(v, `${path}[${i}]`));
  if (!isObject(value)) return [];
  return Object.entries(value).flatMap(([k, v]) => [...(/^[a-z0-9]+(_[a-z0-9]+)*$/.test(k) ? [] : [`${path}.${k}`]), ...camelKeys(v, `${path}.${k}`)]);
}

async function openApi(gw: TestGateway): Promise<Doc> {
  const res = await gw.api('GET', '/v1/openapi.json');
  return res.body as unknown as Doc;
}

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped (as in src/common/schema.ts).
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** Ajv for JSON Schema 2020-12, the dialect of OpenAPI 3.1 documents. */
function validator(doc: Doc) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(resolve(sessionSchema(doc), doc) as Json);
}

async function agent(t: Test): Promise<FakeCustomAgent> {
  const a = await FakeCustomAgent.start();
  t.teardown(() => a.core.close());
  return a;
}

t.test('API session: the OpenAPI document declares every field of session, each described', async (t) => {
  const gw = await startTestGateway(t);
  const doc = await openApi(gw);
  const session = resolve(sessionSchema(doc), doc) as Json;
  const properties = propertiesOf(session, 'session');
  const names = new Set(properties.map((p) => p.path));
  for (const expected of ['session.phase', 'session.local_rtp_port', 'session.remote.packets_received', 'session.agent.frames_to_agent',
    'session.agent.packets_dropped', 'session.agent.rtp.local_port', 'session.agent.bridged', 'session.transfer.phase', 'session.recording.paused',
    'session.transcription.engine']) {
    t.ok(names.has(expected), `${expected} is declared`);
  }
  t.same(properties.filter((p) => typeof p.schema.description !== 'string' || p.schema.description === '').map((p) => p.path), [], 'every field has a description');
  t.same([...names].filter((n) => !/^[a-z0-9_.]+$/.test(n)), [], 'every declared name is snake_case');
});

t.test('API session: a live call\'s session validates against the document\'s schema and has no camelCase key', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 2' });
  const validate = validator(await openApi(gw));
  const bot = await agent(t);
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url, record: true });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const id = placed.body.id;

  const check = (label: string, session: unknown): void => {
    t.ok(validate(session), `${label}: valid${validate.errors ? ` (${JSON.stringify(validate.errors)})` : ""}`);
    t.same(camelKeys(session), [], `${label}: no camelCase key at any depth`);
  };
  const early = await gw.api('GET', `/v1/calls/${id}`);
  if (early.body.session !== null) check(`${String(early.body.state)} call`, early.body.session);

  // Connected to the agent, with media flowing both ways: every part of the session is filled.
  const talking: ApiBody = await waitFor('the agent leg carrying audio', async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`);
    const agentSide = (r.body.session as { agent?: { frames_to_agent?: number } } | null)?.agent;
    return (agentSide?.frames_to_agent ?? 0) > 10 ? r.body : undefined;
  });
  check('active call', talking.session);
  t.match(talking.session, {
    remote: { codec: String, local_rtp_port: Number, packets_received: Number },
    agent: { kind: 'stream', connected: true, agent_input: String, frames_to_agent: Number, rtp: { local_port: Number, packets_received: Number } },
    recording: { paused: false },
  });

  const held = await gw.api('POST', `/v1/calls/${id}/hold`);
  t.equal(held.status, 200);
  check('held call', (await gw.api('GET', `/v1/calls/${id}`)).body.session);
  t.equal((await gw.api('POST', `/v1/calls/${id}/hangup`)).status, 200);
});
