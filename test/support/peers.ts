/**
 * @module Real protocol peers from Debian packages (sipp, baresip, flite, sox, pocketsphinx, openssl,
 * kamailio).
 * A test that needs one calls {@link needPeer}: where the peer is missing it skips with a printed
 * reason, except under VGW_REQUIRE_INTEROP=1 (set by CI), where a missing peer fails the test.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

export type Peer = 'sipp' | 'baresip' | 'flite' | 'sox' | 'pocketsphinx_continuous' | 'rtpengine' | 'openssl' | 'kamailio';

/** The Debian package that provides each peer, for the skip message. */
const PACKAGE_OF: Record<Peer, string> = {
  sipp: 'sip-tester',
  baresip: 'baresip-core',
  flite: 'flite',
  sox: 'sox',
  pocketsphinx_continuous: 'pocketsphinx',
  rtpengine: 'rtpengine-daemon',
  openssl: 'openssl',
  kamailio: 'kamailio',
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
 * True when every peer is present. Otherwise skips (or, under VGW_REQUIRE_INTEROP=1, fails) the
 * test with the missing packages named, ends it, and returns false: the caller then returns.
 */
export function needPeer(t: Test, ...peers: Peer[]): boolean {
  const missing = peers.filter((p) => peerPath(p) === null);
  if (missing.length === 0) return true;
  const message = `needs ${missing.join(', ')} (apt-get install ${missing.map((p) => PACKAGE_OF[p]).join(' ')})`;
  if (interopRequired()) t.fail(message);
  else t.pass(message, { skip: message }); // counted as a skip, with the reason printed
  t.end();
  return false;
}

/** A fresh temporary folder (sipp and baresip write files into their working folder). */
export function tempWorkdir(t: { teardown(fn: () => void): void }, prefix = 'vgw-peer-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
