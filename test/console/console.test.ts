/**
 * docs/CONSOLE.md, in Debian's Chromium against a real gateway on loopback: log in with the
 * keyboard, command a sandbox call from the calls list with the keyboard (confirmation first), open
 * its detail after it ends (the ladder, the recording playing, the transcript seeking it), search
 * the history, import an agent and see the API's validation error at its field, use a narrow window
 * and 200 % zoom, log out and be refused. No request leaves the gateway's origin and the
 * Content-Security-Policy refuses nothing.
 */
import t from 'tap';
import { CONSOLE_CSP } from '../../src/control-api/middleware/console-files.js';
import { CONSOLE_TEST_TIMEOUT_MS, consoleRig, foreignRequests, sidewaysOverflow, type ConsolePage } from '../support/console-browser.js';
import { waitFor } from '../support/gateway-harness.js';

/** Presses Tab until `name`d control has focus (at most `limit` times); true when it did. */
async function tabTo(p: ConsolePage, name: RegExp, limit = 60): Promise<boolean> {
  for (let i = 0; i < limit; i++) {
    await p.page.keyboard.press('Tab');
    const focused = await p.page.evaluate<string>('(document.activeElement?.getAttribute("aria-label") || document.activeElement?.textContent || "")');
    if (name.test(focused)) return true;
  }
  return false;
}

t.setTimeout(CONSOLE_TEST_TIMEOUT_MS);

t.test('docs/CONSOLE.md: the console in Chromium', async (t) => {
  const rig = await consoleRig(t);
  if (!rig) return;
  const { gw } = rig;
  const checkClean = (p: ConsolePage, what: string): void => {
    t.same(foreignRequests(p.requests, gw.base), [], `${what}: no request left the gateway`);
    t.same(p.cspViolations, [], `${what}: the Content-Security-Policy refused nothing`);
  };

  await t.test('docs/CONSOLE.md "Login": with the keyboard alone; a wrong key is refused, the right one logs in', async (t) => {
    const p = await rig.open();
    const response = await p.page.goto('/console/');
    t.equal(response?.headers()['content-security-policy'], CONSOLE_CSP, 'the page is served under the policy');
    await p.page.getByLabel('API key').waitFor();
    await p.page.keyboard.press('Tab');
    t.equal(await p.page.evaluate<string>('document.activeElement.id'), 'api-key', 'the first Tab reaches the key field');
    await p.page.keyboard.type('vgw_test_not-a-key');
    await p.page.keyboard.press('Enter');
    await p.page.getByRole('alert').filter({ hasText: 'unknown or revoked' }).waitFor();
    await p.page.getByLabel('API key').fill('');
    await p.page.keyboard.type(gw.sandboxKey);
    await p.page.keyboard.press('Enter');
    await p.page.getByRole('heading', { name: 'Live calls' }).waitFor();
    const cookies = await p.context.cookies();
    const session = cookies.find((c) => c.name === 'gateway_session');
    t.ok(session?.httpOnly, 'the session is an HttpOnly cookie');
    t.equal(await p.page.evaluate<string>('document.cookie'), '', 'the page script cannot read it');
    checkClean(p, 'login');
  });

  const callId = await rig.activeCall({ record: true });
  // The transcript below has a turn at 1.5 s and the player clamps a seek to the recording's
  // length: the call must be recorded past 2.5 s before the live-calls test hangs it up.
  const answeredAt = Date.parse((await gw.api('GET', `/v1/calls/${callId}`)).body.answered_at as string);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, answeredAt + 3_000 - Date.now())));

  await t.test('docs/CONSOLE.md "Live calls": the list by keyboard; hang-up asks first, Escape cancels, confirming ends the call', async (t) => {
    const p = await rig.open();
    await p.login(gw.sandboxKey);
    const row = p.page.locator(`tr[data-call-id="${callId}"]`);
    await row.waitFor();
    t.match(await row.locator('td.state').textContent(), /active/);
    await p.page.locator('body').focus();
    t.ok(await tabTo(p, new RegExp(`^Hang up ${callId}$`)), 'the hang-up button is reached with Tab');
    await p.page.keyboard.press('Enter');
    const dialog = p.page.getByRole('dialog', { name: 'Hang up this call?' });
    await dialog.waitFor();
    await p.page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    t.equal((await gw.api('GET', `/v1/calls/${callId}`)).body.state, 'active', 'cancelled: the call goes on');
    await p.page.keyboard.press('Enter');
    await dialog.waitFor();
    await p.page.keyboard.press('Enter');
    await row.waitFor({ state: 'detached' });
    await waitFor('the call ended', async () => (await gw.api('GET', `/v1/calls/${callId}`)).body.state === 'ended');
    checkClean(p, 'live calls');
  });

  // docs/CONSOLE.md "Call detail": the transcript shown is the API's; a provider transcript is
  // written here through the store, as post-call ingestion writes it (docs/WEBHOOKS.md).
  await gw.gateway.store.transcripts.save(callId, 'provider', [
    { role: 'agent', text: 'Hello, how can I help?', offset_s: 0.2 },
    { role: 'caller', text: 'I would like to check my order.', offset_s: 1.5 },
  ]);

  await t.test('docs/CONSOLE.md "Call detail": the ladder, the recording playing and the transcript seeking it', async (t) => {
    const p = await rig.open();
    await p.login(gw.sandboxKey);
    await p.page.goto(`/console/calls/${callId}`);
    await p.page.getByRole('heading', { name: 'SIP ladder' }).waitFor();
    const arrows = p.page.locator('.ladder g[role="button"]');
    await arrows.first().waitFor();
    const trace = (await gw.api('GET', `/v1/calls/${callId}/sip-trace`)).body as unknown as { messages: { summary: string }[] };
    t.equal(await arrows.count(), trace.messages.length, 'one arrow per SIP message of the trace');
    await arrows.first().click();
    t.match(await p.page.locator('.sip-message pre').textContent(), /^INVITE sip:/, 'clicking the first arrow shows the INVITE');
    // SVG attributes are case-sensitive: only a lowercase `tabindex` puts an arrow in the tab order.
    t.equal(await arrows.nth(1).getAttribute('tabindex'), '0', 'each arrow is in the tab order');
    await arrows.nth(1).focus();
    await p.page.keyboard.press('Enter');
    // The page renders after the key event: wait for the change (or the time-out) before checking it.
    await p.page.locator('.sip-message h3', { hasText: trace.messages[1]!.summary }).waitFor({ timeout: 5_000 }).catch(() => undefined);
    t.equal(await p.page.locator('.sip-message h3').textContent(), trace.messages[1]!.summary, 'Enter on an arrow shows its message');

    // The page opened after the call ended: its events come from the call's log.
    await p.page.locator('ol.events li', { hasText: 'call.ended' }).waitFor();
    t.pass('the call\'s events, read from its log');

    await p.page.getByText('Remote party (left)').waitFor({ timeout: 20_000 });
    await p.page.getByText('Agent (right)').waitFor();
    const audio = p.page.locator('.recording audio');
    await p.page.getByRole('button', { name: 'Play the recording' }).click();
    // Polled from the test: waitForFunction would evaluate a string in the page, which the CSP refuses (no eval).
    await waitFor('the recording to play past 0.3 s', async () => (await audio.evaluate((el: { currentTime: number }) => el.currentTime)) > 0.3, 15_000);
    t.pass('the recording plays: its currentTime advances');
    await p.page.getByRole('button', { name: 'Pause the recording' }).click();
    t.equal(await audio.evaluate((el: { paused: boolean }) => el.paused), true, 'paused');

    await p.page.getByText('I would like to check my order.').waitFor();
    await p.page.getByRole('button', { name: /^Play from 0:01: caller/ }).click();
    const at = await audio.evaluate((el: { currentTime: number }) => el.currentTime);
    t.ok(at >= 1.4 && at < 2.5, `a transcript turn seeks the recording to its time (${at})`);
    t.ok(await p.page.getByRole('link', { name: 'Recording (WAV)' }).isVisible(), 'the recording can be downloaded');
    t.ok(await p.page.getByRole('button', { name: 'SIP trace (pcap)' }).isVisible(), 'so can the pcap');
    checkClean(p, 'call detail');
  });

  await t.test('docs/CONSOLE.md "History": the API\'s filters find the ended call; another reason does not', async (t) => {
    const p = await rig.open();
    await p.login(gw.sandboxKey);
    await p.page.getByRole('link', { name: 'History' }).click();
    const hourAgo = new Date(Date.now() - 3600_000 - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await p.page.getByLabel('Ended after').fill(hourAgo);
    await p.page.getByLabel('Number', { exact: true }).fill('+15550199');
    await p.page.getByRole('button', { name: 'Search' }).click();
    await p.page.getByRole('link', { name: callId }).waitFor();
    const listed = p.requests.filter((url) => url.includes('/v1/calls?'));
    t.match(listed.at(-1), /state=ended/, 'the search is the API\'s');
    t.match(listed.at(-1), /number=%2B15550199/);
    await p.page.getByLabel('End reason').selectOption('busy');
    await p.page.getByRole('button', { name: 'Search' }).click();
    await p.page.getByText('No ended calls match.').waitFor();
    checkClean(p, 'history');
  });

  await t.test('docs/CONSOLE.md "Inventory": an agent is imported; a bad field shows the API\'s error at that field', async (t) => {
    const p = await rig.open();
    await p.login(gw.sandboxKey);
    await p.page.getByRole('link', { name: 'Inventory' }).click();
    const form = p.page.getByRole('form', { name: 'Import an agent' });
    await form.getByLabel('Provider', { exact: true }).selectOption('custom');
    await form.getByLabel('External agent id').fill('support-bot');
    await form.getByLabel('Connection mode').selectOption('media_bridge');
    await form.getByLabel('SIP URI', { exact: true }).fill('not a sip uri');
    await form.getByRole('button', { name: 'Import' }).click();
    const field = form.getByLabel('SIP URI', { exact: true });
    await form.locator('#import-sip_uri-error').waitFor();
    t.equal(await field.getAttribute('aria-invalid'), 'true', 'the field the API named is marked');
    t.match(await form.locator('#import-sip_uri-error').textContent(), /pattern/, 'with the API\'s message');
    t.equal((await gw.api('GET', '/v1/agents')).body.data.length, 0, 'nothing was imported');
    await field.fill('');
    await form.getByLabel('WebSocket URL (media_bridge)').fill(rig.agent.url);
    await form.getByRole('button', { name: 'Import' }).click();
    await p.page.getByRole('row', { name: /support-bot/ }).waitFor();
    t.equal((await gw.api('GET', '/v1/agents')).body.data.length, 1, 'the agent is imported');
    checkClean(p, 'inventory');
  });

  await t.test('docs/CONSOLE.md "Inventory": a webhook endpoint is created, its secret shown once; its deliveries, and a redelivery', async (t) => {
    const p = await rig.open();
    await p.login(gw.sandboxKey);
    await p.page.goto('/console/inventory');
    const section = p.page.locator('#webhook-endpoints');
    const form = section.getByRole('form', { name: 'New webhook endpoint' });
    // Nothing listens there: every delivery fails, as the log will show.
    await form.getByLabel('URL').fill('https://127.0.0.1:9/hooks');
    await form.getByLabel(/^Events/).fill('call.ended');
    await form.getByRole('button', { name: 'Create' }).click();
    const secret = (await section.getByRole('status').locator('code').textContent()) ?? '';
    t.match(secret, /^whsec_\S{32,}$/, 'the secret is shown once, in the answer');
    const [endpoint] = (await gw.api('GET', '/v1/webhook-endpoints')).body.data;
    t.match(endpoint, { url: 'https://127.0.0.1:9/hooks', events: ['call.ended'] });
    t.notOk(JSON.stringify(endpoint).includes(secret), 'the API does not show it again');
    await section.getByRole('button', { name: 'I have saved it' }).click();
    t.notOk((await p.page.content()).includes(secret), 'nor does the page once it is dismissed');

    // The ended call's call.ended, sent again: the endpoint created since gets it too, and fails.
    const [ended] = (await gw.api('GET', `/v1/events?call_id=${callId}&type=call.ended`)).body.data;
    t.equal((await gw.api('POST', `/v1/events/${ended!.id}/redeliver`)).status, 202);
    await waitFor('the failed attempt', async () => ((await gw.api('GET', `/v1/webhook-endpoints/${endpoint!.id}/deliveries`)).body.data.length > 0 ? true : undefined), 20_000);
    await section.getByRole('button', { name: 'Deliveries' }).click();
    const attempt = section.getByRole('row', { name: new RegExp(ended!.id) });
    await attempt.waitFor();
    t.notMatch(await attempt.textContent(), /delivered/, 'the attempt failed');
    await attempt.getByRole('button', { name: `Redeliver ${ended!.id}` }).click();
    await section.getByText(`${ended!.id} is due again now.`).waitFor();
    t.pass('redelivered from its attempt');
    checkClean(p, 'webhook endpoints');
  });

  await t.test('docs/CONSOLE.md "Accessibility": a narrow window and 200 % zoom need no sideways scrolling', async (t) => {
    // 200 % zoom of a 1280-pixel window lays the page out in 640 CSS pixels.
    for (const width of [360, 640]) {
      const p = await rig.open({ width, height: 800 });
      await p.page.goto('/console/');
      t.equal(await sidewaysOverflow(p.page), '', `login at ${width}px`);
      await p.login(gw.sandboxKey);
      // An unknown id shows the page a call has while it loads: a heading holding the bare id.
      for (const path of ['/', '/history', '/inventory', `/calls/${callId}`, '/calls/call_0unknownUnknownUnknown000']) {
        await p.page.goto(`/console${path}`);
        await p.page.locator('main h1').first().waitFor();
        t.equal(await sidewaysOverflow(p.page), '', `${path} at ${width}px`);
      }
    }
  });

  await t.test('docs/CONSOLE.md "Login": logging out ends the session; its cookie is refused afterwards', async (t) => {
    const p = await rig.open();
    await p.login(gw.sandboxKey);
    const cookie = (await p.context.cookies()).find((c) => c.name === 'gateway_session')!;
    await p.page.getByRole('button', { name: 'Log out' }).click();
    await p.page.getByLabel('API key').waitFor();
    const replay = await fetch(`${gw.base}/v1/tenant`, { headers: { cookie: `gateway_session=${cookie.value}` } });
    t.equal(replay.status, 401, 'the old session cookie is refused');
    await p.page.reload();
    await p.page.getByLabel('API key').waitFor();
    t.pass('a reload shows the login again');
  });
});
