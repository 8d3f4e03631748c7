import { readFileSync } from 'node:fs';
import { MLEngine } from 'markuplint';
const pages = readFileSync('/tmp/s6prof/pages.jsonl', 'utf8').trim().split('\n').map(JSON.parse);
const mode = process.argv[2];
const n = +(process.argv[3] ?? 100);
const fileName = (url) => url.endsWith('/') ? `${url}index.html` : url.endsWith('.html') ? url : `${url}.html`;
const out = [];
let engine;
const t0 = performance.now();
for (const { url, html } of pages.slice(0, n)) {
  let result;
  if (mode === 'fresh' || !engine) {
    engine = await MLEngine.fromCode(html, { name: fileName(url), noSearchConfig: true });
    result = await engine.exec();
  } else {
    await engine.setCode(html);
    result = await engine.exec();
  }
  out.push(result.violations.map((v) => [v.severity, v.ruleId, v.message, v.line, v.col]));
}
const ms = (performance.now() - t0) / n;
console.error(`${mode}: ${ms.toFixed(1)} ms/page over ${n}; heap ${(process.memoryUsage().heapUsed/2**20).toFixed(0)} MB rss ${(process.memoryUsage().rss/2**20).toFixed(0)} MB`);
console.log(JSON.stringify(out));
