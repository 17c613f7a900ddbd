/**
 * @module The wire form of CallControl between an API process and an engine
 * (docs/ARCHITECTURE.md "Process roles"): `POST /internal/v1/{command}` with the arguments as a
 * JSON object, answered `200 {"result": …}` with the command's own outcome (a failure such as
 * `not_found` is a result, not an HTTP error). The bearer token is `cluster.secret`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Type, type Static } from '@sinclair/typebox';

const Ids = { tenantId: Type.String({ minLength: 1, maxLength: 100 }) };
const CallRef = Type.Object({ ...Ids, callId: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

/** Each command's arguments; the API side sends exactly these. */
export const COMMAND_ARGS = {
  place: Type.Object({
    ...Ids, from: Type.String(), to: Type.String(), carrier: Type.String(), agentUrl: Type.Optional(Type.String()), record: Type.Boolean(),
    agentId: Type.Optional(Type.String({ maxLength: 100 })), agentMode: Type.Optional(Type.Union([Type.Literal('sip_trunk'), Type.Literal('media_bridge')])),
    machineDetection: Type.Optional(Type.Union([Type.Literal('off'), Type.Literal('async'), Type.Literal('hold_until_result')])),
    onMachine: Type.Optional(Type.Union([Type.Literal('hangup'), Type.Literal('connect')])),
    waitForBeep: Type.Optional(Type.Boolean()),
    sipHeaders: Type.Optional(Type.Record(Type.String(), Type.String())),
    customParameters: Type.Optional(Type.Record(Type.String(), Type.String())),
  }, { additionalProperties: false }),
  hold: CallRef,
  unhold: CallRef,
  hangup: CallRef,
  transfer: Type.Object({ ...Ids, callControlId: Type.String({ minLength: 1, maxLength: 200 }), to: Type.String() }, { additionalProperties: false }),
  sendDigits: Type.Object({ ...CallRef.properties, digits: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
  sessionOf: CallRef,
  carrierNames: Type.Object({}, { additionalProperties: false }),
} as const;

export type CommandName = keyof typeof COMMAND_ARGS;
export type CommandArgs<C extends CommandName> = Static<(typeof COMMAND_ARGS)[C]>;

export const isCommandName = (name: string): name is CommandName => Object.hasOwn(COMMAND_ARGS, name);

/** The path prefix of the commands. */
export const INTERNAL_PREFIX = '/internal/v1/';

/** Largest command body: a place request is a few hundred bytes. */
export const INTERNAL_BODY_LIMIT = 64 * 1024;

/**
 * Whether an `Authorization` header carries the shared secret. Both sides are hashed first, so
 * the comparison takes the same time whatever the header's length or content (a timing side
 * channel would let a caller find the secret byte by byte).
 */
export function bearerMatches(header: string | undefined, secret: string): boolean {
  const token = header?.startsWith('Bearer ') ? header.slice(7) : '';
  const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(token), digest(secret)) && token.length > 0;
}
