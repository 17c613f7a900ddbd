/**
 * `npm install` on the oldest Node the README names must print no EBADENGINE warning: the
 * package's `engines.node` lower bound satisfies every locked package's own `engines.node`.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

// semver is npm's own range grammar; it ships in node_modules (through npm-facing dev tools).
const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
};

interface Locked { engines?: { node?: string } | string[]; dev?: boolean }
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, Locked> };

t.test('npm engines: the lowest supported Node satisfies every locked dependency', (t) => {
  const lowest = semver.minVersion(pkg.engines.node)?.version ?? '';
  t.match(lowest, /^20\./, 'the README promises Node 20');
  const refused = Object.entries(lock.packages)
    .filter(([name, p]) => name !== '' && !Array.isArray(p.engines) && p.engines?.node !== undefined)
    .filter(([, p]) => !semver.satisfies(lowest, (p.engines as { node: string }).node))
    .map(([name, p]) => `${name} ${(p.engines as { node: string }).node}`);
  t.same(refused, [], `every dependency installs on Node ${lowest} without EBADENGINE`);
  t.end();
});

t.test('the README names the same lowest Node version as package.json', (t) => {
  const lowest = semver.minVersion(pkg.engines.node)?.version ?? '';
  const [major, minor] = lowest.split('.');
  t.match(readFileSync('README.md', 'utf8'), new RegExp(`Node\\.js ${major}\\.${minor} or newer`));
  t.end();
});
