/** @module BYE whose failure is never silent: one log line, with the call's id, per BYE that fails. */
import type { Logger } from '../../../common/logger.js';
import type { SessionDialog } from '../../sip/index.js';

/**
 * Ends `dialog` with BYE (RFC 3261 §15.1.1) and never rejects: a BYE that cannot be sent, or
 * whose final response is not 2xx (a local 408 when nothing answers), logs exactly one warning
 * through `log`, which carries the call's id (docs/RELIABILITY.md "Ending a call"). `why` says
 * which path ends the session. An ended dialog sends nothing.
 */
export async function sendBye(dialog: Pick<SessionDialog, 'bye' | 'isEnded'>, log: Logger, why: string): Promise<void> {
  if (dialog.isEnded) return;
  let status: number;
  try {
    status = await dialog.bye();
  } catch (err) {
    log.warn({ err, why }, 'BYE could not be sent');
    return;
  }
  if (status >= 300) log.warn({ status, why }, 'BYE was not accepted');
}
