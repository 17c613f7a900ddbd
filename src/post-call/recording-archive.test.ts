/**
 * Re-archiving a provider recording (docs/WEBHOOKS.md "Recordings"): the file is written off the
 * event loop (fs/promises), atomically (temporary file, then rename), readable by the gateway's
 * user only (0600), and a failed write leaves no temporary file behind.
 */
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TenantId } from '../common/ids.js';
import { FolderRecordingFiles } from '../common/recording-files.js';
import { writeRecording } from './recording-archive.js';

const target = { tenantId: 'ten_acme' as TenantId, callId: 'call_1' };

function dataDir(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'vgw-archive-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('WEBHOOKS Recordings: the write does not hold the event loop, and the file is whole, 0600, with no temporary left', async (t) => {
  const dir = dataDir(t);
  const bytes = Buffer.alloc(4 * 1024 * 1024, 0x5a);
  let turnsOfTheLoop = 0;
  const tick = setInterval(() => { turnsOfTheLoop++; }, 0);
  t.teardown(() => clearInterval(tick));
  const writing = writeRecording(new FolderRecordingFiles(join(dir, 'recordings')), target, { bytes, mediaType: 'Audio/MPEG', origin: 'inline' });
  t.type(writing, Promise, 'the write is asynchronous');
  let done = false;
  void writing.then(() => { done = true; }, () => undefined);
  // Work queued after the call runs before the write is done: the loop kept turning.
  await new Promise<void>((resolve) => setImmediate(resolve));
  t.notOk(done, 'an immediate queued after the call ran before the write finished');
  const record = await writing;
  clearInterval(tick);
  t.ok(turnsOfTheLoop > 0, `timers ran while the file was written (${turnsOfTheLoop})`);
  t.same(record, {
    call_id: 'call_1', tenant_id: 'ten_acme', source: 'provider', path: 'ten_acme/call_1.provider.mp3', media_type: 'audio/mpeg',
    bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex'), origin: 'inline',
  });
  const file = join(dir, 'recordings', record.path);
  t.ok(readFileSync(file).equals(bytes), 'the file holds the audio');
  t.equal(statSync(file).mode & 0o777, 0o600, 'readable by the gateway user only');
  t.same(readdirSync(join(dir, 'recordings', 'ten_acme')), ['call_1.provider.mp3'], 'no temporary file left');
});

t.test('WEBHOOKS Recordings: a write that fails rejects and leaves no temporary file', async (t) => {
  const dir = dataDir(t);
  // A directory where the recording would go: the rename onto it fails.
  mkdirSync(join(dir, 'recordings', 'ten_acme', 'call_1.provider.wav'), { recursive: true });
  await t.rejects(writeRecording(new FolderRecordingFiles(join(dir, 'recordings')), target, { bytes: Buffer.from('RIFF'), mediaType: 'audio/wav', origin: 'download' }));
  t.same(readdirSync(join(dir, 'recordings', 'ten_acme')), ['call_1.provider.wav'], 'the temporary file is removed');
});
