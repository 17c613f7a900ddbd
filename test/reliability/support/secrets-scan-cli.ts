/**
 * @module Scans folders for known secrets after a run: point it at the tap output
 * (`.tap/test-results`), a log folder or a data folder.
 *
 *   npx tsx test/reliability/support/secrets-scan-cli.ts [--secret NAME=VALUE]... [--secrets-file FILE] PATH...
 *
 * FILE holds NAME=VALUE lines. Without secrets given, the fixed secrets the test suite configures
 * are used. Exits 1 naming every hit (secret, form, file, byte offset), 0 when there is none.
 */
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { EL_KEY, RETELL_KEY, VAPI_KEY } from '../../support/inventory.js';
import { EDGE_PASSWORD } from '../../support/inbound-sipp-rig.js';
import { describeHits, filesUnder, FORM_NAMES, scanSources, type Canary, type ScanSource } from './secrets-scan.js';

/** Secrets that test fixtures configure under the same values in every run. */
const SUITE_SECRETS: Canary[] = [
  { name: 'elevenlabs api key (test/support/inventory.ts)', value: EL_KEY },
  { name: 'retell api key (test/support/inventory.ts)', value: RETELL_KEY },
  { name: 'vapi api key (test/support/inventory.ts)', value: VAPI_KEY },
  { name: 'sip edge password (test/support/inbound-sipp-rig.ts)', value: EDGE_PASSWORD },
];

function canaryOf(line: string): Canary {
  const eq = line.indexOf('=');
  if (eq < 1 || eq === line.length - 1) throw new Error(`expected NAME=VALUE, got ${JSON.stringify(line)}`);
  return { name: line.slice(0, eq), value: line.slice(eq + 1) };
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { secret: { type: 'string', multiple: true }, 'secrets-file': { type: 'string' } },
});
const given = [
  ...(values.secret ?? []).map(canaryOf),
  ...(values['secrets-file'] ? readFileSync(values['secrets-file'], 'utf8').split('\n').filter((l) => l.trim() !== '').map(canaryOf) : []),
];
const canaries = given.length > 0 ? given : SUITE_SECRETS;
if (positionals.length === 0) {
  process.stderr.write('usage: secrets-scan-cli.ts [--secret NAME=VALUE]... [--secrets-file FILE] PATH...\n');
  process.exit(2);
}
const sources: ScanSource[] = positionals.flatMap((p) => (statSync(p).isDirectory() ? filesUnder(p) : [{ where: p, data: readFileSync(p) }]));
const hits = scanSources(canaries, sources);
const bytes = sources.reduce((n, s) => n + s.data.length, 0);
process.stdout.write(`scanned ${sources.length} files (${bytes} bytes) for ${canaries.length} secrets in ${FORM_NAMES.length} forms: ${FORM_NAMES.join(', ')}\n`);
if (hits.length > 0) {
  process.stdout.write(`${hits.length} hit(s):\n${describeHits(hits)}\n`);
  process.exit(1);
}
process.stdout.write('no secret found\n');
