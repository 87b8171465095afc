/**
 * What a request holds (a place under a bound, a watch's slot) must come back when its response
 * ends or its connection goes, whichever is first. The response's 'close' alone is not enough: a
 * pipelined request's response waits behind the one before it on the connection, and Node attaches
 * it to the socket only when its turn comes, so when the connection is cut first that response never
 * emits 'close' and what its request held stayed taken for good (found by a review, 2026-11-30: a
 * client without a key locked every key-less body out in a third of a second).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Calls `fn` once, at the response's end or the connection's, whichever is first; the function given back calls it now. */
export function whenGone(req: IncomingMessage, res: ServerResponse, fn: () => void): () => void {
  const socket = req.socket as IncomingMessage['socket'] | undefined;
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    res.off('close', once);
    // A keep-alive connection serves many requests: each takes its listener back.
    socket?.off('close', once);
    fn();
  };
  res.once('close', once);
  socket?.once('close', once);
  // Gone already (cut while the request was read): neither emits 'close' again.
  if (res.destroyed || socket?.destroyed) once();
  return once;
}
