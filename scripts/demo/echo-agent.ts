/**
 * @module `npm run agent:echo`: the demo's agent on its own, for a first call by hand. It listens
 * on loopback only (ws://127.0.0.1:8090/agent; VGW_ECHO_AGENT_PORT picks another port), greets
 * each call with three beeps and echoes the caller. A gateway reaches it only with
 * `calls.allow_private_agent_urls` (VGW_ALLOW_PRIVATE_AGENT_URLS=true), as README.md says.
 */
import { loadAnnouncement } from '../../src/engine/calls/index.js';
import { DemoAgent } from './demo-agent.js';

const port = Number(process.env.VGW_ECHO_AGENT_PORT ?? 8090);
const agent = await DemoAgent.start({ greeting: await loadAnnouncement(''), log: (line) => process.stdout.write(`${line}\n`), port });
process.stdout.write(`echo agent listening on ${agent.url}\n`);
const stop = (): void => { void agent.close().then(() => process.exit(0)); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
