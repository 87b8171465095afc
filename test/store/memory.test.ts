import { MemoryStore } from '../../src/store/backends/memory.js';
import { describeStoreConformance } from './conformance.js';

describeStoreConformance('memory', async () => {
  const store = new MemoryStore();
  return { store, cleanup: () => store.close() };
}, { sharedHandles: false });
