/** @module Plain JavaScript in a child Node, for tests that need a process (or an addon) of their own. */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The media I/O addon's build, for children that load it bare. */
export const mediaIoAddonPath = fileURLToPath(new URL('../../native/media-io/build/Release/media_io.node', import.meta.url));

/**
 * Runs `script` in a child Node and resolves with its stdout once it exits (killed after `ms`).
 * `wrapper`: a command line that runs the child under it (say prlimit(1) with its options).
 */
export async function runChild(script: string, ms = 5000, wrapper: string[] = []): Promise<string> {
  const command = [...wrapper, process.execPath, '-e', script];
  const child = spawn(command[0]!, command.slice(1));
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => child.kill(), ms);
    child.on('exit', () => (clearTimeout(timer), resolve()));
  });
  return out;
}
