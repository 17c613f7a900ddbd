/**
 * The gateway's OpenAPI document (what `GET /v1/openapi.json` answers), built from the same route
 * declarations as a running API process, over an in-memory store: the console's API types are
 * generated from it (docs/CONSOLE.md "API types").
 */
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { systemClock } from '../../src/common/clock.js';
import { createLogger } from '../../src/common/logger.js';
import { FolderRecordingFiles } from '../../src/common/recording-files.js';
import { SecretBox } from '../../src/common/secret-box.js';
import { createApp } from '../../src/control-api/app.js';
import { locateAddresses, ServerLocator } from '../../src/engine/sip/index.js';
import { createProviderRegistry, downloadRecording, postCallWebhooks } from '../../src/providers/index.js';
import { openStore } from '../../src/storage/index.js';

export async function gatewayOpenApiDocument(): Promise<Record<string, unknown>> {
  const store = await openStore(':memory:', systemClock, { idleMs: 60_000, absoluteMs: 60_000 }, new SecretBox(randomBytes(32)));
  try {
    const locator = new ServerLocator({});
    const api = createApp({
      options: {
        cookieSecure: false, allowedOrigins: [], bodyLimitBytes: 1024, rateLimitPerSecond: 1, rateLimitBurst: 1,
        largeBodies: { largeBodyBytes: 1024, maxLargeBodiesPerClient: 1, maxLargeBodies: 1 },
        sessionMaxAgeSeconds: 60, trustProxy: false, allowPrivateAgentUrls: false, callLiveWindowMs: 60_000,
      },
      store, clock: systemClock, metrics: new Registry(),
      logger: createLogger({ level: 'silent', destination: { write: () => undefined } }),
      platforms: createProviderRegistry(),
      readiness: { notReadyReason: () => null },
      locateSip: (uri) => locateAddresses(locator, uri),
      sipTraces: { read: () => Promise.resolve(undefined) },
      webhooks: {
        ports: { vendors: postCallWebhooks(), downloadRecording },
        options: {
          attributionWindowMs: 1, secrets: {}, recordingHosts: { elevenlabs: [], retell: [], vapi: [] }, downloadMaxBytes: 1,
          downloadTimeoutMs: 1, downloadMaxRedirects: 0, recordings: new FolderRecordingFiles(join(tmpdir(), 'unused')),
          bodyLimitBytes: 1024, maxRawBytesPerCall: 1, maxRawBytesTotal: 1,
        },
      },
    });
    return api.openApiDocument();
  } finally {
    await store.close();
  }
}
