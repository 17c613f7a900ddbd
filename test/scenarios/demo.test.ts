/**
 * `npm run demo` end to end: the script starts a gateway process, an agent and one sandbox call,
 * walks it through every command, and exits 0 having printed each step. Run with `--tones`, so it
 * never depends on flite being installed.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';

/** The demo must finish well within a minute; this only bounds a hung run. */
const HUNG_MS = 90_000;

async function runDemo(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/demo/demo.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  const timer = setTimeout(() => child.kill('SIGINT'), HUNG_MS);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, output };
}

t.test('npm run demo: one sandbox call through place, answer, list, hold, unhold, transfer, hangup, CDR and recording', async (t) => {
  const { code, output } = await runDemo(['--tones']);
  t.equal(code, 0, 'the demo exits 0');
  t.match(output, /sandbox key from its first-start output: vgw_test_/, 'the first-start sandbox key was read from the gateway');
  t.match(output, /agent \| start: call call_/, 'the agent was connected to the call');
  t.match(output, /POST \/v1\/calls \{[^\n]*\} -> 200\n[\s\S]*"state": "initiated"/, 'the call was placed');
  t.match(output, /state: \w+ -> ringing[\s\S]*-> active/, 'it rang, then was answered');
  t.match(output, /GET \/v1\/calls -> 200\n\s+\{\n\s+"data": \[\n\s+\{\n\s+"id": "call_/, 'the live list showed it');
  t.match(output, /\/hold -> 200\n[\s\S]*"on_hold": true/, 'hold answered on_hold true');
  t.match(output, /agent \| hold/, 'the agent received hold');
  t.match(output, /\/unhold -> 200\n[\s\S]*"on_hold": false/, 'unhold answered on_hold false');
  t.match(output, /agent \| unhold/, 'the agent received unhold');
  t.match(output, /"state": "connected"/, 'the transfer connected');
  t.match(output, /agent \| stop/, 'the agent was released by the transfer');
  t.match(output, /\/hangup -> 200\n[\s\S]*"state": "ended"/, 'the hangup ended the call');
  t.match(output, /"cdr": \{[\s\S]*"end_reason": "completed"[\s\S]*"hangup_by": "api"/, 'the CDR was printed');
  const path = /recording path: (\S+\.wav)/.exec(output)?.[1];
  t.ok(path, 'the recording path was printed');
  t.match(output, /size: \d+ bytes; 2 channels, 8000 Hz, 16-bit; duration \d+\.\d+ s/, 'with its size and duration from the header');
  t.notOk(path && existsSync(path), 'the temporary data folder is removed without --keep');
  t.match(output, /gateway exited with code 0/, 'the gateway stopped cleanly on SIGTERM');
  t.notMatch(output, /DEMO FAILED/);
});

t.test('npm run demo: an unknown option prints the usage and exits 2', async (t) => {
  const { code, output } = await runDemo(['--nope']);
  t.equal(code, 2);
  t.match(output, /usage: npm run demo -- \[--keep\] \[--tones\]/);
});
