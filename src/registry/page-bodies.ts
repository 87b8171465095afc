/**
 * The last LIST bodies spliced from the watch cache, by (revision, page start, limit). A revision
 * names one state of the store (every write takes the next one), so a page without a selector,
 * for a reader who sees every object, is the same bytes each time it is asked at that revision:
 * a poller (the GitOps daemon's plan, a dashboard, `kubectl get -w`'s relists) asking again before
 * anything changed gets them without the page being spliced and copied again. Bounded in count
 * and bytes, least recently asked out first; a page too large to keep is never kept, and the
 * bodies of one revision only are kept: a write drops them.
 */

/** Bodies kept per kind. */
const maxBodies = 8;
/** Bytes kept per kind, and the largest body kept (a page of 1,000 Teams is about 0.7 MiB). */
const maxBytes = 8 * 1024 * 1024;
const maxBodyBytes = 2 * 1024 * 1024;

/** A page within one revision: its limit (a number, so the first NUL ends it) and where it starts. */
const pageKey = (after: string, limit: number) => `${limit}\0${after}`;

export class PageBodies {
  /** The cache's filled state and revision every kept body was spliced at: one at a time (see `at`). */
  private fill: object | undefined;
  private revision = -1;
  /** By page start and limit, in use order: a hit moves its body to the end. */
  private readonly bodies = new Map<string, Buffer>();
  private bytes = 0;

  /** The body of this page at this revision, if kept. */
  get(fill: object, revision: number, after: string, limit: number): Buffer | undefined {
    if (!this.at(fill, revision)) return undefined;
    const key = pageKey(after, limit);
    const body = this.bodies.get(key);
    if (body === undefined) return undefined;
    this.bodies.delete(key);
    this.bodies.set(key, body);
    return body;
  }

  set(fill: object, revision: number, after: string, limit: number, body: Buffer): void {
    if (body.length > maxBodyBytes) return;
    this.at(fill, revision);
    const key = pageKey(after, limit);
    if (this.bodies.has(key)) return;
    this.bodies.set(key, body);
    this.bytes += body.length;
    for (const [oldest, old] of this.bodies) {
      if (this.bodies.size <= maxBodies && this.bytes <= maxBytes) break;
      this.bodies.delete(oldest);
      this.bytes -= old.length;
    }
  }

  /**
   * Whether the kept bodies are of this filled state at this revision; if not, they are dropped.
   * The cache answers only at the revision it has applied, so a body of any other can never be
   * asked for again. The fill matters when the store's revisions went back (a restored backup, a
   * failover to a replica behind): the cache fills again, and the same revision number then names
   * another state.
   */
  private at(fill: object, revision: number): boolean {
    if (fill === this.fill && revision === this.revision) return true;
    this.fill = fill;
    this.revision = revision;
    this.bodies.clear();
    this.bytes = 0;
    return false;
  }

  /** What is kept now (tests: the bound holds). */
  get size(): { bodies: number; bytes: number } {
    return { bodies: this.bodies.size, bytes: this.bytes };
  }
}
