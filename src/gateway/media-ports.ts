/**
 * @module The media step of the engine's start: the media I/O backend (JS sockets or the native
 * relay), the RTP port pool, the address RTP binds to and the one our SDP advertises.
 */
import { networkInterfaces } from 'node:os';
import type { Logger } from '../common/logger.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load-config.js';
import { PortPool, relayThreadPriorityOutcome, useMediaIo } from '../engine/media/index.js';

export interface MediaPorts {
  ports: PortPool;
  /** Local address RTP sockets bind to. */
  bindAddress: string;
  /** Address advertised in SDP (c=) and in our From URIs. */
  advertised: string;
  /** For the start's log line: the I/O backend and whether the relay thread got its priority. */
  mediaIo: NonNullable<ReturnType<typeof useMediaIo>>;
  priorityGranted: boolean;
}

export const isUnspecified = (address: string): boolean => address === '0.0.0.0' || address === '::';

/** The address we advertise when bound to every interface: the first external IPv4 one. */
function firstExternalIpv4(): string {
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((i) => i.family === 'IPv4' && !i.internal);
    if (found) return found.address;
  }
  return '127.0.0.1';
}

export function openMediaPorts(config: Readonly<Config>, logger: Logger): MediaPorts {
  const mediaIo = useMediaIo(config.rtp.socket_io, { relayThread: config.rtp.relay_thread, relayThreadPriority: config.rtp.relay_thread_priority });
  if (mediaIo === null) throw new ConfigError('config: rtp.socket_io is native, but the media I/O addon is not built (npm run build:native)');
  const priorityOutcome = relayThreadPriorityOutcome();
  if (priorityOutcome !== null && priorityOutcome !== 'granted') {
    // Not fatal: the relay works time-sharing, only its tail latency is worse on a busy host.
    logger.warn({ relay_thread_priority: config.rtp.relay_thread_priority, error: priorityOutcome }, 'rtp.relay_thread_priority refused by the kernel; the relay thread runs time-sharing (grant CAP_SYS_NICE or LimitRTPRIO)');
  }
  return {
    ports: new PortPool({ min: config.rtp.port_min, max: config.rtp.port_max }),
    bindAddress: config.rtp.bind_address ?? config.sip.host,
    advertised: config.sip.public_ip ?? (isUnspecified(config.sip.host) ? firstExternalIpv4() : config.sip.host),
    mediaIo, priorityGranted: priorityOutcome === 'granted',
  };
}
