/**
 * @module The carriers file (docs/CONFIGURATION.md "Operator surface"): the SIP trunks the gateway speaks to, validated
 * at start with errors that name the carrier and the key. The `sandbox` carrier is built in.
 */
import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { parse as parseYaml } from 'yaml';
import { isAddressOrCidr } from '../common/address-policy.js';
import { compileValidator, StringEnum } from '../common/schema.js';
import { ConfigError } from './load-config.js';

export const SANDBOX_CARRIER = 'sandbox';

const strict = { additionalProperties: false } as const;
const Credentials = Type.Object({ username: Type.String({ minLength: 1 }), password: Type.String({ minLength: 1 }), realm: Type.Optional(Type.String()) }, strict);

const CarrierSchema = Type.Object(
  {
    name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,62}$' }),
    outbound: Type.Optional(Type.Object(
      {
        /** Where INVITEs go: a SIP URI; a host without a port is located with RFC 3263 (NAPTR/SRV). */
        uri: Type.String({ pattern: '^sips?:' }),
        auth: Type.Optional(Credentials),
        /** How the From user part is written: `+15550100`, `15550100`, or national digits. */
        from_format: StringEnum(['e164', 'e164_no_plus', 'national'], { default: 'e164' }),
        /** Country code stripped from E.164 numbers to write them national (for `national`). */
        country_code: Type.Optional(Type.String({ pattern: '^[1-9][0-9]{0,2}$' })),
        /** REGISTER to the carrier (for trunks that require registration), refreshed before expiry. */
        register: Type.Optional(Type.Object({ expires_s: Type.Integer({ minimum: 60, default: 3600 }) }, strict)),
      },
      strict,
    )),
    inbound: Type.Optional(Type.Object(
      {
        /** Addresses or CIDRs allowed to send INVITEs. */
        sources: Type.Array(Type.String(), { minItems: 1 }),
        /** Challenge inbound INVITEs with digest (RFC 3261 22.4) using these credentials. */
        auth: Type.Optional(Credentials),
        /** Where the dialled number is read from. */
        did_from: StringEnum(['request_uri', 'to'], { default: 'request_uri' }),
      },
      strict,
    )),
    codecs: Type.Array(StringEnum(['PCMU', 'PCMA', 'G722', 'telephone-event']), { default: ['PCMU', 'PCMA', 'telephone-event'], minItems: 1 }),
    max_concurrent_calls: Type.Integer({ minimum: 1, default: 1000 }),
    transfer: StringEnum(['bridge', 'refer'], { default: 'bridge' }),
    /**
     * SRTP with SDES keys (RFC 3711, RFC 4568): `disabled` plain RTP only; `allowed` answers SRTP
     * offers with SRTP and offers plain RTP; `required` offers and accepts SRTP only.
     */
    media_encryption: StringEnum(['disabled', 'allowed', 'required'], { default: 'disabled' }),
    /**
     * Addresses or CIDRs the carrier sends media from. A leg latched to one of its media servers
     * may learn another there (docs/SECURITY.md "Media sources"); absent: only the hosts its SDP names.
     */
    media_networks: Type.Optional(Type.Array(Type.String())),
    /**
     * Which `from` a tenant may present on outbound calls (docs/API.md "Caller IDs"): `owned` a
     * number it holds on this carrier or a verified caller ID, `verified` a verified caller ID
     * only, `any` whatever it asks.
     */
    caller_id_policy: StringEnum(['owned', 'verified', 'any'], { default: 'owned' }),
    /**
     * How digits toward the remote party go (docs/API.md "Digits toward the callee"): `auto` RFC
     * 4733 events when telephone-event was negotiated, else in-band tones; `info` SIP INFO.
     */
    dtmf: StringEnum(['auto', 'info'], { default: 'auto' }),
    /** OPTIONS keep-alive to the outbound target, in seconds (0 = off). */
    options_ping_s: Type.Integer({ minimum: 0, default: 30 }),
    calls: Type.Object(
      {
        /**
         * Believe this carrier's P-Asserted-Identity (RFC 3325 §5: the carrier is in the gateway's
         * trust domain): an anonymous caller's record shows the asserted number.
         */
        trust_asserted_identity: Type.Boolean({ default: false }),
        /**
         * The INVITE headers carried through to the agent (docs/API.md "SIP headers carried
         * through"): names, or a prefix ending in `*`, case-insensitive; `[]` carries none.
         */
        carry_headers: Type.Array(Type.String({ pattern: '^[A-Za-z0-9!%\'+._~-]+\\*?$', maxLength: 64 }), {
          default: ['X-*', 'P-Asserted-Identity', 'Diversion', 'User-to-User', 'Privacy'], maxItems: 64,
        }),
      },
      { ...strict, default: {} },
    ),
  },
  strict,
);

const CarriersFileSchema = Type.Object({ carriers: Type.Array(CarrierSchema) }, strict);

export type CarrierConfig = Static<typeof CarrierSchema>;

export { isAddressOrCidr };

const validate = compileValidator(CarriersFileSchema, { useDefaults: true });

/** Parses and checks the carriers file text; `where` names it in errors. */
export function parseCarriers(text: string, where: string): CarrierConfig[] {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`carriers: ${where} is not valid YAML: ${(err as Error).message}`);
  }
  const result = validate(raw ?? { carriers: [] });
  const carriersOf = (raw as { carriers?: { name?: unknown }[] } | null)?.carriers;
  if (!result.ok) {
    throw new ConfigError(`carriers: ${result.issues.map((i) => {
      const index = /^\/carriers\/(\d+)/.exec(i.path)?.[1];
      const name = index !== undefined ? carriersOf?.[Number(index)]?.name : undefined;
      const key = i.path.slice(1).replaceAll('/', '.');
      return `${typeof name === 'string' ? `carrier "${name}": ` : ''}${key} ${i.message}`;
    }).join('; ')} (in ${where})`);
  }
  const seen = new Set<string>();
  for (const carrier of result.value.carriers) {
    if (carrier.name === SANDBOX_CARRIER) throw new ConfigError(`carriers: "${SANDBOX_CARRIER}" is built in and cannot be configured (in ${where})`);
    if (seen.has(carrier.name)) throw new ConfigError(`carriers: "${carrier.name}" appears twice (in ${where})`);
    seen.add(carrier.name);
    for (const source of carrier.inbound?.sources ?? []) {
      if (!isAddressOrCidr(source)) throw new ConfigError(`carriers: carrier "${carrier.name}": inbound.sources has "${source}", which is not an IP address or CIDR (in ${where})`);
    }
    for (const network of carrier.media_networks ?? []) {
      if (!isAddressOrCidr(network)) throw new ConfigError(`carriers: carrier "${carrier.name}": media_networks has "${network}", which is not an IP address or CIDR (in ${where})`);
    }
    if (carrier.outbound?.from_format === 'national' && !carrier.outbound.country_code) {
      throw new ConfigError(`carriers: carrier "${carrier.name}": outbound.country_code is required with from_format national (in ${where})`);
    }
  }
  return result.value.carriers;
}

/** Whether a carrier URI asks for SIP over TLS: a `sips:` URI or `transport=tls` (RFC 3261 26.2). */
export function usesTls(uri: string): boolean {
  return /^sips:|;transport=tls\b/i.test(uri);
}

/**
 * Why a carrier's SRTP keys could be read on the wire, or null. SDES puts the master keys in the
 * SDP, so RFC 4568 §8.3 requires the signalling to be secured (TLS): outbound INVITEs need a
 * `sips:` or `transport=tls` URI, inbound ones a TLS listener the carrier can use.
 */
export function sdesExposure(carrier: CarrierConfig, tlsListening: boolean): string | null {
  if (carrier.media_encryption === 'disabled') return null;
  const uri = carrier.outbound?.uri;
  if (uri !== undefined && !usesTls(uri)) return 'outbound.uri is not sips: or transport=tls';
  if (carrier.inbound !== undefined && !tlsListening) return 'inbound INVITEs can only come over UDP or TCP (no sip.tls listener)';
  return null;
}

/** Reads the carriers file; no file means no carriers besides the sandbox. */
export function loadCarriers(file: string | undefined): CarrierConfig[] {
  if (!file) return [];
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`carriers: cannot read ${file}: ${(err as Error).message}`);
  }
  return parseCarriers(text, file);
}
