/**
 * docs/CONSOLE.md "Security" and "Serving": the control API serves the console's built files at
 * /console with a Content-Security-Policy that allows only the gateway's own origin, answers
 * index.html for client routes, and never a file outside the build folder.
 */
import t, { type Test } from 'tap';
import { CONSOLE_CSP } from '../../src/control-api/middleware/console-files.js';
import { buildApp } from '../support/build-app.js';

const INDEX = '<!doctype html><title>console</title><script type="module" src="/console/assets/app-1a2b.js"></script>';

function consoleApp(t: Test) {
  const root = t.testdir({ index: { 'index.html': INDEX, assets: { 'app-1a2b.js': 'export {};\n' } }, 'secret.txt': 'outside' });
  return buildApp(t, { console: { root: `${root}/index` } });
}

t.test('docs/CONSOLE.md "Security": every console answer carries the policy; nothing from another origin is allowed', async (t) => {
  const h = await consoleApp(t);
  t.match(CONSOLE_CSP, /^default-src 'self'/);
  t.notMatch(CONSOLE_CSP, /unsafe-inline|unsafe-eval|https?:|\*|data:/, 'no inline code, no eval, no other origin');
  t.same(CONSOLE_CSP.split('; ').filter((d) => d.includes('blob:')), ["media-src 'self' blob:"], 'blob: only for media (the page\'s copy of a recording)');
  for (const url of ['/console', '/console/', '/console/calls/call_123', '/console/assets/app-1a2b.js', '/console/assets/missing.js']) {
    const res = await h.request({ method: 'GET', url });
    t.equal(res.headers['content-security-policy'], CONSOLE_CSP, url);
    t.equal(res.headers['x-content-type-options'], 'nosniff', url);
  }
});

t.test('docs/CONSOLE.md "Serving": index.html for client routes, hashed assets cached for long, unknown files 404', async (t) => {
  const h = await consoleApp(t);
  for (const url of ['/console', '/console/', '/console/history', '/console/calls/call_0mwrf']) {
    const res = await h.request({ method: 'GET', url });
    t.equal(res.statusCode, 200, url);
    t.equal(res.body, INDEX, `${url} answers the entry page`);
    t.equal(res.headers['cache-control'], 'no-cache', `${url}: revalidated`);
  }
  const asset = await h.request({ method: 'GET', url: '/console/assets/app-1a2b.js' });
  t.equal(asset.statusCode, 200);
  t.match(String(asset.headers['content-type']), /javascript/);
  t.match(String(asset.headers['cache-control']), /immutable/);
  const missing = await h.request({ method: 'GET', url: '/console/assets/gone-9z.js' });
  t.equal(missing.statusCode, 404, 'a missing asset is not answered with the entry page');
  t.equal(missing.json().code, 'not_found');
  const head = await h.request({ method: 'HEAD', url: '/console/' });
  t.equal(head.statusCode, 200);
});

t.test('docs/CONSOLE.md "Serving": no path reaches a file outside the build; other methods are 405', async (t) => {
  const h = await consoleApp(t);
  for (const url of ['/console/../secret.txt', '/console/%2e%2e/secret.txt', '/console/..%2fsecret.txt', '/console/%2e%2e%2fsecret.txt', '/console/.hidden.js', '/console/%zz.js']) {
    const res = await h.request({ method: 'GET', url });
    t.not(res.body, 'outside', `${url} does not leave the build folder`);
    t.ok([200, 404].includes(res.statusCode), `${url}: ${res.statusCode}`);
    if (res.statusCode === 200) t.equal(res.body, INDEX, `${url}: at most the entry page`);
  }
  const post = await h.request({ method: 'POST', url: '/console/', payload: {} });
  t.equal(post.statusCode, 405);
  t.equal(post.json().code, 'method_not_allowed');
});

t.test('docs/CONSOLE.md "Serving": without a console folder, /console is the API\'s 404 and the API is unchanged', async (t) => {
  const h = await buildApp(t);
  const res = await h.request({ method: 'GET', url: '/console/' });
  t.equal(res.statusCode, 404);
  t.equal(res.json().code, 'not_found');
  t.equal((await h.request({ method: 'GET', url: '/healthz' })).statusCode, 200);
});
