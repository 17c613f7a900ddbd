/** @module Schemas of calls (docs/API.md "Calls"): the Call object, its detail, and the list query. */
import { Type } from '@sinclair/typebox';
import { E164_PATTERN } from '../../../common/phone-number.js';
import { StringEnum } from '../../../common/schema.js';
import type { CallListItem } from '../../../storage/index.js';
import { callView } from '../../../engine/calls/call-record.js';
import { component } from '../../openapi/openapi-document.js';
import { PageQuery } from '../../pagination.js';
import { HistoryQuery } from './call-history.js';
import { CallSessionSchema } from './call-session.schemas.js';
import { CallQualitySchema } from './call-quality.schemas.js';

const Time = Type.String({ format: 'date-time' });
const NullableTime = Type.Union([Time, Type.Null()]);

export const CallSchema = Type.Object(
  {
    id: Type.String({ examples: ['call_0mwrf…'] }),
    call_control_id: Type.String({ description: 'Opaque token naming the call for transfer; never equal to the id.' }),
    direction: StringEnum(['inbound', 'outbound']),
    state: StringEnum(['initiated', 'ringing', 'active', 'ended'], {
      description: '`ended` only once the CDR, the recording and the transcripts are final (written with it): the first read showing `ended` shows them too.',
    }),
    on_hold: Type.Boolean({ description: 'Hold is a flag of an active call, not a state.' }),
    from: Type.String(), to: Type.String(), carrier: Type.String(), record: Type.Boolean(),
    caller_privacy: Type.Boolean({ description: 'Inbound: the caller asked that its identity not be shown (SIP Privacy, or an anonymous From); `from` may still hold the number its carrier asserted. Do not show it to third parties.' }),
    caller_verification: Type.Union([
      Type.Object({
        verstat: Type.Union([Type.String(), Type.Null()], { description: 'The `verstat` the carrier put in P-Asserted-Identity or From (`TN-Validation-Passed`, `TN-Validation-Failed`, `No-TN-Validation`), as sent; null when none.' }),
        identity_header: Type.Boolean({ description: 'The INVITE carried an RFC 8224 Identity header (a signed PASSporT).' }),
      }),
      Type.Null(),
    ], { description: 'Inbound: STIR/SHAKEN as the carrier reported it (docs/API.md "Caller verification"); null on outbound calls.' }),
    amd: Type.Union([
      Type.Object({
        result: StringEnum(['human', 'machine', 'fax', 'unknown']),
        decided_after_ms: Type.Integer({ description: 'From the answer to the decision.' }),
        beep_at_ms: Type.Union([Type.Integer(), Type.Null()], { description: 'When the greeting\'s beep was heard, from the answer; null when none was.' }),
      }),
      Type.Null(),
    ], { description: 'Answering-machine detection (docs/API.md "Answering-machine detection"); null until decided or when not asked for.' }),
    agent: Type.Union([
      Type.Object({ type: Type.Literal('websocket'), url: Type.String() }),
      Type.Object({ type: Type.Literal('imported'), agent_id: Type.String() }),
    ]),
    created_at: Time, answered_at: NullableTime, ended_at: NullableTime,
    end_reason: Type.Union([Type.String(), Type.Null()]), sip_status: Type.Union([Type.Integer(), Type.Null()]),
    transfer: Type.Union([Type.Object({ to: Type.String(), state: StringEnum(['dialing', 'connected', 'failed']), started_at: Time }), Type.Null()]),
  },
  component('Call'),
);

export const CdrSchema = Type.Object(
  {
    started_at: Time, answered_at: NullableTime, ended_at: Time,
    duration_s: Type.Number({ description: 'From creation to end, in seconds (millisecond precision).' }),
    billable_s: Type.Integer({ description: 'From answer to end, rounded up to whole seconds; 0 if never answered.' }),
    end_reason: Type.String(), sip_status: Type.Union([Type.Integer(), Type.Null()]),
    hangup_by: Type.Union([StringEnum(['caller', 'callee', 'agent', 'api', 'gateway']), Type.Null()]),
    quality: CallQualitySchema,
  },
  component('CallDetailRecord'),
);

export const CallDetailSchema = Type.Object({
  ...CallSchema.properties,
  sip_headers: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
    description: 'Inbound: the carrier\'s INVITE headers its `carry_headers` setting let through, by name as received, repeated ones joined with `, ` (docs/API.md "SIP headers carried through"); null when none, and on outbound calls.',
  }),
  session: Type.Union([CallSessionSchema, Type.Null()], { description: 'Live media state (docs/API.md, "The session of a live call"); null once ended, or when the call is live on no engine in this process.' }),
  cdr: Type.Union([CdrSchema, Type.Null()], { description: 'Null while the call is live.' }),
  transcript: Type.Object({ available: Type.Boolean(), source: Type.Union([StringEnum(['provider', 'gateway']), Type.Null()]) }),
  recording: Type.Object({
    available: Type.Boolean({ description: "Whether GET /v1/calls/{id}/recording serves a file. A recorded call's recording is complete and available in the first read that shows `ended`." }),
  }),
});

export const ListCallsQuery = Type.Object(
  {
    state: Type.Optional(StringEnum(['initiated', 'ringing', 'active', 'ended'], { description: 'Without it: every live (not ended) call. `ended`: calls ended within the live window.' })),
    direction: Type.Optional(StringEnum(['inbound', 'outbound'])),
    ...HistoryQuery,
    ...PageQuery,
  },
  { additionalProperties: false },
);

const E164 = (description: string) => Type.String({ pattern: E164_PATTERN, description: `${description}, E.164.`, examples: ['+15550100'] });

export const PlaceCallBody = Type.Object(
  {
    from: E164('Calling number'),
    to: E164('Called number'),
    carrier: Type.String({ minLength: 1, maxLength: 64, description: 'A configured carrier name; `sandbox` for sandbox keys (and only for them).' }),
    agent_ws_url: Type.Optional(Type.String({
      pattern: '^wss?://[^\\s]+$', maxLength: 2048,
      description: '`ws://` or `wss://` address of the agent. Hosts that are or resolve to loopback, private, link-local, CGNAT, multicast or unspecified addresses are refused unless the gateway allows private agent URLs. Exactly one of `agent_ws_url` and `agent_id`.',
    })),
    agent_id: Type.Optional(Type.String({
      minLength: 1, maxLength: 100,
      description: 'An agent the tenant imported (POST /v1/agents/import), connected in its connection mode: a media_bridge agent through its platform\'s streaming session, a sip_trunk agent by a second SIP leg to its edge once the callee answers. Exactly one of `agent_ws_url` and `agent_id`; another tenant\'s agent is 404.',
    })),
    record: Type.Optional(Type.Boolean({ default: false, description: 'Record the call (default false).' })),
    machine_detection: Type.Optional(StringEnum(['off', 'async', 'hold_until_result'], {
      default: 'off', description: '`async`: the agent is connected at the answer and the answering-machine detection result follows (`amd` on the call, an `amd` event to the agent). `hold_until_result`: the agent is connected only once a person answers; a machine follows `on_machine`. docs/API.md "Answering-machine detection".',
    })),
    on_machine: Type.Optional(StringEnum(['hangup', 'connect'], {
      description: 'With `machine_detection: hold_until_result` only: a machine (or fax) is hung up (`hangup`, the default) or connected to the agent (`connect`).',
    })),
    wait_for_beep: Type.Optional(Type.Boolean({
      description: 'With `machine_detection: hold_until_result` and `on_machine: connect` only: a machine is connected after its beep or the end of its greeting (default false).',
    })),
    sip_headers: Type.Optional(Type.Record(Type.String(), Type.String(), {
      maxProperties: 16,
      description: 'Headers for the carrier\'s INVITE: `X-` names only, at most 16, values of printable ASCII up to 256 characters, 2048 bytes in all. Any other name, a CR, LF or other control character, or an oversized value is 400 `sip_header_not_allowed` (docs/API.md "SIP headers carried through").',
      examples: [{ 'X-Campaign': 'spring-42' }],
    })),
    custom_parameters: Type.Optional(Type.Record(Type.String(), Type.String(), {
      maxProperties: 32,
      description: 'Strings given to a WebSocket agent in `start.customParameters` beside the gateway\'s own keys (which they may not use): at most 32, keys of letters, digits, `_ . -` up to 64, values up to 512 characters, 4096 bytes in all; 400 `custom_parameter_not_allowed` otherwise.',
      examples: [{ customer_tier: 'gold' }],
    })),
  },
  { additionalProperties: false },
);

export const TransferBody = Type.Object(
  {
    call_control_id: Type.String({ minLength: 1, maxLength: 128, description: 'The `call_control_id` of an active call of the tenant.' }),
    to: E164('Transfer target'),
  },
  { additionalProperties: false },
);

/** docs/API.md "Digits toward the callee": keys 0-9, *, #, A-D and `w` (a 500 ms pause), 1 to 64 of them. */
export const DtmfBody = Type.Object(
  {
    digits: Type.String({ pattern: '^[0-9A-Da-d*#wW]{1,64}$', description: 'Keys 0-9, `*`, `#`, A-D, and `w` for a 500 ms pause; 1 to 64 characters.', examples: ['1w2#'] }),
  },
  { additionalProperties: false },
);

/** Commands that take no input: an empty body, or `{}`, and nothing else. */
export const NoBody = Type.Object({}, { additionalProperties: false, description: 'No body is needed; an empty body or `{}` is accepted.' });

/** The Call of the API (call-record.ts `callView`, shared with the events' `data.call`). */
export const presentCall = (c: CallListItem) => callView(c);
