/**
 * What a request holds (a place under a bound, a watch's slot) must come back when its response
 * ends or its connection goes, whichever is first. The response's 'close' alone is not enough: a
 * pipelined request's response waits behind the one before it on the connection, and Node attaches
 * it to the socket only when its turn comes, so when the connection is cut first that response never
 * emits 'close' and what its request held stayed taken for good (found by a review, 2026-11-30: a
 * client without a key locked every key-less body out in a third of a second).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The callbacks waiting on each connection: one 'close' listener per socket however many requests
 * wait on it (twenty watches pipelined on one connection printed Node's MaxListenersExceededWarning).
 */
const waiting = new WeakMap<Socket, Set<() => void>>();

function onSocketClose(socket: Socket, fn: () => void): () => void {
  let set = waiting.get(socket);
  if (!set) {
    const callbacks = new Set<() => void>();
    waiting.set(socket, (set = callbacks));
    socket.once('close', () => {
      waiting.delete(socket);
      for (const cb of callbacks) cb();
    });
  }
  set.add(fn);
  const callbacks = set;
  return () => void callbacks.delete(fn);
}

/** Calls `fn` once, at the response's end or the connection's, whichever is first; the function given back calls it now. */
export function whenGone(req: IncomingMessage, res: ServerResponse, fn: () => void): () => void {
  const socket = req.socket as Socket | undefined;
  let done = false;
  let forget = () => {};
  const once = () => {
    if (done) return;
    done = true;
    res.off('close', once);
    // A keep-alive connection serves many requests: each takes its callback back.
    forget();
    fn();
  };
  res.once('close', once);
  if (socket && typeof socket.once === 'function') forget = onSocketClose(socket, once);
  // Gone already (cut while the request was read): neither emits 'close' again.
  if (res.destroyed || socket?.destroyed) once();
  return once;
}
