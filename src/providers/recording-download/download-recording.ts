/**
 * @module Re-archiving a provider's recording from the URL in its webhook without letting that
 * URL reach anything but the provider's public hosts: HTTPS only, allow-listed host names, one
 * resolution per hop with every address checked, the connection pinned to the checked address,
 * each redirect checked the same way, and caps on redirects, bytes and total time.
 */
import { createHash } from 'node:crypto';
import { systemClock, type Clock } from '../../common/clock.js';
import { OutboundAddressPolicy, resolveChecked, tenantHostResolver, type HostResolver } from '../../common/outbound-policy.js';
import { isAllowedHost, normalizeHost } from './host-allow-list.js';
import { pinnedGet, type HopResult } from './pinned-get.js';

export interface DownloadOptions {
  /** Host names of this provider's recording storage: exact names or `*.suffix`. */
  allowedHosts: readonly string[];
  maxBytes: number;
  /** Overall cap: resolution, connections, redirects and body together. */
  timeoutMs: number;
  /** Redirects followed at most; one more is a failure. */
  maxRedirects: number;
  /** The outbound-address policy's resolver unless given. */
  resolver?: HostResolver;
  clock?: Clock;
  /** Trust anchors (PEM) used instead of the system store. Production leaves this unset. */
  ca?: string | Buffer | readonly (string | Buffer)[];
  /**
   * @internal Test seam, never set outside tests: lets one (host, address) pair through the
   * address check, so a test server on 127.0.0.1 can stand in for a provider. Every other check
   * (scheme, allow-list, resolution, pinning, TLS names, caps) still applies.
   */
  unsafeAllowAddressForTests?: (host: string, address: string) => boolean;
}

export type DownloadFailure =
  | 'bad_url'
  | 'not_https'
  | 'host_not_allowed'
  | 'dns_failed'
  | 'address_refused'
  | 'too_many_redirects'
  | 'bad_redirect'
  | 'http_status'
  | 'too_large'
  | 'timeout'
  | 'network_error'
  | 'tls_error';

export type DownloadResult =
  | { ok: true; bytes: Buffer; mediaType: string; sha256: string; finalUrl: string }
  | { ok: false; reason: DownloadFailure; detail: string };

type Refusal = { ok: false; reason: DownloadFailure; detail: string };
type Checked = { ok: true; address: string; family: 4 | 6 } | Refusal;

/** Scheme, credentials and allow-list: everything decidable from the URL text alone. */
function checkUrl(url: URL, options: DownloadOptions): Refusal | undefined {
  if (url.protocol !== 'https:') return { ok: false, reason: 'not_https', detail: url.protocol };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'bad_url', detail: 'credentials in URL' };
  if (!isAllowedHost(url.hostname, options.allowedHosts)) return { ok: false, reason: 'host_not_allowed', detail: normalizeHost(url.hostname) };
  return undefined;
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(new Error('aborted'));
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });
}

/** Recording hosts are always public: no operator exception applies to a provider's URL. */
const PUBLIC_ONLY = new OutboundAddressPolicy({ allowPrivate: false });

/**
 * Resolves once and checks every answer with the outbound-address policy (common/outbound-policy):
 * one refused address refuses the host. The resolution counts against the overall time cap.
 */
async function checkHost(host: string, options: DownloadOptions, signal: AbortSignal): Promise<Checked> {
  const seam = options.unsafeAllowAddressForTests;
  const policy = seam ? new OutboundAddressPolicy({ allowPrivate: false, allowAddress: (address) => seam(host, address) }) : PUBLIC_ONLY;
  const resolver: HostResolver = (name) => Promise.race([(options.resolver ?? tenantHostResolver)(name), rejectOnAbort(signal)]);
  const checked = await resolveChecked(host, policy, resolver);
  if (checked.ok) return checked;
  if (checked.reason === 'refused') return { ok: false, reason: 'address_refused', detail: checked.address };
  if (signal.aborted) return { ok: false, reason: 'timeout', detail: 'time limit reached during resolution' };
  return { ok: false, reason: 'dns_failed', detail: checked.code };
}

/** One hop: URL checks, resolution, then the pinned request. */
async function hop(url: URL, options: DownloadOptions, signal: AbortSignal): Promise<HopResult | Refusal> {
  const refused = checkUrl(url, options);
  if (refused) return refused;
  const checked = await checkHost(normalizeHost(url.hostname), options, signal);
  if (!checked.ok) return checked;
  if (signal.aborted) return { ok: false, reason: 'timeout', detail: 'time limit reached' };
  return pinnedGet(url, { address: checked.address, family: checked.family, maxBytes: options.maxBytes, signal, ca: options.ca });
}

async function follow(start: URL, options: DownloadOptions, signal: AbortSignal): Promise<DownloadResult> {
  let url = start;
  for (let redirects = 0; ; redirects++) {
    const result = await hop(url, options, signal);
    if ('ok' in result) return result;
    if (result.kind === 'fail') return { ok: false, reason: result.reason, detail: result.detail };
    if (result.kind === 'body') {
      const sha256 = createHash('sha256').update(result.bytes).digest('hex');
      return { ok: true, bytes: result.bytes, mediaType: result.mediaType, sha256, finalUrl: url.href };
    }
    if (redirects >= options.maxRedirects) return { ok: false, reason: 'too_many_redirects', detail: `more than ${options.maxRedirects}` };
    try {
      url = new URL(result.location, url);
    } catch {
      return { ok: false, reason: 'bad_redirect', detail: 'unparsable Location' };
    }
  }
}

/**
 * Downloads a recording under the rules of docs/WEBHOOKS.md "Post-call webhooks". Never throws for anything the
 * URL, DNS or the remote server does; every such outcome is a `{ok: false, reason}` value.
 */
export async function downloadRecording(rawUrl: string, options: DownloadOptions): Promise<DownloadResult> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, reason: 'bad_url', detail: 'unparsable URL' };
  }
  const controller = new AbortController();
  const timer = (options.clock ?? systemClock).setTimeout(() => controller.abort(), options.timeoutMs);
  try {
    return await follow(url, options, controller.signal);
  } finally {
    timer.cancel();
  }
}
