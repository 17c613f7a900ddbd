/**
 * @module The history filters of `GET /v1/calls?state=ended` (docs/API.md "Call history"): number,
 * ended_after/ended_before, end_reason and carrier, read by the database, never by the client.
 */
import { Type } from '@sinclair/typebox';
import { E164_PATTERN } from '../../../common/phone-number.js';
import { StringEnum } from '../../../common/schema.js';
import { isoTime } from '../../../common/time.js';
import { END_REASONS } from '../../../engine/calls/ending/end-reason.js';
import type { CallListFilter } from '../../../storage/index.js';
import { problems } from '../../problem.js';

const Time = (description: string) => Type.String({ format: 'date-time', description });

/** Query parameters of the history; each one only with `state=ended`. */
export const HistoryQuery = {
  number: Type.Optional(Type.String({ pattern: E164_PATTERN, description: 'With `state=ended`: calls from or to this number, E.164.', examples: ['+15550100'] })),
  ended_after: Type.Optional(Time('With `state=ended`: calls that ended at or after this time (default: the start of the live window).')),
  ended_before: Type.Optional(Time('With `state=ended`: calls that ended before this time.')),
  end_reason: Type.Optional(StringEnum([...END_REASONS], { description: 'With `state=ended`: calls that ended for this reason.' })),
  carrier: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'With `state=ended`: calls on this carrier (within the key\'s scope).' })),
};

export interface HistoryParams {
  state?: string | undefined;
  number?: string | undefined;
  ended_after?: string | undefined;
  ended_before?: string | undefined;
  end_reason?: string | undefined;
  carrier?: string | undefined;
}

const NAMES = ['number', 'ended_after', 'ended_before', 'end_reason', 'carrier'] as const;

/**
 * The storage filter of a history query. The times are compared as the database stores them (UTC
 * with milliseconds), so an offset like `+02:00` is normalised first. A filter without
 * `state=ended`, or an empty range, is a 400.
 */
export function historyFilter(query: HistoryParams, liveWindowStart: number): Pick<CallListFilter, 'endedSince' | 'endedBefore' | 'number' | 'endReason' | 'carrierName'> {
  if (query.state !== 'ended') {
    const given = NAMES.filter((name) => query[name] !== undefined);
    if (given.length > 0) throw problems.validation(given.map((name) => ({ path: `/query/${name}`, message: 'is a history filter: only with state=ended' })));
    return {};
  }
  const after = query.ended_after !== undefined ? Date.parse(query.ended_after) : liveWindowStart;
  const before = query.ended_before !== undefined ? Date.parse(query.ended_before) : undefined;
  if (before !== undefined && before <= after) {
    throw problems.validation([{ path: '/query/ended_before', message: 'must be later than ended_after' }]);
  }
  return {
    endedSince: isoTime(after),
    ...(before !== undefined ? { endedBefore: isoTime(before) } : {}),
    ...(query.number !== undefined ? { number: query.number } : {}),
    ...(query.end_reason !== undefined ? { endReason: query.end_reason } : {}),
    ...(query.carrier !== undefined ? { carrierName: query.carrier } : {}),
  };
}
