/** @module Schemas of the agent inventory: import and update bodies, the Agent and Route objects. */
import { Type } from '@sinclair/typebox';
import { E164_PATTERN } from '../../../common/phone-number.js';
import { StringEnum } from '../../../common/schema.js';
import { component } from '../../openapi/openapi-document.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const SipUri = Type.String({ pattern: '^sips?:[^\\s<>"]+$', maxLength: 512, description: 'SIP URI of the platform edge, e.g. `sip:+15550100@sip.rtc.elevenlabs.io;transport=tcp`.' });
const WsUrl = Type.String({ pattern: '^wss?://[^\\s]+$', maxLength: 2048, description: '`ws://` or `wss://` address of the streaming endpoint (media_bridge).' });

/** docs/API.md "Transfers asked by the agent": numbers as `+` digits with an optional final `*`, SIP addresses as `sip:user@host` with `*` anywhere. */
export const TransferPolicy = Type.Object(
  {
    allow: Type.Array(Type.String({ pattern: '^(\\+[0-9]{0,15}\\*?|sips?:[^\\s<>"]{1,250})$', maxLength: 256 }), { maxItems: 50, description: 'Targets the agent may transfer to: `+1*`, `+442071234567`, `sip:*@pbx.example.com`.' }),
    max_per_call: Type.Integer({ minimum: 1, maximum: 10, description: 'Transfers the agent may ask for in one call.' }),
  },
  { additionalProperties: false, ...component('TransferPolicy') },
);

/** Settings a tenant may set on import and change with PUT. */
const settings = {
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  // Plain strings, not enums: an unknown mode gets its own code (unsupported_connection_mode).
  connection_mode: Type.Optional(Type.String({ maxLength: 40, description: '`sip_trunk` (default) or `media_bridge`.' })),
  region: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: "Provider region (ElevenLabs: default, us, eu, in, sg; Vapi: us, eu)." })),
  sip_credential_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  sip_uri: Type.Optional(SipUri),
  sip_transport: Type.Optional(StringEnum(['udp', 'tcp', 'tls'])),
  sip_region: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  websocket_url: Type.Optional(WsUrl),
  transfer_policy: Type.Optional(Type.Union([TransferPolicy, Type.Null()], { description: 'Transfers the agent may ask for (a REFER on its SIP leg); null or omitted: none.' })),
};

const ApiKey = Type.String({ minLength: 8, maxLength: 512, description: 'Provider API key: verified live when given, stored encrypted, never returned.' });

/** `a, b or c.` */
const oneOf = (names: readonly string[]): string => (names.length < 2 ? `${names.join('')}.` : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}.`);

/**
 * The import body; `providers` are the provider registry's names (a plain string, not an enum: an
 * unknown provider gets its own code, `unsupported_provider`).
 */
export const importAgentBody = (providers: readonly string[]) => Type.Object(
  {
    provider: Type.String({ minLength: 1, maxLength: 40, description: oneOf(providers) }),
    external_agent_id: Type.String({ minLength: 1, maxLength: 200 }),
    ...settings,
    api_key: Type.Optional(ApiKey),
    did_number: Type.Optional(Type.String({ pattern: E164_PATTERN, description: 'E.164 number to route to this agent (the tenant must hold it).' })),
  },
  { additionalProperties: false },
);

export const UpdateAgentBody = Type.Object(
  {
    ...settings,
    api_key: Type.Optional(Type.Union([ApiKey, Type.Null()], { description: 'Omitted keeps the stored key, null clears it, a value replaces it (verified live).' })),
    // Present only to answer `immutable_field` rather than "unknown field" when a tenant tries.
    provider: Type.Optional(Type.String({ description: 'Immutable: must equal the stored value if sent.' })),
    external_agent_id: Type.Optional(Type.String({ description: 'Immutable: must equal the stored value if sent.' })),
    did_number: Type.Optional(Type.String({ description: 'Immutable here: manage routes through import, /v1/routes and number release.' })),
  },
  { additionalProperties: false },
);

export const AgentSchema = Type.Object(
  {
    id: Type.String(), provider: Type.String(), external_agent_id: Type.String(), name: Nullable(Type.String()),
    connection_mode: StringEnum(['sip_trunk', 'media_bridge']), region: Type.String(),
    sip_credential_id: Nullable(Type.String()), sip_uri: Nullable(Type.String()),
    sip_transport: Type.Union([StringEnum(['udp', 'tcp', 'tls']), Type.Null()]), sip_region: Nullable(Type.String()),
    websocket_url: Nullable(Type.String()),
    transfer_policy: Type.Union([TransferPolicy, Type.Null()]),
    api_key_set: Type.Boolean(), api_key_last4: Nullable(Type.String()),
    verified_at: Nullable(Type.String({ format: 'date-time', description: 'When the platform last confirmed the agent (null: not verified).' })),
    created_at: Type.String({ format: 'date-time' }), updated_at: Type.String({ format: 'date-time' }),
  },
  component('Agent'),
);

export const RouteSchema = Type.Object(
  {
    id: Type.String(), did_number: Type.String(), agent_provider: Type.Literal('external_bridge'),
    agent_id: Type.String(), carrier: Type.String(), created_at: Type.String({ format: 'date-time' }),
  },
  component('Route'),
);

export const ImportAgentResponse = Type.Object({ ...AgentSchema.properties, route: Type.Union([RouteSchema, Type.Null()]) });

export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
