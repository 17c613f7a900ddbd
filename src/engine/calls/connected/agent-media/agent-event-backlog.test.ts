/** @module What an agent sends before its media leg is attached: kept in order, copied, bounded for audio only. */
import t from 'tap';
import { AgentEventBacklog } from './agent-event-backlog.js';

function replayed(backlog: AgentEventBacklog): string[] {
  const seen: string[] = [];
  backlog.replay({ audio: (c) => seen.push(`audio:${c.toString()}`), mark: (n) => seen.push(`mark:${n}`), clear: () => seen.push('clear') });
  return seen;
}

t.test('docs/API.md "Agent WebSocket protocol": audio, marks and clears replay in arrival order, once', (t) => {
  const backlog = new AgentEventBacklog();
  const chunk = Buffer.from('a1');
  backlog.audio(chunk);
  chunk.write('zz'); // the link reuses its buffer after the call
  backlog.mark('m1');
  backlog.clear();
  backlog.audio(Buffer.from('a2'));
  t.same(replayed(backlog), ['audio:a1', 'mark:m1', 'clear', 'audio:a2'], 'in order, the audio as it was when it came');
  t.same(replayed(backlog), [], 'emptied by the replay');
  t.end();
});

t.test('past the limit audio is dropped, while marks and clears are still kept', (t) => {
  const backlog = new AgentEventBacklog();
  let kept = 0;
  while (backlog.audio(Buffer.from('x'))) kept++;
  t.equal(kept, 500, 'about 10 s of 20 ms chunks');
  t.equal(backlog.audio(Buffer.from('y')), false, 'the next chunk is refused');
  backlog.mark('last');
  backlog.clear();
  const seen = replayed(backlog);
  t.equal(seen.length, 502);
  t.same(seen.slice(-2), ['mark:last', 'clear'], 'an agent waiting on its mark still gets it');
  t.end();
});
