/**
 * @module The tenant console in Debian's Chromium, driven by playwright-core (docs/CONSOLE.md
 * "Tests"): one headless browser per test file against a gateway on loopback, every request the
 * page makes recorded, so a test can check that none left the gateway's origin and that the
 * Content-Security-Policy refused nothing.
 */
import type { Test } from 'tap';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { FakeCustomAgent } from './fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type TestGateway } from './gateway-harness.js';
import { needPeer, peerPath } from './peers.js';

export interface ConsoleRig {
  gw: TestGateway;
  browser: Browser;
  agent: FakeCustomAgent;
  /** A new page in its own context (own cookies); `width` in CSS pixels (1280 by default). */
  open(options?: { width?: number; height?: number }): Promise<ConsolePage>;
  /** A sandbox call, placed through the API, once active. */
  activeCall(options?: { record?: boolean }): Promise<string>;
}

export interface ConsolePage {
  page: Page;
  context: BrowserContext;
  /** Every URL the page requested. */
  requests: string[];
  /** Console messages of the page that report a Content-Security-Policy refusal. */
  cspViolations: string[];
  login(key: string): Promise<void>;
}

/** A gateway that records calls for sandbox keys and lets them reach an agent on loopback. */
const GATEWAY_YAML = 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 5';

/**
 * The rig, or null when Chromium is missing (a skip, a failure under VGW_REQUIRE_INTEROP=1, like
 * every peer in test/support/peers.ts). The browser closes with the test.
 */
export async function consoleRig(t: Test): Promise<ConsoleRig | null> {
  if (!needPeer(t, 'chromium')) return null;
  const gw = await startTestGateway(t, { yaml: GATEWAY_YAML });
  const agent = await FakeCustomAgent.start();
  t.teardown(() => agent.core.close());
  const browser = await chromium.launch({
    executablePath: peerPath('chromium')!,
    headless: true,
    // Tests run as root in CI, where Chromium's sandbox cannot start; the page is our own console on loopback.
    args: ['--no-sandbox', '--autoplay-policy=no-user-gesture-required', '--mute-audio'],
  });
  t.teardown(() => browser.close());
  return {
    gw, browser, agent,
    async open({ width = 1280, height = 900 } = {}) {
      const context = await browser.newContext({ viewport: { width, height }, baseURL: gw.base });
      t.teardown(() => context.close());
      const page = await context.newPage();
      const requests: string[] = [];
      const cspViolations: string[] = [];
      page.on('request', (request) => { requests.push(request.url()); });
      page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text()); });
      return {
        page, context, requests, cspViolations,
        async login(key: string) {
          await page.goto('/console/');
          await page.getByLabel('API key').fill(key);
          await page.getByRole('button', { name: 'Log in' }).click();
          await page.getByRole('button', { name: 'Log out' }).waitFor();
        },
      };
    },
    async activeCall({ record = false } = {}) {
      const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: agent.url, record });
      if (placed.status !== 200) throw new Error(`placing a sandbox call: ${placed.status} ${JSON.stringify(placed.body)}`);
      await waitFor('the sandbox call active', async () => (await gw.api('GET', `/v1/calls/${placed.body.id}`)).body.state === 'active', 20_000);
      return placed.body.id;
    },
  };
}

/** Requests of the page that went anywhere but the gateway (docs/CONSOLE.md "Security": none may). */
export const foreignRequests = (requests: readonly string[], base: string): string[] =>
  requests.filter((url) => !url.startsWith(`${base}/`) && !url.startsWith('blob:') && !url.startsWith('data:'));

/**
 * What makes the page scroll sideways (a narrow window, or 200 % zoom, must not need it): empty
 * when nothing does, else the page's scroll width and the outermost elements reaching past the
 * window's right edge, so a failure names its culprit.
 */
export const sidewaysOverflow = (page: Page): Promise<string> =>
  page.evaluate<string>(`(() => {
    const root = document.documentElement;
    if (root.scrollWidth <= root.clientWidth + 1) return '';
    const wide = [...document.body.querySelectorAll('*')].filter((el) => el.getBoundingClientRect().right > root.clientWidth + 1);
    const outermost = wide.filter((el) => !wide.includes(el.parentElement));
    const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.classList.length ? '.' + [...el.classList].join('.') : '');
    return 'scrollWidth ' + root.scrollWidth + ' > ' + root.clientWidth + ': ' + outermost.slice(0, 5).map((el) => name(el) + ' (' + Math.round(el.getBoundingClientRect().right) + 'px)').join(', ');
  })()`);

/**
 * A browser file's time limit: one Chromium, a gateway and several pages take minutes on a
 * loaded 2-core machine, past the suite's 120 s per file (measured: 80 s unloaded).
 */
export const CONSOLE_TEST_TIMEOUT_MS = 480_000;
