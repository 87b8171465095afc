/**
 * The server's audit trail: every successful write the registry makes becomes an audit Event,
 * stored in the write's own transaction and (with --audit-log) appended to a JSON-lines file; old events are trimmed
 * after the retention period. The server's own status bookkeeping (a key's lastActivity) is left
 * out: it changes no access and would bury the writes people make.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import type { Logger } from 'pino';
import { auditApiVersion, auditJobExtra, type AuditEvent, type AuditFilter } from '../../api/audit-event.js';
import type { ObservedWrite, WriteObserver } from '../../registry/write-observer.js';
import type { AuditTrail } from '../../store/audit/audit-trail.js';

/** Marks a write authenticated by a key's previous value (a rotation's overlap): which value made it. */
export const previousValueAnnotation = { 'authentication.management.service/key-value': 'previous' } as const;

export interface AuditOptions {
  /** Events older than this are trimmed (default 90 days). */
  retentionMs?: number;
  /** Also append each event as one JSON line to this file (mode 0600). */
  logFile?: string;
  now?: () => Date;
  /** The user every write without a requester is recorded under (a command on a local store). */
  localUser?: string;
}

export const defaultAuditRetentionMs = 90 * 24 * 3600 * 1000;

/** The username the server's own writes (garbage collection, bootstrap) are recorded under. */
export const serverUser = 'system:teamkeys';

export class AuditRecorder {
  private readonly file: WriteStream | undefined;
  private readonly now: () => Date;

  constructor(
    private readonly trail: AuditTrail,
    private readonly log: Logger,
    private readonly opts: AuditOptions = {},
  ) {
    this.now = opts.now ?? (() => new Date());
    this.file = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a', mode: 0o600 }) : undefined;
    this.file?.on('error', (err) => this.log.error({ err }, 'cannot write the audit log file'));
  }

  /**
   * The observer to give the registry: the store keeps each event in its write's own transaction
   * (an acknowledged write always has its event; a failed one has none), and the file hears of it
   * once committed.
   */
  readonly observer: WriteObserver = {
    eventOf: (write) => (!write.requester && write.subresource === 'status' && !this.opts.localUser ? undefined : this.eventOf(write)),
    committed: (event) => void this.file?.write(`${JSON.stringify(event)}\n`),
  };

  private eventOf(w: ObservedWrite): AuditEvent {
    const meta = w.object.metadata;
    const apiVersion = w.object.apiVersion ?? '';
    const r = w.requester;
    const event: AuditEvent = {
      apiVersion: auditApiVersion,
      kind: 'Event',
      level: 'Metadata',
      auditID: r?.auditID ?? randomUUID(),
      stage: 'ResponseComplete',
      verb: w.verb,
      user: { username: r?.username ?? this.opts.localUser ?? serverUser, ...(r?.keyName ? { keyName: r.keyName } : {}), ...(r?.groups?.length ? { groups: r.groups } : {}), ...(r?.job ? { extra: { [auditJobExtra]: [r.job] } } : {}) },
      ...(r?.impersonatedUser ? { impersonatedUser: r.impersonatedUser } : {}),
      ...(r?.sourceIP ? { sourceIPs: [r.sourceIP] } : {}),
      ...(r?.userAgent ? { userAgent: r.userAgent } : {}),
      objectRef: {
        apiGroup: apiVersion.split('/')[0] ?? '',
        apiVersion,
        resource: w.resource,
        name: meta.name ?? '',
        ...(meta.uid ? { uid: meta.uid } : {}),
        ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
        ...(w.subresource ? { subresource: w.subresource } : {}),
      },
      fieldManager: w.fieldManager,
      ...(w.auditAnnotations || r?.previousValue ? { annotations: { ...w.auditAnnotations, ...(r?.previousValue ? previousValueAnnotation : {}) } } : {}),
      stageTimestamp: this.now().toISOString(),
    };
    const f = w.fields;
    if (f && f.added.length + f.changed.length + f.removed.length > 0) {
      event.fields = { ...(f.added.length ? { added: f.added } : {}), ...(f.changed.length ? { changed: f.changed } : {}), ...(f.removed.length ? { removed: f.removed } : {}) };
    }
    return event;
  }

  get retentionMs(): number {
    return this.opts.retentionMs ?? defaultAuditRetentionMs;
  }

  /** Matching events (every acknowledged write's is stored already). */
  async list(filter: AuditFilter): Promise<AuditEvent[]> {
    return this.trail.list(filter);
  }

  /** Drops events older than the retention period. */
  async trim(): Promise<number> {
    return this.trail.trim(new Date(this.now().getTime() - this.retentionMs));
  }

  async close(): Promise<void> {
    await new Promise<void>((done) => (this.file ? this.file.end(done) : done()));
    await this.trail.close();
  }
}
