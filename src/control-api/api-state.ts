/** @module What middleware leaves on `ctx.state` for the handlers after it. */
import type { ApiKeyId, TenantId } from '../common/ids.js';

/** The authenticated caller. */
export interface Principal {
  tenantId: TenantId;
  apiKeyId: ApiKeyId;
  keyKind: 'live' | 'sandbox';
  via: 'bearer' | 'cookie';
  /** Set for cookie sessions: what logout revokes. */
  sessionToken?: string;
}

export interface ApiState {
  requestId: string;
  principal?: Principal;
  /** The matched route's template, for metrics and logs (never the raw path with ids). */
  routeTemplate?: string;
}
