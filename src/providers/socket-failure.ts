/**
 * @module How a failed connection to an agent platform is classified (`rejected`, `unreachable`,
 * `protocol`) from an HTTP status or a socket error, and how an error is described without its
 * stack or URL (which may hold a token). Apart from socket-agent-session.ts: one rule, used by
 * both its HTTP steps and its WebSocket.
 */
import type { ProviderErrorKind } from './agent-session.js';

/** Node socket errors that mean nobody answered. */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);

/** 4xx (except 408 and 429) is the platform saying no; the rest is the platform not answering. */
export function statusKind(status: number): ProviderErrorKind {
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'rejected';
  if (status >= 500 || status === 408 || status === 429) return 'unreachable';
  return 'protocol';
}

/** A socket error: nobody answering (refused, unresolved, timed out, reset) or something else. */
export function errorKind(error: Error): ProviderErrorKind {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== undefined && UNREACHABLE_CODES.has(code)) return 'unreachable';
  // ws reports its own handshake time-out without a code.
  return error.message.includes('handshake') ? 'unreachable' : 'protocol';
}

/** An error's code or message, without stack or URL. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  const code = (error as NodeJS.ErrnoException).code ?? (error.cause instanceof Error ? (error.cause as NodeJS.ErrnoException).code : undefined);
  return code ?? error.name;
}
