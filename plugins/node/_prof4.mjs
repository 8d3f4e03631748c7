import { readFileSync } from 'node:fs';
import { MLEngine } from 'markuplint';
const pages = readFileSync('/tmp/s6prof/pages.jsonl', 'utf8').trim().split('\n').map(JSON.parse);
const mode = process.argv[2];
let engine;
for (let round = 0; round < 2; round++)
for (const [i, { url, html }] of pages.entries()) {
  if (mode === 'fresh' || !engine) { engine = await MLEngine.fromCode(html, { name: url + '.html', noSearchConfig: true }); }
  else await engine.setCode(html);
  await engine.exec();
  if (i % 25 === 24) { globalThis.gc?.(); console.error(mode, round, i + 1, (process.memoryUsage().heapUsed / 2**20).toFixed(1), (process.memoryUsage().rss / 2**20).toFixed(0)); }
}
