/** Writes report.json and report.md into a folder (CLI --report-dir, the Action's report-dir). */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { refuseLinkedFolder, writeNoFollow } from '../no-follow.js';
import { renderMarkdown } from './markdown.js';
import type { Report } from './report.js';

export async function writeReports(report: Report, dir: string | undefined): Promise<void> {
  if (!dir) return;
  // The folder may be in a pull request's checkout: a link planted there (or as it) is not written through.
  await refuseLinkedFolder(dir, 'the report folder');
  await mkdir(dir, { recursive: true });
  await writeNoFollow(join(dir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeNoFollow(join(dir, 'report.md'), renderMarkdown(report));
}
