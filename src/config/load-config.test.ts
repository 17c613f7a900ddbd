import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './load-config.js';

t.test('docs/CONFIGURATION.md "Operator surface": defaults fill every setting and the result is frozen', (t) => {
  const config = loadConfig({ env: {}, cwd: '/srv/vgw' });
  t.equal(config.http.host, '127.0.0.1');
  t.equal(config.http.port, 8080);
  t.equal(config.sip.port, 5060);
  t.equal(config.sip.host, '0.0.0.0');
  t.equal(config.data_dir, '/srv/vgw/data');
  t.equal(config.calls.allow_private_agent_urls, false);
  t.equal(config.rtp.socket_io, 'auto');
  t.equal(config.rtp.relay_thread, true, 'passthrough streams are relayed off the event loop by default');
  t.equal(config.rtp.relay_thread_priority, 0, 'the relay thread is time-sharing unless real-time is granted on purpose');
  t.equal(config.rtp.strict_source, true, 'SECURITY.md "Media sources": media sources are strict by default');
  t.ok(Object.isFrozen(config) && Object.isFrozen(config.http));
  t.end();
});

t.test('docs/CONFIGURATION.md "Operator surface": VGW_* variables override the file, which overrides defaults', (t) => {
  const dir = t.testdir({ 'vgw.yaml': 'http:\n  port: 9000\n  host: 0.0.0.0\nrtp:\n  port_min: 30000\n  port_max: 30100\n' });
  const config = loadConfig({ env: { VGW_CONFIG: 'vgw.yaml', VGW_HTTP_PORT: '9100', VGW_ALLOW_PRIVATE_AGENT_URLS: 'true' }, cwd: dir });
  t.equal(config.http.port, 9100, 'environment wins');
  t.equal(config.http.host, '0.0.0.0', 'file wins over default');
  t.equal(config.rtp.port_min, 30000);
  t.equal(config.calls.allow_private_agent_urls, true);
  t.end();
});

t.test('a bad value names the key and the variable that set it', (t) => {
  t.throws(() => loadConfig({ env: { VGW_HTTP_PORT: 'eighty' } }), { name: 'ConfigError', message: /http\.port must be integer \(VGW_HTTP_PORT\)/ });
  t.throws(() => loadConfig({ env: { VGW_SIP_PORT: '70000' } }), { message: /sip\.port must be <= 65535 \(VGW_SIP_PORT\)/ });
  t.throws(() => loadConfig({ env: { VGW_LOG_LEVEL: 'loud' } }), { message: /log_level must be one of/ });
  t.throws(() => loadConfig({ env: { VGW_RTP_SOCKET_IO: 'io_uring' } }), { message: /rtp\.socket_io must be one of .*\(VGW_RTP_SOCKET_IO\)/ });
  t.equal(loadConfig({ env: { VGW_RTP_SOCKET_IO: 'dgram' } }).rtp.socket_io, 'dgram');
  t.equal(loadConfig({ env: { VGW_RTP_RELAY_THREAD: 'false' } }).rtp.relay_thread, false);
  t.equal(loadConfig({ env: { VGW_RTP_RELAY_THREAD_PRIORITY: '10' } }).rtp.relay_thread_priority, 10);
  t.equal(loadConfig({ env: { VGW_RTP_STRICT_SOURCE: 'false' } }).rtp.strict_source, false, 'the old, any-host re-latch stays available');
  t.throws(() => loadConfig({ env: { VGW_RTP_RELAY_THREAD_PRIORITY: '100' } }), { message: /rtp\.relay_thread_priority must be <= 99 \(VGW_RTP_RELAY_THREAD_PRIORITY\)/ });
  t.end();
});

t.test('an unknown key in the file is refused by name', (t) => {
  const dir = t.testdir({ 'vgw.yaml': 'http:\n  prot: 9000\n' });
  t.throws(() => loadConfig({ env: { VGW_CONFIG: 'vgw.yaml' }, cwd: dir }), { message: /http\.prot is not a known field \(in .*vgw\.yaml\)/ });
  t.end();
});

t.test('broken YAML, a missing file and crossed port ranges are clear errors', (t) => {
  const dir = t.testdir({ 'bad.yaml': 'http: [unclosed\n' });
  t.throws(() => loadConfig({ env: { VGW_CONFIG: 'bad.yaml' }, cwd: dir }), { message: /not valid YAML/ });
  t.throws(() => loadConfig({ env: { VGW_CONFIG: join(dir, 'absent.yaml') } }), ConfigError);
  t.throws(() => loadConfig({ env: { VGW_RTP_PORT_MIN: '30000', VGW_RTP_PORT_MAX: '20000' } }), { message: /rtp\.port_min .* below rtp\.port_max/ });
  writeFileSync(join(dir, 'list.yaml'), '- a\n');
  t.throws(() => loadConfig({ env: { VGW_CONFIG: 'list.yaml' }, cwd: dir }), { message: /mapping/ });
  t.end();
});

t.test('SECURITY.md "Outbound addresses": the operator\'s exceptions are off by default; a bad network stops the start', (t) => {
  const defaults = loadConfig({ env: {} });
  t.equal(defaults.calls.allow_private_sip_targets, false);
  t.same(defaults.calls.allowed_private_networks, []);
  t.equal(loadConfig({ env: { VGW_ALLOW_PRIVATE_SIP_TARGETS: 'true' } }).calls.allow_private_sip_targets, true);
  const dir = t.testdir({ 'ok.yaml': "calls:\n  allowed_private_networks: ['10.20.0.0/16', 'fd00::/8', '192.168.1.7']\n", 'bad.yaml': "calls:\n  allowed_private_networks: ['pbx.internal']\n" });
  t.same(loadConfig({ env: { VGW_CONFIG: 'ok.yaml' }, cwd: dir }).calls.allowed_private_networks, ['10.20.0.0/16', 'fd00::/8', '192.168.1.7']);
  t.throws(() => loadConfig({ env: { VGW_CONFIG: 'bad.yaml' }, cwd: dir }), { name: 'ConfigError', message: /calls\.allowed_private_networks has "pbx\.internal"/ });
  t.end();
});

t.test('docs/CONFIGURATION.md role: `all` by default; `api` and `engine` need cluster.secret, which no error message repeats', (t) => {
  const config = loadConfig({ env: { VGW_SIP_PORT: '5070' }, cwd: '/srv/vgw' });
  t.equal(config.role, 'all');
  t.match(config.node_id, /:5070$/, 'the node id defaults to the host name and the SIP port');
  t.equal(config.recordings.dir, '/srv/vgw/data/recordings', 'recordings in the data folder by default');
  t.equal(config.internal.host, '127.0.0.1', 'the internal endpoint on loopback by default');
  for (const role of ['api', 'engine']) {
    t.throws(() => loadConfig({ env: { VGW_ROLE: role } }), { name: 'ConfigError', message: /cluster\.secret \(VGW_CLUSTER_SECRET\) is required/ }, `${role} without a secret`);
  }
  const short = 'too-short';
  let message = '';
  try { loadConfig({ env: { VGW_ROLE: 'api', VGW_CLUSTER_SECRET: short } }); } catch (err) { message = (err as Error).message; }
  t.match(message, /cluster\.secret/, 'a short secret is refused by key');
  t.notMatch(message, short, 'without its value');
  const engine = loadConfig({ env: { VGW_ROLE: 'engine', VGW_CLUSTER_SECRET: 'x'.repeat(32), VGW_NODE_ID: 'engine-7', VGW_INTERNAL_PORT: '9001', VGW_RECORDINGS_DIR: '/mnt/rec' } });
  t.match(engine, { role: 'engine', node_id: 'engine-7', internal: { port: 9001 }, recordings: { dir: '/mnt/rec' } });
  t.throws(() => loadConfig({ env: { VGW_ROLE: 'both' } }), ConfigError, 'an unknown role');
  t.end();
});

t.test('docs/CONFIGURATION.md api.live_list_cache_ms: 250 by default, 0 (off) to 10000, set by VGW_API_LIVE_LIST_CACHE_MS', (t) => {
  t.equal(loadConfig({ env: {} }).api.live_list_cache_ms, 250);
  t.equal(loadConfig({ env: { VGW_API_LIVE_LIST_CACHE_MS: '0' } }).api.live_list_cache_ms, 0);
  t.equal(loadConfig({ env: { VGW_API_LIVE_LIST_CACHE_MS: '100' } }).api.live_list_cache_ms, 100);
  t.throws(() => loadConfig({ env: { VGW_API_LIVE_LIST_CACHE_MS: '-1' } }), { message: /api\.live_list_cache_ms must be >= 0 \(VGW_API_LIVE_LIST_CACHE_MS\)/ });
  t.throws(() => loadConfig({ env: { VGW_API_LIVE_LIST_CACHE_MS: '60000' } }), { message: /api\.live_list_cache_ms must be <= 10000/ });
  t.end();
});
