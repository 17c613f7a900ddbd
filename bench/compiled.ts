/**
 * @module The code a benchmark measures is the build `npm start` runs (`dist/`, from `npm run
 * build`), not the TypeScript sources as tsx loads them: tsx transforms with esbuild's keepNames,
 * which wraps every named function expression and arrow function in `__name(fn, "name")`, a
 * defineProperty per closure created. That costs a call per closure and turns each one's
 * properties into a dictionary (about 250 bytes of heap): measured at 6.5 against 4.8 KB of heap
 * per completed call's server transactions, and it skews any per-packet path that makes closures.
 *
 * Benchmarks import the product through {@link compiled} (types still come from `src/`), or run
 * `dist/main.js` as a process. Plain `.js` files are not transformed by tsx.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export const REPO = join(import.meta.dirname, '..');

/** Set once built, and inherited by forked benchmark processes so they load that build as it is. */
const BUILT = 'VGW_BENCH_BUILT';

/**
 * Runs `npm run build` in the repository, once per benchmark run; `dist/` is what gets measured,
 * with the media I/O addon as `npm ci` built it (built here only if it is missing).
 */
export function buildProduct(): void {
  if (process.env[BUILT] === '1') return;
  if (!existsSync(join(REPO, 'native/media-io/build/Release/media_io.node'))) {
    execFileSync('npm', ['run', '--silent', 'build:native'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  }
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  process.env[BUILT] = '1';
}

/**
 * Loads a product module from the build: `path` is relative to `src/` with a `.js` extension
 * (`engine/sip/index.js`). Type it with the source module: `import type * as M from '../src/...'`,
 * then `compiled<typeof M>(...)`.
 */
export async function compiled<T>(path: string): Promise<T> {
  buildProduct();
  return (await import(pathToFileURL(join(REPO, 'dist', path)).href)) as T;
}
