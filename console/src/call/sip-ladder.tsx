/**
 * @module The SIP ladder of a call from `GET /v1/calls/{id}/sip-trace` (docs/CONSOLE.md "Call
 * detail"): the gateway and each leg's far end as columns, one arrow per message in order; an
 * arrow is a button (click, Enter or Space) that shows the whole message.
 */
import { useState } from 'preact/hooks';
import type { SipTrace, SipTraceMessage } from '../types.js';

const COLUMN = 190;
const ROW = 30;
const TOP = 44;
const LEG_TITLES: Record<string, string> = { carrier: 'Carrier', agent: 'Agent edge', transfer_target: 'Transfer target' };

/** Column order: the carrier left of the gateway, the agent and a transfer target to its right. */
export function ladderColumns(trace: SipTrace): string[] {
  const legs = new Set(trace.messages.map((m) => m.leg).concat(trace.legs.map((l) => l.leg)));
  return [...(legs.has('carrier') ? ['carrier'] : []), 'gateway', ...(['agent', 'transfer_target'] as const).filter((leg) => legs.has(leg))];
}

export function SipLadder({ trace }: { trace: SipTrace }) {
  const [selected, setSelected] = useState<number | null>(null);
  const columns = ladderColumns(trace);
  const x = (column: string): number => COLUMN / 2 + columns.indexOf(column) * COLUMN;
  const width = columns.length * COLUMN;
  const height = TOP + trace.messages.length * ROW + 10;
  const select = (index: number): void => setSelected(index === selected ? null : index);
  const message: SipTraceMessage | undefined = selected === null ? undefined : trace.messages[selected];
  return (
    <div class="ladder">
      {trace.dropped_messages > 0 && <p>{trace.dropped_messages} older messages were left out of this trace.</p>}
      <div class="ladder-scroll">
        <svg role="group" aria-label={`SIP ladder, ${trace.messages.length} messages`} width={width} height={height} viewBox={`0 0 ${width} ${height}`}>
          {columns.map((column) => (
            <g key={column} class="column">
              <text x={x(column)} y={18} text-anchor="middle">{column === 'gateway' ? 'Gateway' : LEG_TITLES[column]}</text>
              <line x1={x(column)} y1={26} x2={x(column)} y2={height} />
            </g>
          ))}
          {trace.messages.map((m, index) => {
            const gateway = x('gateway');
            const far = x(m.leg);
            // Received: from the leg's far end to the gateway; sent: the other way.
            const [from, to] = m.direction === 'received' ? [far, gateway] : [gateway, far];
            const y = TOP + index * ROW;
            const head = to > from ? -8 : 8;
            const label = `${index + 1}. ${m.summary}, ${m.direction === 'received' ? 'from' : 'to'} ${LEG_TITLES[m.leg]}`;
            return (
              <g key={index} class={`arrow ${selected === index ? 'selected' : ''}`} role="button" tabindex={0} aria-label={label} aria-pressed={selected === index}
                data-index={index} onClick={() => select(index)}
                onKeyDown={(e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(index); } }}>
                <rect x={Math.min(from, to)} y={y - 16} width={Math.abs(to - from)} height={22} class="hit" />
                <line x1={from} y1={y} x2={to} y2={y} />
                <polygon points={`${to},${y} ${to + head},${y - 4} ${to + head},${y + 4}`} />
                <text x={(from + to) / 2} y={y - 5} text-anchor="middle">{m.summary.length > 28 ? `${m.summary.slice(0, 27)}…` : m.summary}</text>
                <title>{label}</title>
              </g>
            );
          })}
        </svg>
      </div>
      {message && (
        <section class="sip-message" aria-live="polite" aria-label="Selected SIP message">
          <h3>{message.summary}</h3>
          <p>{message.direction} {message.transport} {message.source} → {message.destination} at {new Date(message.at).toISOString()}</p>
          <pre>{message.text}</pre>
        </section>
      )}
    </div>
  );
}
