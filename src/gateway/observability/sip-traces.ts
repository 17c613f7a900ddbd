/**
 * @module The SIP trace store of the engine (docs/API.md "SIP trace of a call"): the recorder the
 * transport layer and the calls feed, traces of ended calls written to the database, deleted
 * after `observability.sip_trace.retention_days`, and one reader over both for the API.
 */
import type { Clock, TimerHandle } from '../../common/clock.js';
import type { TenantId } from '../../common/ids.js';
import type { Logger } from '../../common/logger.js';
import { isoNow, isoTime } from '../../common/time.js';
import type { Config } from '../../config/schema.js';
import type { SipTraceRecord, Store } from '../../storage/index.js';
import type { CallMetrics } from '../call-metrics.js';
import { SipTraceRecorder } from './sip-trace-recorder.js';

const RETENTION_CHECK_MS = 3_600_000;

export interface SipTraces {
  recorder: SipTraceRecorder;
  /** A call's trace: from memory while the call is live or just ended, else from the database. */
  read(tenantId: TenantId, callId: string): Promise<SipTraceRecord | undefined>;
  /** Writes the traces of ended calls still in memory and stops the retention timer. */
  stop(): void;
}

export function startSipTraces(o: { config: Readonly<Config>; clock: Clock; logger: Logger; store: Store; metrics: CallMetrics }): SipTraces | null {
  const settings = o.config.observability.sip_trace;
  if (!settings.enabled) return null;
  const logger = o.logger.child({ component: 'sip-trace' });
  const recorder = new SipTraceRecorder({
    clock: o.clock, logger, maxBytesPerCall: settings.max_bytes_per_call,
    save: (tenantId, callId, trace) => o.store.sipTraces.save(tenantId, callId, isoNow(o.clock), trace),
    onFailure: (what) => o.metrics.sipTraceFailed(what),
  });
  const retentionMs = settings.retention_days * 86_400_000;
  const expire = async (): Promise<void> => {
    try {
      const deleted = await o.store.sipTraces.expire(isoTime(o.clock.now() - retentionMs));
      if (deleted > 0) logger.info({ deleted }, 'SIP traces past their retention deleted');
    } catch (err) {
      logger.warn({ err }, 'SIP traces past their retention could not be deleted');
    }
  };
  void expire();
  let timer: TimerHandle | null = null;
  const arm = (): void => {
    timer = o.clock.setTimeout(() => { void expire(); arm(); }, Math.min(RETENTION_CHECK_MS, retentionMs));
  };
  arm();
  return {
    recorder,
    read: async (tenantId, callId) => recorder.read(tenantId, callId) ?? o.store.sipTraces.get(tenantId, callId),
    stop: () => {
      timer?.cancel();
      recorder.flush();
    },
  };
}
