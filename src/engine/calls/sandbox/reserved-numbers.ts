/** @module The sandbox carrier's reserved numbers: dialled numbers that reproduce one failure each. */
import { uriUser } from '../setup/dialled-number.js';


/** What the sandbox far end does with a call, decided by the dialled number. */
export type SandboxBehaviour =
  /** 180 Ringing, then 200 OK after the ring time: announcement, then echo. */
  | { kind: 'answer' }
  /** A final failure at once, without ringing. */
  | { kind: 'reject'; status: number }
  /** 180 Ringing, then a final failure after the ring time. */
  | { kind: 'ring-then-reject'; status: number }
  /** 180 Ringing until the caller gives up (CANCEL), for ring time-outs. */
  | { kind: 'ring-forever' };

/**
 * Reserved numbers, E.164 without the '+'. The 1-500-555-0xxx block is fictional in the North
 * American plan, so no real subscriber can be reached through these even by mistake.
 */
export const RESERVED_NUMBERS: Readonly<Record<string, SandboxBehaviour>> = {
  '15005550486': { kind: 'reject', status: 486 },
  '15005550404': { kind: 'reject', status: 404 },
  '15005550503': { kind: 'reject', status: 503 },
  '15005550603': { kind: 'reject', status: 603 },
  '15005550480': { kind: 'ring-then-reject', status: 480 },
  '15005550408': { kind: 'ring-forever' },
};

const ANSWER: SandboxBehaviour = { kind: 'answer' };

/**
 * The dialled number as E.164 digits: '+' and the visual separators of RFC 3966 §5.1.1
 * ('-', '.', '(', ')') removed, so `+1 500-555-0486` and `15005550486` are the same number.
 */
export function normalizeNumber(user: string): string {
  return user.replace(/[\s+\-.()]/g, '');
}

/** The behaviour for a call to `requestUri` (falling back to the To URI when it names no user). */
export function behaviourFor(requestUri: string, toUri = ''): SandboxBehaviour {
  const user = uriUser(requestUri) || uriUser(toUri);
  return RESERVED_NUMBERS[normalizeNumber(user)] ?? ANSWER;
}
