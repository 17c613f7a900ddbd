// Builds the media I/O addon (native/media-io) with node-gyp against this Node's headers. Linux
// only: elsewhere media uses node:dgram and there is nothing to build. A failed build does not
// fail the install: media then runs on node:dgram (rtp.socket_io auto), the start log's media_io
// says so, and rtp.socket_io native refuses to start without the addon.
import { spawnSync } from 'node:child_process';

if (process.platform !== 'linux') {
  console.log(`media I/O addon: not built on ${process.platform}; media uses node:dgram`);
  process.exit(0);
}
// npm names its bundled node-gyp in the environment of the scripts it runs.
const gyp = process.env.npm_config_node_gyp;
const [command, args] = gyp ? [process.execPath, [gyp]] : ['node-gyp', []];
const result = spawnSync(command, [...args, 'rebuild', '--directory=native/media-io', '--loglevel=warn'], { stdio: 'inherit' });
if (result.error || result.status !== 0) {
  const why = result.error ? `cannot run node-gyp (${result.error.message})` : `node-gyp exited with ${result.status}`;
  console.warn(`media I/O addon NOT built: ${why}. It needs python3, make and a C compiler; then run npm run build:native.`);
  console.warn('Until then media uses node:dgram, at about a third more CPU per packet.');
}
