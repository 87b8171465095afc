/**
 * Reads of a past revision (a LIST with resourceVersionMatch=Exact, a continue token, a watch from a
 * resourceVersion) by a restricted reader, one whose reads carry an authorization filter. Who could
 * read an object then is not known now: an object deleted since, or replaced by a namesake (another
 * uid), may have belonged to people other than those who own its name today. So such a reader sees
 * a past version only of an object that is still the live one (same uid) and that it may read both
 * as it was and as it is. A reader without a filter (it may read every object) sees the past as it was.
 */
import type { Matcher } from '../api/selectors.js';
import type { StoredApiObject } from '../api/secrets.js';
import { keyOf, type RegistryContext } from './context.js';
import { storeCallUnless } from './storage-errors.js';

/** The live object of each name asked about, read once per name (undefined: gone). */
export class LiveObjects {
  private readonly live = new Map<string, Promise<StoredApiObject | undefined>>();

  constructor(
    private readonly ctx: RegistryContext,
    private readonly filter: Matcher,
  ) {}

  private read(name: string): Promise<StoredApiObject | undefined> {
    let found = this.live.get(name);
    if (!found) {
      found = storeCallUnless(this.ctx, name, 'NotFound', () => this.ctx.store.get<StoredApiObject>(keyOf(this.ctx, name)));
      this.live.set(name, found);
    }
    return found;
  }

  /** Whether the reader may see this past version of an object (it passed the filter as it was). */
  async readable(past: StoredApiObject): Promise<boolean> {
    const live = await this.read(past.metadata.name!);
    return live !== undefined && live.metadata.uid === past.metadata.uid && this.filter(live);
  }

  /** readable() of each object, the reads made together. */
  all(past: StoredApiObject[]): Promise<boolean[]> {
    return Promise.all(past.map((o) => this.readable(o)));
  }
}
