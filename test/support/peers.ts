/**
 * @module Real protocol peers from Debian packages (sipp, baresip, flite, sox, pocketsphinx, openssl,
 * kamailio, tshark, promtool, and Chromium for the console's browser tests).
 * A test that needs one calls {@link needPeer} (or {@link havePeer}, {@link needAvailable}); every
 * such skip goes through {@link missingPeer}: where the peer is missing it skips with a printed
 * reason, except under VGW_REQUIRE_INTEROP=1 (set by CI), where a missing peer fails the test.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

export type Peer = 'sipp' | 'baresip' | 'flite' | 'espeak-ng' | 'sox' | 'pocketsphinx_continuous' | 'rtpengine' | 'openssl' | 'kamailio' | 'tshark' | 'promtool' | 'chromium';

/** The Debian package that provides each peer, for the skip message. */
const PACKAGE_OF: Record<Peer, string> = {
  sipp: 'sip-tester',
  baresip: 'baresip-core',
  flite: 'flite',
  'espeak-ng': 'espeak-ng',
  sox: 'sox',
  pocketsphinx_continuous: 'pocketsphinx',
  rtpengine: 'rtpengine-daemon',
  openssl: 'openssl',
  kamailio: 'kamailio',
  tshark: 'tshark',
  promtool: 'prometheus',
  chromium: 'chromium',
};

const found = new Map<Peer, string | null>();

/** Absolute path of the peer's binary, or null when it is not installed. */
export function peerPath(peer: Peer): string | null {
  if (!found.has(peer)) {
    try {
      found.set(peer, execFileSync('sh', ['-c', `command -v ${peer}`], { encoding: 'utf8' }).trim() || null);
    } catch {
      found.set(peer, null);
    }
  }
  return found.get(peer) ?? null;
}

export const interopRequired = (): boolean => process.env.VGW_REQUIRE_INTEROP === '1';

/**
 * The one way a test gives up for lack of something from outside the repository (a peer binary,
 * the native media addon, certificates made by openssl): the reason is printed as a skip, except
 * under VGW_REQUIRE_INTEROP=1, where it is a failure. With `end` (the default) the test is ended
 * and the caller returns; without it only the part named in `reason` is left out and the test
 * goes on. Always returns false, so a caller can `return missingPeer(t, …)`.
 */
export function missingPeer(t: Pick<Test, 'fail' | 'pass' | 'end'>, reason: string, { end = true }: { end?: boolean } = {}): false {
  if (interopRequired()) t.fail(reason);
  else t.pass(reason, { skip: reason }); // counted as a skip, with the reason printed
  if (end) t.end();
  return false;
}

/** `needs sox, sipp (apt-get install sox sip-tester)`: what is missing, and how to install it. */
function missingMessage(missing: Peer[]): string {
  return `needs ${missing.join(', ')} (apt-get install ${missing.map((p) => PACKAGE_OF[p]).join(' ')})`;
}

/**
 * True when every peer is present. Otherwise {@link missingPeer} skips (or, under
 * VGW_REQUIRE_INTEROP=1, fails) the test with the missing packages named, ends it, and returns
 * false: the caller then returns.
 */
export function needPeer(t: Pick<Test, 'fail' | 'pass' | 'end'>, ...peers: Peer[]): boolean {
  const missing = peers.filter((p) => peerPath(p) === null);
  return missing.length === 0 || missingPeer(t, missingMessage(missing));
}

/**
 * For an optional part of a test: true when every peer is present; otherwise {@link missingPeer}
 * reports `part` as skipped (a failure under VGW_REQUIRE_INTEROP=1) and the test goes on.
 */
export function havePeer(t: Pick<Test, 'fail' | 'pass' | 'end'>, part: string, ...peers: Peer[]): boolean {
  const missing = peers.filter((p) => peerPath(p) === null);
  return missing.length === 0 || missingPeer(t, `${part} ${missingMessage(missing)}`, { end: false });
}

/** True when `available`; otherwise ends the test through {@link missingPeer} with `reason`. */
export function needAvailable(t: Pick<Test, 'fail' | 'pass' | 'end'>, available: unknown, reason: string): boolean {
  return Boolean(available) || missingPeer(t, reason);
}

/** A fresh temporary folder (sipp and baresip write files into their working folder). */
export function tempWorkdir(t: { teardown(fn: () => void): void }, prefix = 'vgw-peer-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
