/**
 * @module POST /v1/webhooks/{provider} for each provider with a post-call webhook (docs/WEBHOOKS.md "Post-call webhooks": no credentials, strict
 * attribution, optional signatures) and GET /v1/calls/{id}/recording, which serves what it archives.
 */
import { Type } from '@sinclair/typebox';
import { Counter, type Registry } from 'prom-client';
import { ApiError } from '../../../common/errors.js';
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import {
  PostCallWebhooks, findCallRecording, type PostCallOutcome, type PostCallVendor, type RecordingFile, type WebhookOptions, type WebhookPorts, type WebhookProvider,
} from '../../../post-call/index.js';
import type { Store } from '../../../storage/index.js';
import { defineRoute, type AnyRoute, type RouteResult } from '../../route.js';
import { IdParams } from '../agents/agents.schemas.js';
import { callInScope } from '../calls/key-scope.js';

export interface WebhookRouteDeps {
  store: Pick<Store, 'calls' | 'webhooks' | 'transcripts' | 'recordings' | 'transaction'>;
  ports: WebhookPorts;
  options: WebhookOptions;
  clock: Clock;
  logger: Logger;
  /** Where `vgw_webhook_ingestions_total` is registered; none in tests that do not read metrics. */
  metrics?: Registry;
}

const WebhookResponse = Type.Object({ status: Type.Union([Type.Literal('accepted'), Type.Literal('duplicate'), Type.Literal('ignored')]) });

function presentOutcome(outcome: PostCallOutcome): RouteResult {
  if (outcome.status === 'unauthorized') throw new ApiError(401, 'unauthorized', `The webhook signature is ${outcome.signature}.`);
  return { status: 200, body: { status: outcome.status } };
}

/** Response headers of a recording (docs/SECURITY.md, Serving recordings): its real type, `nosniff`, an attachment named by the call id. */
function recordingHeaders(recording: RecordingFile, callId: string): Record<string, string> {
  const name = `${callId.replace(/[^A-Za-z0-9_-]/g, '_')}.${recording.format.extension}`;
  return {
    'Content-Type': recording.format.mediaType,
    'Content-Length': String(recording.size),
    'Content-Disposition': `attachment; filename="${name}"`,
    'X-Content-Type-Options': 'nosniff',
  };
}

type OutcomeCounter = (provider: WebhookProvider, outcome: PostCallOutcome['status']) => void;

/** Post-call deliveries by provider and what became of them (accepted, duplicate, ignored, unauthorized). */
function outcomeCounter(metrics: Registry | undefined): OutcomeCounter {
  if (!metrics) return () => undefined;
  const ingestions = new Counter({
    name: 'vgw_webhook_ingestions_total', help: 'Post-call webhook deliveries by provider and outcome (accepted, duplicate, ignored, unauthorized).',
    labelNames: ['provider', 'outcome'], registers: [metrics],
  });
  return (provider, outcome) => ingestions.inc({ provider, outcome });
}

function webhookRoute(deps: WebhookRouteDeps, webhooks: PostCallWebhooks, count: OutcomeCounter, provider: WebhookProvider, vendor: PostCallVendor): AnyRoute {
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
      const header = (name: string): string | undefined => ctx.get(name) || undefined;
      const outcome = await webhooks.receive({ provider, body, rawBody: ctx.request.rawBody ?? '', header });
      count(provider, outcome.status);
      return presentOutcome(outcome);
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
    async handle({ params, principal }) {
      const call = callInScope(principal, await deps.store.calls.get(principal.tenantId, params.id));
      const recording = await findCallRecording({ store: deps.store, recordings: deps.options.recordings, logger: deps.logger }, principal.tenantId, call);
      if (!recording) throw noRecording();
      return { status: 200, body: recording.stream(), headers: recordingHeaders(recording, call.id) };
    },
  });
}

/** One `POST /v1/webhooks/{provider}` per provider the registry gives a post-call webhook, then the recording route. */
export function webhookRoutes(deps: WebhookRouteDeps): AnyRoute[] {
  const webhooks = new PostCallWebhooks(deps);
  const count = outcomeCounter(deps.metrics);
  return [...[...deps.ports.vendors].map(([provider, vendor]) => webhookRoute(deps, webhooks, count, provider, vendor)), recordingRoute(deps)];
}
