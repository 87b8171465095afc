/** meta.k8s.io/v1 Table responses, which is how kubectl get prints server-side. */
import { columnsFor } from '../api/printing.js';
import type { KubeObject, ListMeta } from '../api/types.js';
import { partialObject } from './partial-metadata.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export interface Table {
  kind: 'Table';
  apiVersion: 'meta.k8s.io/v1';
  metadata: Partial<ListMeta>;
  columnDefinitions?: { name: string; type: string; format: string; description: string; priority: number }[];
  rows: { cells: unknown[]; object?: unknown }[];
}

export function toTable(
  kind: string,
  objects: KubeObject[],
  opts: { metadata?: Partial<ListMeta>; includeObject?: IncludeObject; withColumns?: boolean; now?: Date },
): Table {
  const columns = columnsFor(kind);
  const now = opts.now ?? new Date();
  const include = opts.includeObject ?? 'Metadata';
  const table: Table = {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: opts.metadata ?? {},
    rows: objects.map((o) => {
      const row: Table['rows'][number] = { cells: columns.map((c) => c.cell(o, now)) };
      if (include === 'Object') row.object = o;
      else if (include === 'Metadata') row.object = partialObject(o);
      return row;
    }),
  };
  if (opts.withColumns !== false) {
    table.columnDefinitions = columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description: c.description,
      priority: c.priority,
    }));
  }
  return table;
}
