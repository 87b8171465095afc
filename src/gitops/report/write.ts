/** Writes report.json and report.md into a folder (CLI --report-dir, the Action's report-dir). */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderMarkdown } from './markdown.js';
import type { Report } from './report.js';

export async function writeReports(report: Report, dir: string | undefined): Promise<void> {
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'report.json'), `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(join(dir, 'report.md'), renderMarkdown(report));
}
