/** An ApiClient that counts its requests by verb and status code, for the daemon's metrics. */
import { ClientError, type ApiClient, type ClientWatch, type DeleteOptions, type KeyRotationSpec, type ApiPlural, type Plural, type RotateOptions } from '../client/types.js';
import type { AuditFilter } from '../api/audit-event.js';
import type { KubeObject } from '../api/types.js';
import type { DaemonMetrics } from './metrics.js';

export class CountingClient implements ApiClient {
  constructor(
    private readonly inner: ApiClient,
    private readonly metrics: DaemonMetrics,
  ) {}

  get target() {
    return this.inner.target;
  }

  get apiVersion() {
    return this.inner.apiVersion;
  }

  private async count<T>(verb: string, ok: number, call: () => Promise<T>): Promise<T> {
    try {
      const result = await call();
      this.metrics.apiRequests.inc({ verb, code: String(ok) });
      return result;
    } catch (err) {
      this.metrics.apiRequests.inc({ verb, code: err instanceof ClientError ? String(err.code) : 'error' });
      throw err;
    }
  }

  list(plural: ApiPlural) {
    return this.count('list', 200, () => this.inner.list(plural));
  }
  get(plural: ApiPlural, name: string) {
    return this.count('get', 200, () => this.inner.get(plural, name));
  }
  create(plural: ApiPlural, obj: KubeObject) {
    return this.count('create', 201, () => this.inner.create(plural, obj));
  }
  replace(plural: ApiPlural, name: string, obj: KubeObject) {
    return this.count('update', 200, () => this.inner.replace(plural, name, obj));
  }
  patch(plural: ApiPlural, name: string, ops: unknown[]) {
    return this.count('patch', 200, () => this.inner.patch(plural, name, ops));
  }
  rotate(name: string, spec: KeyRotationSpec, opts?: RotateOptions) {
    return this.count('create', spec.confirm ? 200 : 201, () => this.inner.rotate(name, spec, opts));
  }
  delete(plural: ApiPlural, name: string, opts?: DeleteOptions) {
    return this.count('delete', 200, () => this.inner.delete(plural, name, opts));
  }
  watch(plural: ApiPlural): ClientWatch {
    this.metrics.apiRequests.inc({ verb: 'watch', code: '200' });
    return this.inner.watch(plural);
  }
  auditEvents(filter: AuditFilter) {
    return this.count('list', 200, () => this.inner.auditEvents(filter));
  }
  close() {
    return this.inner.close();
  }
}
