/** The worker thread yaml-thread.ts starts: decodes each YAML body it is sent, one at a time. */
import { parentPort } from 'node:worker_threads';
import { decodeYaml } from './yaml-body.js';

const port = parentPort!;
port.on('message', ({ text }: { text: string }) => port.postMessage({ result: decodeYaml(text) }));
