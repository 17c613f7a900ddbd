/**
 * @module docs/PROVIDERS.md "Adding a vendor": the providers registry (`VENDORS`) is the only list
 * of vendors. The API's webhook routes and provider description, the config's per-provider webhook
 * keys and the composition root all come from it, and no module outside a vendor's own folder
 * names a vendor.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../../test/support/build-app.js';
import { ConfigSchema } from '../config/schema.js';
import { postCallWebhooks, VENDORS } from '../providers/index.js';

const SRC = fileURLToPath(new URL('..', import.meta.url));
const webhookVendors = VENDORS.filter((v) => v.postCallWebhook !== null);

type Json = Record<string, unknown>;

t.test('the OpenAPI document: one webhook path per registry vendor with a post-call webhook, and the provider list', async (t) => {
  const document = (await buildApp(t)).api.openApiDocument() as { paths: Record<string, Json> };
  const webhookPaths = Object.keys(document.paths).filter((path) => path.startsWith('/v1/webhooks/'));
  t.same(webhookPaths, webhookVendors.map((v) => `/v1/webhooks/${v.name}`));
  for (const vendor of webhookVendors) {
    const post = document.paths[`/v1/webhooks/${vendor.name}`]!.post as Json;
    t.equal(post.summary, `Ingest a post-call payload from ${vendor.displayName} (transcript, recording)`);
  }
  const importBody = ((document.paths['/v1/agents/import']!.post as Json).requestBody as Json).content as Json;
  const schema = (importBody['application/json'] as Json).schema as { properties: { provider: { description: string } } };
  const names = VENDORS.map((v) => v.name);
  t.equal(schema.properties.provider.description, `${names.slice(0, -1).join(', ')} or ${names.at(-1)}.`);
  t.end();
});

t.test('the config: recording_hosts has a key for exactly the vendors with a post-call webhook', (t) => {
  const hosts = ConfigSchema.properties.webhooks.properties.recording_hosts.properties;
  t.same(Object.keys(hosts).sort(), webhookVendors.map((v) => v.name).sort());
  t.same([...postCallWebhooks().keys()], webhookVendors.map((v) => v.name));
  t.end();
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

t.test('no module outside providers/<vendor>/ names a vendor in a string: nothing else keeps a list or a switch', (t) => {
  const quoted = new RegExp(`['"](${VENDORS.map((v) => v.name).join('|')})['"]`);
  const own = new RegExp(`^providers/(${VENDORS.map((v) => v.name).join('|')})/`);
  const offenders = sourceFiles(SRC)
    .map((path) => relative(SRC, path))
    .filter((path) => !own.test(path))
    .flatMap((path) => readFileSync(join(SRC, path), 'utf8').split('\n')
      .map((line, i) => ({ where: `${path}:${i + 1}`, line }))
      .filter(({ line }) => quoted.test(line) && !/^\s*(\*|\/\/)/.test(line)));
  t.same(offenders, [], 'vendor names in strings only inside the vendors\' own folders');
  t.end();
});
