/**
 * Writes report.json and report.md into a folder: the one report writer of the CLI (--report-dir),
 * the Action (report-dir) and the daemon (each cycle). Each file is written aside and renamed over
 * the last (see no-follow.ts), so a reader (a dashboard, a test, the next step) never sees half a report.
 */
import { join } from 'node:path';
import { mkdirNoFollow, writeNoFollow } from '../no-follow.js';
import { renderMarkdown } from './markdown.js';
import type { Report } from './report.js';

/** The report as report.json holds it. */
export const reportJson = (report: Report): string => `${JSON.stringify(report, null, 2)}\n`;

/** Writes (or replaces) `dir`/report.json and `dir`/report.md; nothing when no folder is given. */
export async function writeReports(report: Report, dir: string | undefined): Promise<void> {
  if (!dir) return;
  // The folder may be in a pull request's checkout: a link planted there (as it or as a folder above it) is not written through.
  await mkdirNoFollow(dir, 'the report folder');
  // report.json last: a reader that waits for it (a dashboard, a test) finds report.md of the same run.
  await writeNoFollow(join(dir, 'report.md'), renderMarkdown(report));
  await writeNoFollow(join(dir, 'report.json'), reportJson(report));
}
