/**
 * The last LIST bodies spliced from the watch cache, by (revision, page start, limit). A revision
 * names one state of the store (every write takes the next one), so a page without a selector,
 * for a reader who sees every object, is the same bytes each time it is asked at that revision:
 * a poller (the GitOps daemon's plan, a dashboard, `kubectl get -w`'s relists) asking again before
 * anything changed gets them without the page being spliced and copied again. Bounded in count
 * and bytes, oldest out first; a page too large to keep is never kept.
 */

/** Bodies kept per kind. */
const maxBodies = 8;
/** Bytes kept per kind, and the largest body kept (a page of 1,000 Teams is about 0.7 MiB). */
const maxBytes = 8 * 1024 * 1024;
const maxBodyBytes = 2 * 1024 * 1024;

export class PageBodies {
  /** In insertion order, which is also use order: a hit moves its body to the end. */
  private readonly bodies = new Map<string, Buffer>();
  private bytes = 0;

  static key(revision: number, after: string, limit: number): string {
    return `${revision}\0${limit}\0${after}`;
  }

  get(key: string): Buffer | undefined {
    const body = this.bodies.get(key);
    if (body === undefined) return undefined;
    this.bodies.delete(key);
    this.bodies.set(key, body);
    return body;
  }

  set(key: string, body: Buffer): void {
    if (body.length > maxBodyBytes || this.bodies.has(key)) return;
    this.bodies.set(key, body);
    this.bytes += body.length;
    for (const [oldest, old] of this.bodies) {
      if (this.bodies.size <= maxBodies && this.bytes <= maxBytes) break;
      this.bodies.delete(oldest);
      this.bytes -= old.length;
    }
  }

  /** What is kept now (tests: the bound holds). */
  get size(): { bodies: number; bytes: number } {
    return { bodies: this.bodies.size, bytes: this.bytes };
  }
}
