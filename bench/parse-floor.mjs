// The floor for `teamkeys plan`: read and parse every manifest file with the same YAML library.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

const dir = process.argv[2];
let docs = 0;
for (const name of (await readdir(dir)).sort()) {
  for (const doc of parseAllDocuments(await readFile(join(dir, name), 'utf8'))) if (doc.toJS()) docs++;
}
console.log(docs);
