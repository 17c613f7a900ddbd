// Builds the media I/O addon (native/media-io) with node-gyp against this Node's headers. Linux
// only: elsewhere media uses node:dgram and there is nothing to build.
import { spawnSync } from 'node:child_process';

if (process.platform !== 'linux') {
  console.log(`media I/O addon: not built on ${process.platform}; media uses node:dgram`);
  process.exit(0);
}
// npm names its bundled node-gyp in the environment of the scripts it runs.
const gyp = process.env.npm_config_node_gyp;
const [command, args] = gyp ? [process.execPath, [gyp]] : ['node-gyp', []];
const result = spawnSync(command, [...args, 'rebuild', '--directory=native/media-io', '--loglevel=warn'], { stdio: 'inherit' });
if (result.error) {
  console.error(`media I/O addon: cannot run node-gyp (${result.error.message}); it needs python3, make and a C compiler`);
  process.exit(1);
}
process.exit(result.status ?? 1);
