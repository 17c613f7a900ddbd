/**
 * docs/API.md is the reference the code follows (README.md "Documentation"): every operation the
 * OpenAPI document declares is in its "Endpoints" table, every field of every request and response
 * is named in it (or in docs/WEBHOOKS.md, for the post-call webhook), and every error `code` the
 * code can answer is in "Errors".
 */
import t from 'tap';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../support/build-app.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const API = readFileSync(join(ROOT, 'docs/API.md'), 'utf8');
const WEBHOOKS = readFileSync(join(ROOT, 'docs/WEBHOOKS.md'), 'utf8');

type Schema = { properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[]; $ref?: string };

/**
 * Every property name under `schema`, nested objects included. `session` is the live media view:
 * its fields are described by the OpenAPI document itself (docs/API.md "Calls").
 */
function fieldNames(schema: Schema | undefined, resolve: (ref: string) => Schema | undefined, out = new Set<string>(), seen = new Set<Schema>()): Set<string> {
  if (!schema || seen.has(schema)) return out;
  seen.add(schema);
  if (schema.$ref) fieldNames(resolve(schema.$ref), resolve, out, seen);
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    out.add(name);
    if (name !== 'session') fieldNames(sub, resolve, out, seen);
  }
  for (const sub of [schema.items, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) fieldNames(sub, resolve, out, seen);
  return out;
}

const named = (doc: string, name: string): boolean => new RegExp(`\\b${name}\\b`).test(doc);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

t.test('every operation, every field and every error code of the API is in docs/API.md', async (t) => {
  const h = await buildApp(t);
  const res = await h.request({ method: 'GET', url: '/v1/openapi.json' });
  t.equal(res.statusCode, 200);
  const doc = JSON.parse(res.body) as { paths: Record<string, Record<string, Record<string, unknown>>>; components?: { schemas?: Record<string, Schema> } };
  const resolve = (ref: string): Schema | undefined => doc.components?.schemas?.[ref.replace('#/components/schemas/', '')];

  const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).filter((m) => m !== 'parameters').map((m) => ({ path, method: m.toUpperCase(), op: ops[m]! })));
  t.ok(operations.length >= 30, `${operations.length} operations declared`);
  const tabled = operations.filter(({ path, method }) => API.includes(`| ${method} | \`${path.replace('{voice_provider}', 'elevenlabs')}\` |`) || API.includes(`| ${method} | \`${path}\` |`));
  t.same(operations.filter((o) => !tabled.includes(o)).map((o) => `${o.method} ${o.path}`), [], 'every operation is a row of "Endpoints"');

  const fields = new Set<string>();
  const webhookFields = new Set<string>();
  for (const { path, op } of operations) {
    const into = path.startsWith('/v1/webhooks/') ? webhookFields : fields;
    const body = (op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined)?.content;
    for (const c of Object.values(body ?? {})) fieldNames(c.schema, resolve, into);
    for (const p of (op.parameters as { name: string; in: string }[] | undefined) ?? []) if (p.in === 'query') into.add(p.name);
    for (const r of Object.values((op.responses as Record<string, { content?: Record<string, { schema?: Schema }> }>) ?? {})) {
      for (const c of Object.values(r.content ?? {})) fieldNames(c.schema, resolve, into);
    }
  }
  t.ok(fields.size >= 50, `${fields.size} field names in requests and responses`);
  t.same([...fields].filter((f) => !named(API, f)).sort(), [], 'every field is named in docs/API.md');
  t.same([...webhookFields].filter((f) => !named(API, f) && !named(WEBHOOKS, f)).sort(), [], 'every webhook field is named in docs/API.md or docs/WEBHOOKS.md');

  const codes = new Set(sourceFiles(join(ROOT, 'src')).flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/new ApiError\(\s*\d{3},\s*'([a-z_]+)'/g)].map((m) => m[1]!)));
  t.ok(codes.size >= 20, `${codes.size} error codes in the code`);
  const errors = API.slice(API.indexOf('\n## Errors'), API.indexOf('\n## ', API.indexOf('\n## Errors') + 1));
  t.same([...codes].filter((c) => !errors.includes(`\`${c}\``)).sort(), [], 'every error code is in docs/API.md "Errors"');
});
