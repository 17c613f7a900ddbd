/**
 * `npm run console:screenshots`: regenerates docs/console/*.png, one per page of the console, from
 * a real gateway on loopback with sandbox calls (the rig of the browser tests, docs/CONSOLE.md
 * "Screenshots"). Needs Chromium (`apt-get install chromium`).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { consoleRig } from '../../test/support/console-browser.js';
import { waitFor } from '../../test/support/gateway-harness.js';

const out = fileURLToPath(new URL('../../docs/console/', import.meta.url));
const teardowns: (() => unknown)[] = [];
const scratch = mkdtempSync(join(tmpdir(), 'vgw-console-shots-'));
let dirs = 0;
/** The slice of a tap test the rig uses, outside tap. */
const harness = {
  testdir: () => { const dir = join(scratch, String(dirs++)); mkdirSync(dir); return dir; },
  teardown: (fn: () => unknown) => { teardowns.push(fn); },
  fail: (reason: string) => { throw new Error(reason); },
  pass: (reason: string) => { throw new Error(reason); },
  end: () => undefined,
} as unknown as Test;

try {
  const rig = await consoleRig(harness);
  if (!rig) throw new Error('Chromium is needed');
  const { gw } = rig;
  mkdirSync(out, { recursive: true });
  const p = await rig.open({ width: 1280, height: 860 });
  const shot = (name: string) => p.page.screenshot({ path: join(out, `${name}.png`), fullPage: true });

  await p.page.goto('/console/');
  await p.page.getByLabel('API key').waitFor();
  await shot('login');

  const ended = await rig.activeCall({ record: true });
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await gw.api('POST', `/v1/calls/${ended}/hangup`);
  await waitFor('the call ended', async () => (await gw.api('GET', `/v1/calls/${ended}`)).body.state === 'ended');
  await gw.gateway.store.transcripts.save(ended, 'provider', [
    { role: 'agent', text: 'Hello, this is the support line. How can I help?', offset_s: 0.3 },
    { role: 'caller', text: 'I would like to check the status of my order.', offset_s: 1.6 },
    { role: 'agent', text: 'Of course. Could you give me the order number?', offset_s: 2.5 },
  ]);
  const live = await rig.activeCall();
  await gw.api('POST', `/v1/calls/${live}/hold`);
  await rig.activeCall();

  await p.login(gw.sandboxKey);
  await p.page.locator(`tr[data-call-id="${live}"]`).waitFor();
  await shot('live-calls');

  await p.page.goto(`/console/calls/${ended}`);
  await p.page.locator('.ladder g[role="button"]').first().click();
  await p.page.getByText('Agent (right)').waitFor({ timeout: 20_000 });
  await shot('call-detail');

  await p.page.goto('/console/history');
  await p.page.getByLabel('Ended after').fill(new Date(Date.now() - 86_400_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16));
  await p.page.getByRole('button', { name: 'Search' }).click();
  await p.page.getByRole('link', { name: ended }).waitFor();
  await shot('history');

  await p.page.goto('/console/inventory');
  const form = p.page.getByRole('form', { name: 'Import an agent' });
  await form.getByLabel('Provider', { exact: true }).selectOption('custom');
  await form.getByLabel('External agent id').fill('support-bot');
  await form.getByLabel('SIP URI', { exact: true }).fill('not a sip uri');
  await form.getByRole('button', { name: 'Import' }).click();
  await form.locator('#import-sip_uri-error').waitFor();
  await shot('inventory');

  const narrow = await rig.open({ width: 360, height: 740 });
  await narrow.login(gw.sandboxKey);
  await narrow.page.locator(`tr[data-call-id="${live}"]`).waitFor();
  await narrow.page.screenshot({ path: join(out, 'live-calls-narrow.png'), fullPage: true });
  console.log(`screenshots written to ${out}`);
} finally {
  for (const fn of teardowns.reverse()) await fn();
  rmSync(scratch, { recursive: true, force: true });
}
