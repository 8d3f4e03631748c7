import { readFileSync } from 'node:fs';
import { MLEngine } from 'markuplint';
import { MLCore } from '@markuplint/ml-core';
const pages = readFileSync('/tmp/s6prof/pages.jsonl', 'utf8').trim().split('\n').map(JSON.parse);
const { url, html } = pages[0];
const engine = await MLEngine.fromCode(html, { name: url + '.html', noSearchConfig: true });
const fabric = await engine.provide();
const times = {};
for (const rule of fabric.rules) {
  const orig = rule.verify.bind(rule);
  rule.verify = async (...a) => { const c0 = process.cpuUsage(); const r = await orig(...a); const c = process.cpuUsage(c0); times[rule.name] = (times[rule.name] ?? 0) + (c.user + c.system) / 1000; return r; };
}
const core = new MLCore({ sourceCode: html, filename: url + '.html', ...fabric });
for (const p of pages.slice(1, 11)) { core.setCode(p.html); await core.verify(); }
console.error(Object.entries(times).sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, v]) => `${k} ${(v / 10).toFixed(1)}`).join('\n'));
