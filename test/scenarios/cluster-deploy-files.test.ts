/**
 * docs/CLUSTER.md "Deploy with Docker": docker-compose.yml and the Dockerfiles, checked without a
 * Docker daemon (there is none where this project is built). The compose file parses; each
 * gateway service's environment, with its variables substituted as Compose does, is a valid
 * configuration (docs/CONFIGURATION.md), and every VGW_* variable it sets changes that
 * configuration or is required by it (none is a name the gateway ignores); the engines' ports and RTP ranges are
 * apart and each engine's edge destination is in the edge's dispatcher list; everything the
 * Dockerfiles copy and the compose file mounts exists and is not excluded from the build context.
 */
import t from 'tap';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/load-config.js';
import type { Config } from '../../src/config/schema.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** What an operator's .env holds. */
const DOT_ENV: Record<string, string> = {
  PUBLIC_IP: '192.0.2.10',
  POSTGRES_PASSWORD: 'pg-password-1234',
  VGW_SECRET_KEY: 'ab'.repeat(32),
  VGW_CLUSTER_SECRET: 'cluster-secret-0123456789',
  CARRIERS_FILE: '/etc/vgw/sbc-config/carriers.yaml',
  // Optional ones, away from their defaults so that their effect shows.
  VGW_LOG_LEVEL: 'debug',
  NODE_CAPACITY: '400',
};

/** Compose's substitution: `${NAME}`, `${NAME:-default}`, `${NAME:?error}`; an unset required one fails. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?:(:-|:\?)([^}]*))?\}/g, (_, name: string, op: string | undefined, arg: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (op === ':?') throw new Error(`${name} is required: ${arg}`);
    return op === ':-' ? arg ?? '' : '';
  });
}

interface Service {
  build?: string;
  environment?: Record<string, string>;
  configs?: { source: string; target: string }[];
  volumes?: string[];
  command?: string[];
}
interface Compose { services: Record<string, Service>; configs: Record<string, { content: string }> }

const composeText = readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8');
const compose = parse(interpolate(composeText, DOT_ENV), { merge: true }) as Compose;
const GATEWAYS = ['engine-a', 'engine-b', 'api'];

/** The service's configuration as the gateway loads it, its config files written to `dir`. */
function configOf(dir: string, name: string, env: Record<string, string>): Readonly<Config> {
  const files = Object.fromEntries((compose.services[name]!.configs ?? []).map((c) => {
    const file = join(dir, `${name}-${c.source}`);
    writeFileSync(file, compose.configs[c.source]!.content);
    return [c.target, file];
  }));
  // Compose passes every value as a string, numbers included.
  const withFiles = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, files[String(v)] ?? String(v)]));
  return loadConfig({ env: withFiles, cwd: dir });
}

const omit = (env: Record<string, string>, name: string): Record<string, string> => Object.fromEntries(Object.entries(env).filter(([k]) => k !== name));
/** The value with its last number one higher: `8080` → `8081`, `127.0.0.1` → `127.0.0.2`. */
const bumped = (value: string): string => value.replace(/\d+(?=\D*$)/, (n) => String(Number(n) + 1));

t.test('docs/CLUSTER.md "Deploy with Docker": the compose file needs its secrets and the public address', (t) => {
  for (const name of ['PUBLIC_IP', 'POSTGRES_PASSWORD', 'VGW_SECRET_KEY', 'VGW_CLUSTER_SECRET']) {
    t.throws(() => interpolate(composeText, { ...DOT_ENV, [name]: '' }), new RegExp(`${name} is required`), `${name} unset stops it`);
  }
  t.doesNotThrow(() => interpolate(composeText, { ...DOT_ENV, CARRIERS_FILE: '' }), 'the carriers file is optional');
  t.same(Object.keys(compose.services).sort(), ['api', 'engine-a', 'engine-b', 'kamailio', 'postgres', 'redis']);
  t.end();
});

t.test('docs/CLUSTER.md "Deploy with Docker": every gateway service\'s environment is a configuration the gateway loads, every VGW_* variable in it known', (t) => {
  const dir = t.testdir({});
  for (const name of GATEWAYS) {
    const env = compose.services[name]!.environment!;
    const config = configOf(dir, name, env);
    t.equal(config.role, name === 'api' ? 'api' : 'engine', `${name}: its role`);
    t.equal(config.storage.url, 'postgres://vgw:pg-password-1234@127.0.0.1:5432/vgw', `${name}: the shared PostgreSQL`);
    t.equal(config.cluster.redis_url, 'redis://127.0.0.1:6379', `${name}: the shared Redis`);
    t.equal(config.recordings.dir, '/var/lib/vgw-recordings', `${name}: the shared recordings volume`);
    for (const variable of Object.keys(env)) {
      t.ok(variable.startsWith('VGW_'), `${name}: ${variable} has the gateway's prefix`);
      if (variable === 'VGW_CONFIG') continue; // the file itself; its effect is checked below
      const outcome = (e: Record<string, string>): Readonly<Config> | Error => {
        try {
          return configOf(dir, name, e);
        } catch (err) {
          return err as Error;
        }
      };
      const without = outcome(omit(env, variable));
      if (without instanceof Error) {
        t.match(without.message, variable, `${name}: ${variable} is required`);
        continue;
      }
      // A value equal to the default changes nothing when left out: another value must.
      const other = outcome({ ...env, [variable]: bumped(String(env[variable])) });
      t.ok(JSON.stringify(without) !== JSON.stringify(config) || (!(other instanceof Error) && JSON.stringify(other) !== JSON.stringify(config)),
        `${name}: ${variable} changes the configuration`);
    }
  }
  t.end();
});

t.test('docs/CLUSTER.md "Deploy with Docker": the engines are apart and each is in the edge\'s dispatcher list', (t) => {
  const dir = t.testdir({});
  const engines = ['engine-a', 'engine-b'].map((name) => configOf(dir, name, compose.services[name]!.environment!));
  const [a, b] = engines as [Readonly<Config>, Readonly<Config>];
  t.not(a.node_id, b.node_id, 'node ids');
  t.not(a.sip.port, b.sip.port, 'SIP ports');
  t.not(a.http.port, b.http.port, 'HTTP ports');
  t.not(a.internal.port, b.internal.port, 'internal ports');
  t.ok(a.rtp.port_max < b.rtp.port_min || b.rtp.port_max < a.rtp.port_min, 'RTP ranges do not overlap');
  const list = compose.configs['dispatcher.list']!.content.trim().split('\n');
  for (const e of engines) {
    t.same(e.sip.trusted_proxies, [DOT_ENV.PUBLIC_IP], `${e.node_id} trusts the edge's address (docs/ARCHITECTURE.md "Trusted edge proxies")`);
    t.equal(e.sip.outbound_proxy, `sip:${DOT_ENV.PUBLIC_IP}:5060`, `${e.node_id} sends out through the edge`);
    // docs/CONFIGURATION.md `cluster.edge.destination`: sip:<sip.host>:<sip.port> by default.
    const destination = e.cluster.edge.destination ?? `sip:${e.sip.host}:${e.sip.port}`;
    t.ok(list.includes(`1 ${destination} 0 0 duid=${e.node_id}`), `${e.node_id}'s destination ${destination} is in the dispatcher list`);
  }
  const edge = compose.services.kamailio!.command!;
  t.ok(edge.includes(`EDGE_IP=${DOT_ENV.PUBLIC_IP}`) && edge.includes('EDGE_PORT=5060'), 'the edge listens where the engines send');
  t.end();
});

/** `.dockerignore` patterns (plain paths and `*.ext` here) that exclude `path`. */
function ignored(path: string): string | undefined {
  const patterns = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  return patterns.find((p) => p.startsWith('*.') ? path.endsWith(p.slice(1)) : path === p || path.startsWith(`${p}/`));
}

t.test('docs/CLUSTER.md "Deploy with Docker": what the images copy and the compose file mounts exists, in the build context', (t) => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const copies = [...dockerfile.matchAll(/^COPY (?!--from)(.+)$/gm)].flatMap((m) => m[1]!.trim().split(/\s+/).slice(0, -1));
  t.ok(copies.length >= 5, `the Dockerfile copies ${copies.join(', ')}`);
  for (const source of copies) {
    t.ok(existsSync(join(ROOT, source)), `${source} exists`);
    t.equal(ignored(source), undefined, `${source} is not excluded by .dockerignore`);
  }
  t.match(dockerfile, /^FROM node:20-bookworm-slim AS runtime$/m, 'the runtime stage');
  t.match(dockerfile.slice(dockerfile.indexOf('AS runtime')), /^USER node$/m, 'which runs as an unprivileged user');
  for (const [name, service] of Object.entries(compose.services)) {
    if (service.build !== undefined) t.ok(existsSync(join(ROOT, service.build, 'Dockerfile')), `${name}: ${service.build}/Dockerfile`);
    for (const volume of service.volumes ?? []) {
      const host = volume.split(':')[0]!;
      if (host.startsWith('./')) t.ok(existsSync(join(ROOT, host)), `${name}: ${host} exists`);
    }
  }
  t.end();
});
