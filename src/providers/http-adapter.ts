/** @module Builds a {@link ProviderAdapter} from a platform's declarative description. */
import { InvariantError } from '../common/errors.js';
import { fieldValueSendable, verifyOverHttp, type AnswerInterpreter, type HttpOptions, type VerifyRequest } from './http-verify.js';
import type {
  ConnectionMode,
  EndpointOverrides,
  ProviderAdapter,
  ProviderEndpoints,
  SipTransport,
  SipUriOptions,
  VerifyResult,
} from './provider-adapter.js';

/** What a platform adapter declares; everything else is shared. */
export interface PlatformSpec {
  name: string;
  connectionModes: readonly ConnectionMode[];
  /** Public endpoints per region; the first key is not implied to be the default. */
  regions: Readonly<Record<string, ProviderEndpoints>>;
  defaultRegion: string;
  defaultSipTransport: SipTransport;
  /** The SIP target on `endpoints.sipHost`, or null when it cannot be built from these inputs. */
  sipUri(endpoints: ProviderEndpoints, options: Required<Pick<SipUriOptions, 'transport'>> & SipUriOptions): string | null;
  streamingUrl(endpoints: ProviderEndpoints, externalAgentId: string): string | null;
  /** The documented get-agent request, or null when the id cannot name an agent at all. */
  verifyRequest(endpoints: ProviderEndpoints, externalAgentId: string, apiKey: string): VerifyRequest | null;
  /** Vendor-specific reading of an answer before the common rules. */
  interpret?: AnswerInterpreter;
  agentName: (body: unknown) => string | undefined;
}

/** Dependencies of every adapter: the config overrides of its name and the HTTP settings. */
export interface AdapterOptions {
  overrides?: EndpointOverrides;
  http: HttpOptions;
}

const noInterpretation: AnswerInterpreter = () => undefined;

/** An adapter whose endpoints honour `options.overrides` in every region. */
export function createPlatformAdapter(spec: PlatformSpec, options: AdapterOptions): ProviderAdapter {
  const regionNames = Object.freeze(Object.keys(spec.regions));
  if (!regionNames.includes(spec.defaultRegion)) {
    throw new InvariantError(`${spec.name}: default region ${spec.defaultRegion} is not declared`);
  }
  const endpoints = (region: string): ProviderEndpoints => {
    if (!Object.hasOwn(spec.regions, region)) {
      throw new InvariantError(`${spec.name}: unknown region ${JSON.stringify(region)}`);
    }
    return applyOverrides(spec.regions[region] ?? {}, options.overrides);
  };
  return Object.freeze({
    name: spec.name,
    connectionModes: spec.connectionModes,
    regions: regionNames,
    defaultRegion: spec.defaultRegion,
    defaultSipTransport: spec.defaultSipTransport,
    endpoints,
    defaultSipUri(region: string, sipOptions: SipUriOptions): string | null {
      const transport = sipOptions.transport ?? spec.defaultSipTransport;
      return spec.sipUri(endpoints(region), { ...sipOptions, transport });
    },
    defaultStreamingUrl(region: string, externalAgentId: string): string | null {
      if (!spec.connectionModes.includes('media_bridge')) return null;
      return spec.streamingUrl(endpoints(region), externalAgentId);
    },
    async verify(input: { externalAgentId: string; apiKey: string; region: string }): Promise<VerifyResult> {
      // A key that cannot be sent unchanged cannot be the tenant's valid key.
      if (!fieldValueSendable(input.apiKey)) return { outcome: 'bad_credentials' };
      const request = spec.verifyRequest(endpoints(input.region), input.externalAgentId, input.apiKey);
      if (request === null) return { outcome: 'not_found' };
      return verifyOverHttp(options.http, request, spec.interpret ?? noInterpretation, spec.agentName);
    },
  });
}

/** Overrides replace the public value in every region; trailing slashes are dropped. */
function applyOverrides(base: ProviderEndpoints, overrides: EndpointOverrides | undefined): ProviderEndpoints {
  const merged: ProviderEndpoints = { ...base };
  if (overrides?.api_base_url !== undefined) merged.apiBaseUrl = overrides.api_base_url;
  if (overrides?.ws_base_url !== undefined) merged.wsBaseUrl = overrides.ws_base_url;
  if (overrides?.sip_host !== undefined) merged.sipHost = overrides.sip_host;
  if (merged.apiBaseUrl !== undefined) merged.apiBaseUrl = merged.apiBaseUrl.replace(/\/+$/, '');
  if (merged.wsBaseUrl !== undefined) merged.wsBaseUrl = merged.wsBaseUrl.replace(/\/+$/, '');
  return Object.freeze(merged);
}

/**
 * The id as one URL path segment, or null when it could not name an agent: empty, too long, or a
 * dot segment that URL parsing would resolve away (WHATWG URL, also in its %2E form), which would
 * send the key to another path of the platform.
 */
export function agentPathSegment(externalAgentId: string): string | null {
  if (externalAgentId.length === 0 || externalAgentId.length > 256) return null;
  if (/^(\.|%2e){1,2}$/i.test(externalAgentId)) return null;
  return encodeURIComponent(externalAgentId);
}
