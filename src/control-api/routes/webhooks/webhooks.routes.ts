/**
 * @module POST /v1/webhooks/{provider} for each provider with a post-call webhook (docs/WEBHOOKS.md "Post-call webhooks": no credentials, strict
 * attribution, optional signatures) and GET /v1/calls/{id}/recording, which serves what it archives.
 */
import { createReadStream, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../../common/errors.js';
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { Store } from '../../../storage/index.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { IdParams } from '../agents/agents.schemas.js';
import { callInScope } from '../calls/key-scope.js';
import { recordingHeaders } from '../calls/recording-format.js';
import { ingestPostCall } from './ingest.js';
import type { PostCallVendor, WebhookOptions, WebhookPorts, WebhookProvider } from './webhook-ports.js';

export interface WebhookRouteDeps {
  store: Pick<Store, 'calls' | 'webhooks' | 'transcripts' | 'recordings' | 'transaction'>;
  ports: WebhookPorts;
  options: WebhookOptions;
  clock: Clock;
  logger: Logger;
}

const WebhookResponse = Type.Object({ status: Type.Union([Type.Literal('accepted'), Type.Literal('duplicate'), Type.Literal('ignored')]) });

function webhookRoute(deps: WebhookRouteDeps, provider: WebhookProvider, vendor: PostCallVendor): AnyRoute {
  return defineRoute({
    method: 'POST', path: `/v1/webhooks/${provider}`, operationId: `${provider}PostCallWebhook`, tags: ['webhooks'], auth: 'none',
    summary: `Ingest a post-call payload from ${vendor.displayName} (transcript, recording)`,
    description: 'No credentials. Any well-formed JSON answers 200: `accepted` when attributed to a recent call on a DID this '
      + 'gateway routes to the provider\'s agent (or to a known conversation id), `duplicate` for a delivery the same tenant '
      + 'had already, `ignored` otherwise: nothing is applied, and nothing is stored except an audit row for a delivery that '
      + 'conflicts with what the call\'s first delivery stored. A signature is required only when a secret is configured for the provider.',
    body: Type.Unknown(),
    rawBody: true,
    bodyLimitBytes: deps.options.bodyLimitBytes,
    responses: { 200: { description: 'What became of the payload.', schema: WebhookResponse } },
    errors: { 401: 'A secret is configured and the signature is missing, wrong or stale (`unauthorized`).' },
    async handle({ body, ctx }) {
      const rawBody = ctx.request.rawBody ?? '';
      const secret = deps.options.secrets[provider];
      if (secret !== undefined) {
        const outcome = vendor.verifySignature(rawBody, (name) => ctx.get(name) || undefined, secret, deps.clock.now());
        if (outcome !== 'valid') throw new ApiError(401, 'unauthorized', `The webhook signature is ${outcome}.`);
      }
      return { status: 200, body: { status: await ingestPostCall(deps, provider, body, rawBody) } };
    },
  });
}

const noRecording = (): ApiError => new ApiError(404, 'not_found', 'That call has no recording.');

function recordingRoute(deps: WebhookRouteDeps): AnyRoute {
  return defineRoute({
    method: 'GET', path: '/v1/calls/{id}/recording', operationId: 'getCallRecording', tags: ['calls'], auth: 'tenant',
    summary: "A call's recording: the gateway's own, else the provider's archived copy",
    params: IdParams,
    description: 'The media type is that of the file\'s content (`audio/wav` for the gateway\'s own recordings), never the one a provider\'s download claimed; '
      + 'a file in no known audio format is `application/octet-stream`. Always an attachment, with `X-Content-Type-Options: nosniff`.',
    responses: {
      200: {
        description: 'The audio file.', contentType: 'audio/*',
        headers: {
          'Content-Length': { description: 'Size in bytes.' },
          'Content-Disposition': { description: '`attachment; filename="<call id>.<ext>"`.' },
          'X-Content-Type-Options': { description: '`nosniff`.' },
        },
      },
    },
    errors: { 404: 'No such call (or one outside the key\'s scope), or no recording (`not_found`).' },
    handle({ params, principal }) {
      const call = callInScope(principal, deps.store.calls.get(principal.tenantId, params.id));
      const provider = deps.store.recordings.get(principal.tenantId, call.id, 'provider');
      const path = call.recording_path ?? provider?.path;
      if (path === undefined) throw noRecording();
      const file = isAbsolute(path) ? path : join(deps.options.dataDir, path);
      let headers: Record<string, string>;
      try {
        headers = recordingHeaders(file, call.id, statSync(file).size);
      } catch (err) {
        deps.logger.warn({ call_id: call.id, err }, 'recording file missing');
        throw noRecording();
      }
      return { status: 200, body: createReadStream(file), headers };
    },
  });
}

/** One `POST /v1/webhooks/{provider}` per provider the registry gives a post-call webhook, then the recording route. */
export function webhookRoutes(deps: WebhookRouteDeps): AnyRoute[] {
  return [...[...deps.ports.vendors].map(([provider, vendor]) => webhookRoute(deps, provider, vendor)), recordingRoute(deps)];
}
