/**
 * meta.k8s.io/v1 PartialObjectMetadata(List): objects reduced to their metadata, what client-go's
 * metadata client and metadata-only informers ask for (and what a Table row carries by default).
 */
import type { KubeObject, ListMeta } from '../api/types.js';

export function partialObject(obj: KubeObject) {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
}

export function partialList(list: { metadata: ListMeta; items: KubeObject[] }) {
  return { kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', metadata: list.metadata, items: list.items.map(partialObject) };
}
