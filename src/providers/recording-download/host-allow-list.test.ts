import t from 'tap';
import { isAllowedHost } from './host-allow-list.js';

t.test('docs/WEBHOOKS.md "Post-call webhooks": recording hosts match an exact name or a *.suffix wildcard, nothing looser', (t) => {
  const list = ['storage.vapi.ai', '*.cloudfront.net', '*.Retell.example.'];
  for (const h of ['storage.vapi.ai', 'STORAGE.VAPI.AI.', 'd1.cloudfront.net', 'a.b.cloudfront.net', 'x.retell.example']) t.ok(isAllowedHost(h, list), h);
  for (const h of ['vapi.ai', 'evil-storage.vapi.ai', 'storage.vapi.ai.evil.com', 'cloudfront.net', 'evilcloudfront.net', 'd1.cloudfront.net.evil.com', '', '127.0.0.1']) {
    t.notOk(isAllowedHost(h, list), `${h || '(empty)'} refused`);
  }
  t.notOk(isAllowedHost('10.0.0.1', ['*.0.0.1']), 'wildcards never match IP literals');
  t.ok(isAllowedHost('[2606:4700::1]', ['2606:4700::1']), 'an IP literal only by exact entry');
  t.notOk(isAllowedHost('anything.example', ['*.', '*', '']), 'degenerate entries match nothing');
  t.end();
});
