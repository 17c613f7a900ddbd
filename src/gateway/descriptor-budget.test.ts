/** @module The descriptor budget: RLIMIT_NOFILE read from /proc, and the SIP caps' share of it (docs/RELIABILITY.md, "Descriptor budget"). */
import t from 'tap';
import { parseCarriers } from '../config/carriers.js';
import { loadConfig } from '../config/load-config.js';
import { descriptorBudget, DESCRIPTOR_RESERVE, softNofileLimit } from './descriptor-budget.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             63704                63704                processes
Max open files            1024                 524288               files
`;

t.test('RLIMIT_NOFILE: the soft limit from /proc/self/limits, null when unreadable or unlimited', (t) => {
  t.equal(softNofileLimit(() => LIMITS), 1024);
  t.equal(softNofileLimit(() => LIMITS.replace('1024                 524288', 'unlimited            unlimited')), null);
  t.equal(softNofileLimit(() => { throw new Error('ENOENT'); }), null);
  t.ok((softNofileLimit() ?? 0) > 0, 'this process has one (Linux)');
  t.end();
});

t.test('the SIP caps plus the reserve against the soft limit: defaults fit 1,024 with two carrier addresses', (t) => {
  const sip = loadConfig({ env: {} }).sip;
  const carriers = parseCarriers("carriers:\n  - name: a\n    inbound:\n      sources: ['192.0.2.1', '198.51.100.0/24']\n", 'test');
  const b = descriptorBudget(sip, carriers, 1024);
  t.equal(b.sipConnections, 256 + 2 * 64, 'max_connections plus 64 per carrier source entry');
  t.equal(b.leftForCalls, 1024 - 384 - DESCRIPTOR_RESERVE);
  t.ok(descriptorBudget({ ...sip, tcp: { ...sip.tcp, max_connections: 1100 } }, carriers, 1024).leftForCalls < 0, '1,100 connections do not fit 1,024');
  t.end();
});
