/**
 * The one skip helper for tests that need something from outside the repository: a skip where
 * the thing is missing, a failure under VGW_REQUIRE_INTEROP=1 (README "Tests"), so CI cannot
 * pass by skipping.
 */
import t from 'tap';
import { havePeer, missingPeer, needAvailable } from './peers.js';

/** What a test was told: the assertions and skips it recorded, and whether it was ended. */
interface Told {
  failed: string[];
  skipped: string[];
  ended: boolean;
}

/** A stand-in for the three members of tap's Test that the helper uses, recording each call. */
function recorder(): { told: Told; test: Parameters<typeof missingPeer>[0] } {
  const told: Told = { failed: [], skipped: [], ended: false };
  return {
    told,
    test: {
      fail: (message?: string) => (told.failed.push(message ?? ''), false),
      pass: (message?: string, extra?: { skip?: unknown }) => (told.skipped.push(typeof extra?.skip === 'string' ? extra.skip : `NOT A SKIP: ${message}`), true),
      end: () => ((told.ended = true), undefined as never),
    } as Parameters<typeof missingPeer>[0],
  };
}

function underInterop(value: string | undefined, fn: () => void): void {
  const before = process.env.VGW_REQUIRE_INTEROP;
  if (value === undefined) delete process.env.VGW_REQUIRE_INTEROP;
  else process.env.VGW_REQUIRE_INTEROP = value;
  try {
    fn();
  } finally {
    if (before === undefined) delete process.env.VGW_REQUIRE_INTEROP;
    else process.env.VGW_REQUIRE_INTEROP = before;
  }
}

t.test('without VGW_REQUIRE_INTEROP a missing peer is a skip with its reason, and the test ends', (t) => {
  underInterop(undefined, () => {
    const { told, test } = recorder();
    t.equal(missingPeer(test, 'needs sipp (apt-get install sip-tester)'), false);
    t.same(told, { failed: [], skipped: ['needs sipp (apt-get install sip-tester)'], ended: true });
  });
  t.end();
});

t.test('under VGW_REQUIRE_INTEROP=1 the same missing peer is a failure naming it', (t) => {
  underInterop('1', () => {
    const { told, test } = recorder();
    t.equal(missingPeer(test, 'needs sipp (apt-get install sip-tester)'), false);
    t.same(told, { failed: ['needs sipp (apt-get install sip-tester)'], skipped: [], ended: true });
  });
  t.end();
});

t.test('needAvailable goes through the same rule: nothing said when available, a failure under VGW_REQUIRE_INTEROP=1 when not', (t) => {
  underInterop('1', () => {
    const present = recorder();
    t.equal(needAvailable(present.test, { cert: 'pem' }, 'needs certificates'), true);
    t.same(present.told, { failed: [], skipped: [], ended: false });
    const absent = recorder();
    t.equal(needAvailable(absent.test, null, 'needs the media I/O addon'), false);
    t.same(absent.told, { failed: ['needs the media I/O addon'], skipped: [], ended: true });
  });
  underInterop('0', () => {
    const absent = recorder();
    needAvailable(absent.test, null, 'needs the media I/O addon');
    t.same(absent.told, { failed: [], skipped: ['needs the media I/O addon'], ended: true }, 'only "1" requires the peers');
  });
  t.end();
});

t.test('an optional part (end: false) is reported the same way but leaves the test running', (t) => {
  underInterop('1', () => {
    const { told, test } = recorder();
    missingPeer(test, 'recognising the recording needs pocketsphinx_continuous', { end: false });
    t.same(told, { failed: ['recognising the recording needs pocketsphinx_continuous'], skipped: [], ended: false });
  });
  // havePeer with peers this machine has or lacks: either nothing is said, or exactly one line is.
  const { told, test } = recorder();
  const present = havePeer(test, 'the part', 'sipp');
  t.equal(told.ended, false, 'havePeer never ends the test');
  t.equal(told.failed.length + told.skipped.length, present ? 0 : 1);
  t.end();
});
