#!/usr/bin/env node
/**
 * npm's `prepare`: builds dist/ after `npm ci` (and before `npm pack`). `npx teamkeys` in a clone
 * installs the clone into npm's npx cache as a link and runs this again (npm_command is "exec"):
 * there the clone's dist/, built by `npm ci`, is the one the link runs, so rebuilding it (tsc, about
 * half a minute, silently) would only delay the command. Only a clone with no build yet builds then.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const built = existsSync(`${root}dist/cli/main.js`);
if (process.env.npm_command === 'exec' && built) process.exit(0);
const r = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
process.exit(r.status ?? 1);
