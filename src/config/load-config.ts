/**
 * @module Builds the frozen Config: defaults, then the YAML file named by VGW_CONFIG, then VGW_*
 * environment variables. The only module that reads process.env.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isAddressOrCidr } from '../common/address-policy.js';
import { compileValidator } from '../common/schema.js';
import { ConfigSchema, type Config } from './schema.js';

/** A configuration problem, naming the key (and the variable or file that set it). */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type EnvKind = 'string' | 'int' | 'bool';
/** Environment variable → config path (docs/CONFIGURATION.md "Operator surface"). */
const ENV_MAP: Record<string, { path: string[]; kind: EnvKind }> = {
  VGW_HTTP_HOST: { path: ['http', 'host'], kind: 'string' },
  VGW_HTTP_PORT: { path: ['http', 'port'], kind: 'int' },
  VGW_COOKIE_SECURE: { path: ['http', 'cookie_secure'], kind: 'bool' },
  VGW_SIP_HOST: { path: ['sip', 'host'], kind: 'string' },
  VGW_SIP_PORT: { path: ['sip', 'port'], kind: 'int' },
  VGW_PUBLIC_IP: { path: ['sip', 'public_ip'], kind: 'string' },
  VGW_RTP_PORT_MIN: { path: ['rtp', 'port_min'], kind: 'int' },
  VGW_RTP_PORT_MAX: { path: ['rtp', 'port_max'], kind: 'int' },
  VGW_RTP_SOCKET_IO: { path: ['rtp', 'socket_io'], kind: 'string' },
  VGW_RTP_RELAY_THREAD: { path: ['rtp', 'relay_thread'], kind: 'bool' },
  VGW_RTP_RELAY_THREAD_PRIORITY: { path: ['rtp', 'relay_thread_priority'], kind: 'int' },
  VGW_RTP_STRICT_SOURCE: { path: ['rtp', 'strict_source'], kind: 'bool' },
  VGW_DATA_DIR: { path: ['data_dir'], kind: 'string' },
  VGW_CARRIERS_FILE: { path: ['carriers_file'], kind: 'string' },
  VGW_SECRET_KEY: { path: ['secret_key'], kind: 'string' },
  VGW_LOG_LEVEL: { path: ['log_level'], kind: 'string' },
  VGW_ALLOW_PRIVATE_AGENT_URLS: { path: ['calls', 'allow_private_agent_urls'], kind: 'bool' },
  VGW_ALLOW_PRIVATE_SIP_TARGETS: { path: ['calls', 'allow_private_sip_targets'], kind: 'bool' },
  VGW_ROLE: { path: ['role'], kind: 'string' },
  VGW_NODE_ID: { path: ['node_id'], kind: 'string' },
  VGW_DATABASE_URL: { path: ['storage', 'url'], kind: 'string' },
  VGW_INTERNAL_PORT: { path: ['internal', 'port'], kind: 'int' },
  VGW_CLUSTER_SECRET: { path: ['cluster', 'secret'], kind: 'string' },
  VGW_REDIS_URL: { path: ['cluster', 'redis_url'], kind: 'string' },
  VGW_NODE_CAPACITY: { path: ['cluster', 'capacity'], kind: 'int' },
  VGW_EDGE_RPC_URL: { path: ['cluster', 'edge', 'rpc_url'], kind: 'string' },
  VGW_EDGE_DESTINATION: { path: ['cluster', 'edge', 'destination'], kind: 'string' },
  VGW_SIP_OUTBOUND_PROXY: { path: ['sip', 'outbound_proxy'], kind: 'string' },
  VGW_RECORDINGS_DIR: { path: ['recordings', 'dir'], kind: 'string' },
  VGW_API_LIVE_LIST_CACHE_MS: { path: ['api', 'live_list_cache_ms'], kind: 'int' },
};

function convert(raw: string, kind: EnvKind): unknown {
  if (kind === 'int') return /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
  if (kind === 'bool') {
    const v = raw.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(v)) return true;
    if (['0', 'false', 'no', 'off'].includes(v)) return false;
    return raw;
  }
  return raw;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`config: cannot read VGW_CONFIG file ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`config: ${file} is not valid YAML: ${(err as Error).message}`);
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError(`config: ${file} must hold a mapping of settings`);
  return parsed as Record<string, unknown>;
}

const validateConfig = compileValidator(ConfigSchema, { useDefaults: true });

export interface LoadConfigOptions {
  env?: Record<string, string | undefined>;
  /** Base for relative paths (data_dir, carriers_file); the process's working folder by default. */
  cwd?: string;
}

/** Loads, validates and freezes the configuration. Throws {@link ConfigError} naming the bad key. */
export function loadConfig(options: LoadConfigOptions = {}): Readonly<Config> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const file = env.VGW_CONFIG;
  const raw: Record<string, unknown> = file ? readConfigFile(resolve(cwd, file)) : {};
  const origin = new Map<string, string>();
  for (const [name, { path, kind }] of Object.entries(ENV_MAP)) {
    const value = env[name];
    if (value === undefined || value === '') continue;
    setPath(raw, path, convert(value, kind));
    origin.set(`/${path.join('/')}`, name);
  }
  const result = validateConfig(raw);
  if (!result.ok) {
    const lines = result.issues.map((i) => {
      const key = i.path.slice(1).replaceAll('/', '.') || '(root)';
      const source = origin.get(i.path) ?? (file ? `in ${file}` : 'default');
      return `${key} ${i.message} (${source})`;
    });
    throw new ConfigError(`config: ${lines.join('; ')}`);
  }
  const config = result.value;
  if (config.rtp.port_min >= config.rtp.port_max) {
    throw new ConfigError(`config: rtp.port_min (${config.rtp.port_min}) must be below rtp.port_max (${config.rtp.port_max})`);
  }
  const network = config.calls.allowed_private_networks.find((n) => !isAddressOrCidr(n));
  if (network !== undefined) throw new ConfigError(`config: calls.allowed_private_networks has "${network}", which is not an IP address or CIDR`);
  if (config.role !== 'all' && config.cluster.secret === undefined) {
    throw new ConfigError(`config: cluster.secret (VGW_CLUSTER_SECRET) is required when role is ${config.role}`);
  }
  config.data_dir = resolve(cwd, config.data_dir);
  config.recordings.dir = resolve(config.data_dir, config.recordings.dir ?? 'recordings');
  config.node_id ??= `${hostname()}:${config.sip.port}`;
  if (config.carriers_file) config.carriers_file = resolve(cwd, config.carriers_file);
  return deepFreeze(config);
}
