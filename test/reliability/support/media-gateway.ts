/**
 * @module The whole gateway in this process for media reliability runs (startTestGateway) with an
 * RTP range chosen by the test, a carrier trunk taking inbound calls from loopback, and a routed
 * DID whose imported agent is a fake WebSocket agent.
 */
import { createSocket } from 'node:dgram';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';

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
export async function startMediaGateway(t: TestContext, options: { rtp: { min: number; max: number }; agentUrl: string }): Promise<TestGateway> {
  const gw = await startTestGateway(t, {
    rtp: options.rtp, carriers: CARRIERS, sandboxRingMs: 50, logLevel: 'info',
    yaml: 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 5',
  });
  await gw.gateway.store.numbers.add(gw.tenantId, DID, 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'front-desk', connection_mode: 'media_bridge', websocket_url: options.agentUrl, did_number: DID,
  }, { key: gw.liveKey });
  if (imported.status !== 200) throw new Error(`agent import failed: ${JSON.stringify(imported.body)}`);
  return gw;
}
