/**
 * /metrics carries the process's own figures (CPU, memory, heap, event-loop lag, GC) once, beside
 * the server's: they are collected once per process, so every server a process builds serves the
 * same ones, and none adds another GC observer or event-loop monitor (each collection installs
 * both for good).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServerMetrics } from '../../src/server/metrics.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const helpLines = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`# HELP ${name} `)).length;

describe('the process metrics of several servers in one process', () => {
  const servers: InProcess[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 2; i++) servers.push(await startInProcess());
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('are served by each, once, beside its own request latency', async () => {
    for (const s of servers) {
      expect((await s.fetch(`${s.api}/teams`)).status).toBe(200);
      const res = await s.fetch(`${s.base}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds', 'nodejs_gc_duration_seconds', 'nodejs_heap_size_used_bytes']) {
        expect(helpLines(text, name), name).toBe(1);
      }
      expect(text).toMatch(/^teamkeys_apiserver_request_duration_seconds_count\{verb="LIST",resource="teams",code="200"\} 1$/m);
    }
  });

  it('are collected once: a server built later shares them', () => {
    expect(new ServerMetrics().process).toBe(new ServerMetrics().process);
  });
});
