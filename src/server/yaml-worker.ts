/** The worker thread yaml-thread.ts starts: decodes each YAML body it is sent, in order. */
import { parentPort } from 'node:worker_threads';
import { decodeYaml } from './yaml-body.js';

const port = parentPort!;
port.on('message', ({ id, text }: { id: number; text: string }) => port.postMessage({ id, result: decodeYaml(text) }));
