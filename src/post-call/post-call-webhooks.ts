/**
 * @module The post-call webhook use case (docs/WEBHOOKS.md): a delivery's signature is checked
 * when the provider has a secret, then the payload is ingested. The HTTP layer hands in the body,
 * its exact text and a header reader, and presents the outcome.
 */
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { Store } from '../storage/index.js';
import { ingestPostCall, type IngestStatus } from './ingest.js';
import { PerCallQueue } from './per-call-queue.js';
import type { SignatureOutcome, WebhookOptions, WebhookPorts, WebhookProvider } from './post-call-ports.js';

export interface PostCallDeps {
  store: Pick<Store, 'webhooks' | 'transcripts' | 'recordings' | 'transaction'>;
  ports: WebhookPorts;
  options: WebhookOptions;
  clock: Clock;
  logger: Logger;
}

/** One delivery as received: the parsed JSON, the body's exact text (signatures cover it) and its headers. */
export interface PostCallDelivery {
  provider: WebhookProvider;
  body: unknown;
  rawBody: string;
  /** A request header by its lower-case name; undefined when absent or empty. */
  header: (name: string) => string | undefined;
}

/** What became of a delivery: ingested (`accepted`, `duplicate`, `ignored`), or refused for its signature. */
export type PostCallOutcome = { status: IngestStatus } | { status: 'unauthorized'; signature: Exclude<SignatureOutcome, 'valid'> };

export class PostCallWebhooks {
  readonly #deps: PostCallDeps;
  /** One per process: deliveries of one call are stored one at a time. */
  readonly #queue = new PerCallQueue();

  constructor(deps: PostCallDeps) {
    this.#deps = deps;
  }

  /** Checks the delivery's signature (only when a secret is configured for its provider), then ingests it. */
  async receive(delivery: PostCallDelivery): Promise<PostCallOutcome> {
    const secret = this.#deps.options.secrets[delivery.provider];
    if (secret !== undefined) {
      const signature = this.#signatureOf(delivery, secret);
      if (signature !== 'valid') return { status: 'unauthorized', signature };
    }
    const status = await ingestPostCall({ ...this.#deps, queue: this.#queue }, delivery.provider, delivery.body, delivery.rawBody);
    return { status };
  }

  #signatureOf({ provider, rawBody, header }: PostCallDelivery, secret: string): SignatureOutcome {
    const vendor = this.#deps.ports.vendors.get(provider);
    // A route exists only for a registry vendor; a provider without one has nothing to verify with.
    if (!vendor) return 'invalid';
    return vendor.verifySignature(rawBody, header, secret, this.#deps.clock.now());
  }
}
