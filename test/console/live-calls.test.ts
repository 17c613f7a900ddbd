/**
 * docs/CONSOLE.md "Live calls", in Chromium against a real gateway: the list is read once with
 * `GET /v1/calls` and then follows the event stream (`GET /v1/events/stream`, docs/EVENTS.md):
 * a sandbox call placed after the page loaded appears, a hold made through the API (not by this
 * page) shows, and the hang-up takes it off the list, with no further list request (no polling).
 */
import t from 'tap';
import { CONSOLE_TEST_TIMEOUT_MS, consoleRig, foreignRequests } from '../support/console-browser.js';

t.setTimeout(CONSOLE_TEST_TIMEOUT_MS);

t.test('docs/CONSOLE.md "Live calls": a sandbox call appears live, its hold and its end arrive by the stream', async (t) => {
  const rig = await consoleRig(t);
  if (!rig) return;
  const { gw } = rig;
  const p = await rig.open();
  await p.login(gw.sandboxKey);
  await p.page.getByText('No live calls.').waitFor();
  await p.page.getByText('Live: updates arrive as they happen.').waitFor({ timeout: 10_000 });

  const callId = await rig.activeCall();
  const row = p.page.locator(`tr[data-call-id="${callId}"]`);
  // Locators, not waitForFunction: that would evaluate a string in the page, which the CSP refuses (no eval).
  const state = row.locator('td.state');
  await row.waitFor({ timeout: 10_000 });
  t.pass('the call placed after the page loaded appears');
  await state.filter({ hasText: /^active$/ }).waitFor({ timeout: 10_000 });
  t.pass('and reaches active');

  // Held by another client (the API with the key): only the stream can tell this page.
  t.equal((await gw.api('POST', `/v1/calls/${callId}/hold`)).status, 200);
  await state.filter({ hasText: /^active \(on hold\)$/ }).waitFor({ timeout: 10_000 });
  t.pass('the hold shows');
  await row.getByRole('button', { name: `Unhold ${callId}` }).click();
  await state.filter({ hasText: /^active$/ }).waitFor({ timeout: 10_000 });
  t.equal((await gw.api('GET', `/v1/calls/${callId}`)).body.on_hold, false, 'the page\'s Unhold reached the call');

  t.equal((await gw.api('POST', `/v1/calls/${callId}/hangup`)).status, 200);
  await row.waitFor({ state: 'detached', timeout: 10_000 });
  t.pass('the ended call leaves the list');

  const lists = p.requests.filter((url) => new URL(url).pathname === '/v1/calls');
  t.equal(lists.length, 1, 'the list was read once: no polling');
  t.same(foreignRequests(p.requests, gw.base), []);
  t.same(p.cspViolations, []);
});
