/**
 * Admission: a check the caller (the HTTP server's authorization) runs inside every write, on the
 * exact objects being written, so no decision is made on a stale read. It throws to refuse.
 */
import type { KubeObject } from '../api/types.js';

export interface Admission {
  verb: 'create' | 'update' | 'patch' | 'delete';
  subresource?: 'status';
  /** The object as stored before the write (absent on create). */
  old?: KubeObject;
  /** The object as it will be stored (absent on delete). */
  object?: KubeObject;
  /** A key-setting write (key-setting.ts: a value set, or a disabled key enabled): whoever wrote it can use the key. */
  setsKey?: boolean;
  /** A delete's propagationPolicy as asked (absent: Background). */
  propagationPolicy?: string;
}

export type Admit = (a: Admission) => void | Promise<void>;
