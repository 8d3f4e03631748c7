import { readFileSync } from 'node:fs';
import { MLEngine } from 'markuplint';
const pages = readFileSync('/tmp/s6prof/pages.jsonl', 'utf8').trim().split('\n').map(JSON.parse);
const { url, html } = pages[0];
let c0 = process.cpuUsage();
const engine = await MLEngine.fromCode(html, { name: url + '.html', noSearchConfig: true });
const fabric = await engine.provide();
let c1 = process.cpuUsage(c0); console.error('provide', (c1.user + c1.system) / 1000);
c0 = process.cpuUsage();
const core = await engine.setup();
c1 = process.cpuUsage(c0); console.error('setup', (c1.user + c1.system) / 1000);
c0 = process.cpuUsage();
core.setCode(html);
c1 = process.cpuUsage(c0); console.error('parse', (c1.user + c1.system) / 1000);
for (let i = 0; i < 5; i++) {
c0 = process.cpuUsage();
const v = await core.verify();
c1 = process.cpuUsage(c0); console.error('verify', (c1.user + c1.system) / 1000, v.length);
}
