/** A lease on background work: at most one process of those sharing a store holds it at a time. */

export interface Lease {
  /** Takes the lease if it is free; true while this process holds it. */
  tryAcquire(): Promise<boolean>;
  /** Called once if a held lease is lost (the connection that holds it dropped). */
  onLost(callback: () => void): void;
  release(): Promise<void>;
}

/** For a store only this process writes (memory): always held. */
export class LocalLease implements Lease {
  async tryAcquire(): Promise<boolean> {
    return true;
  }
  onLost(): void {}
  async release(): Promise<void> {}
}
