/**
 * @module The whole gateway in this process for media reliability runs, like startTestGateway but
 * with an RTP range chosen by the test (startTestGateway writes its own `rtp:` block, which extra
 * YAML cannot override), a carrier trunk taking inbound calls from loopback, and a routed DID
 * whose imported agent is a fake WebSocket agent.
 */
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogger } from '../../../src/common/logger.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { startGateway } from '../../../src/gateway.js';
import type { ApiBody, TestGateway } from '../../support/gateway-harness.js';

interface TestContext {
  testdir(fixture?: Record<string, string>): string;
  teardown(fn: () => void | Promise<void>): void;
}

export const DID = '+15550100';
const CARRIERS = 'carriers:\n  - name: trunk\n    inbound:\n      sources: [\'127.0.0.1\']\n';

/** True when every port of `min`..`max` can be bound on 127.0.0.1 now (the sockets are closed again). */
export async function portsFree(min: number, max: number): Promise<boolean> {
  const results = await Promise.all(Array.from({ length: max - min + 1 }, (_, i) => new Promise<boolean>((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => { socket.close(); resolve(false); });
    socket.bind({ port: min + i, address: '127.0.0.1', exclusive: true }, () => socket.close(() => resolve(true)));
  })));
  return results.every(Boolean);
}

/**
 * An even range of `size` ports above the kernel's ephemeral range (32768-60999), where no test
 * binds port 0 by accident, that is free right now.
 */
export async function freeRtpRange(size: number): Promise<{ min: number; max: number }> {
  for (;;) {
    const min = 61000 + 2 * Math.floor(Math.random() * ((65534 - 61000 - size) / 2));
    if (await portsFree(min, min + size - 1)) return { min, max: min + size - 1 };
  }
}

/** Starts the gateway with RTP on `rtp` only; the tenant has a live key, a sandbox key and `DID` routed to `agentUrl`. */
export async function startMediaGateway(t: TestContext, options: { rtp: { min: number; max: number }; agentUrl: string; yaml?: string }): Promise<TestGateway> {
  const dir = t.testdir({});
  const dataDir = join(dir, 'data');
  const carriersFile = join(dir, 'carriers.yaml');
  writeFileSync(carriersFile, CARRIERS);
  const configFile = join(dir, 'config.yaml');
  writeFileSync(configFile, [
    `data_dir: ${JSON.stringify(dataDir)}`,
    `carriers_file: ${JSON.stringify(carriersFile)}`,
    'log_level: info',
    'http:\n  host: 127.0.0.1\n  port: 0\n  rate_limit_per_second: 10000\n  rate_limit_burst: 10000',
    'sip:\n  host: 127.0.0.1\n  port: 0\n  t1_ms: 100',
    `rtp:\n  port_min: ${options.rtp.min}\n  port_max: ${options.rtp.max}`,
    'sandbox:\n  ring_ms: 50\n  announcement: ""',
    'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 5',
    options.yaml ?? '',
  ].join('\n'));
  const config = loadConfig({ env: { VGW_CONFIG: configFile } });
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({ level: 'info', destination: { write: (line: string) => { if (logs.length < 10_000) logs.push(JSON.parse(line) as Record<string, unknown>); } } });
  const gateway = await startGateway({ config, logger, announce: () => undefined });
  t.teardown(() => gateway.stop('test over'));
  const tenant = gateway.store.tenants.create('acme');
  const liveKey = gateway.store.apiKeys.create(tenant.id, 'live').apiKey;
  const sandboxKey = gateway.store.apiKeys.create(tenant.id, 'sandbox').apiKey;
  const base = `http://127.0.0.1:${gateway.httpPort}`;
  const api: TestGateway['api'] = async (method, path, body, o = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${o.key ?? sandboxKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as ApiBody, headers: response.headers };
  };
  gateway.store.numbers.add(tenant.id, DID, 'trunk');
  const imported = await api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'front-desk', connection_mode: 'media_bridge', websocket_url: options.agentUrl, did_number: DID,
  }, { key: liveKey });
  if (imported.status !== 200) throw new Error(`agent import failed: ${JSON.stringify(imported.body)}`);
  return { gateway, dataDir, base, tenantId: tenant.id, liveKey, sandboxKey, api, logs };
}
