import t from 'tap';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { loadMasterKey, MASTER_KEY_FILE } from './master-key.js';

t.test('docs/CONFIGURATION.md "Operator surface": without VGW_SECRET_KEY a key file is generated once with mode 0600', (t) => {
  const dir = t.testdir({});
  const first = loadMasterKey(undefined, dir);
  t.equal(first.length, 32);
  t.equal(statSync(join(dir, MASTER_KEY_FILE)).mode & 0o777, 0o600);
  t.same(loadMasterKey(undefined, dir), first, 'the same key on the next start');
  t.end();
});

t.test('VGW_SECRET_KEY takes hex or base64 of 32 bytes and nothing else', (t) => {
  t.equal(loadMasterKey('ab'.repeat(32), '/nonexistent').length, 32);
  t.equal(loadMasterKey(Buffer.alloc(32, 7).toString('base64'), '/nonexistent').length, 32);
  t.throws(() => loadMasterKey('short', '/nonexistent'), { name: 'ConfigError' });
  t.end();
});
