// Where markuplint's time goes on a page: node bench/markuplint_cost.mjs [--rules] FILE.html ...
//
// One engine, as plugins/node/markuplint-worker.mjs keeps it (MLEngine.fromCode once, then
// setCode + exec page after page, markuplint's defaults, no config file): per page its size,
// elements, violations and the CPU milliseconds of setCode + exec (CPU, not wall-clock: the
// machine is shared). Run with `--import ./plugins/node/register.mjs` to lint as the plugin
// does (its module hooks: plugins/node/markuplint-positions.mjs), without to lint as
// markuplint does by itself. With --rules, every page is linted again
// once per rule with that rule alone on (the others off), and the rules are listed by the time
// they cost, summed over the pages: which rule makes a large page slow. Run it under
// `node --cpu-prof` for a profile (bench/README.md says how it was read).
import { readFileSync } from 'node:fs';

const { MLEngine } = await import('markuplint');

const args = process.argv.slice(2);
const byRule = args.includes('--rules');
const files = args.filter((arg) => arg !== '--rules');

function elements(html) {
	return (html.match(/<[a-zA-Z][^\s/>]*/g) ?? []).length;
}

/** CPU milliseconds of this process (every thread: the garbage collector's too). */
function cpu() {
	const { user, system } = process.cpuUsage();
	return (user + system) / 1000;
}

/** setCode (the parse) and exec (the rules): CPU ms of both, and the violations. */
async function lint(engine, html) {
	const started = cpu();
	await engine.setCode(html);
	const result = await engine.exec();
	return [cpu() - started, result?.violations ?? []];
}

const pages = files.map((file) => [file, readFileSync(file, 'utf8')]);
const first = await MLEngine.fromCode(pages[0][1], { name: 'first.html', noSearchConfig: true });
const started = cpu();
await first.exec();
console.log(`first page (config, rules, schemas resolved): ${(cpu() - started).toFixed(0)} ms CPU`);
let total = 0;
for (const [file, html] of pages) {
	const [ms, violations] = await lint(first, html);
	total += ms;
	console.log(`${file.split('/').pop()}: ${(html.length / 1024).toFixed(0)} KB, ${elements(html)} elements, ${violations.length} violations, ${ms.toFixed(0)} ms CPU`);
}
console.log(`pages: ${pages.length}, mean ${(total / pages.length).toFixed(0)} ms CPU a page`);

if (byRule) {
	// the rules of markuplint:recommended (what runs without a config): its presets' rules
	const presets = JSON.parse(readFileSync(new URL(import.meta.resolve('@markuplint/config-presets/preset.recommended.json')), 'utf8'))
		.extends.map((name) => name.replace('markuplint:', ''));
	const rules = new Set();
	for (const preset of presets) {
		const file = new URL(import.meta.resolve(`@markuplint/config-presets/preset.${preset}.json`));
		for (const rule of Object.keys(JSON.parse(readFileSync(file, 'utf8')).rules ?? {})) rules.add(rule);
	}
	const costs = [];
	for (const rule of rules) {
		const off = Object.fromEntries([...rules].filter((id) => id !== rule).map((id) => [id, false]));
		const engine = await MLEngine.fromCode(pages[0][1], {
			name: 'rule.html', noSearchConfig: true, config: { extends: ['markuplint:recommended'], rules: off },
		});
		await engine.exec();
		let spent = 0;
		for (const [, html] of pages) spent += (await lint(engine, html))[0];
		costs.push([rule, spent]);
	}
	const none = await MLEngine.fromCode(pages[0][1], {
		name: 'none.html', noSearchConfig: true,
		config: { extends: ['markuplint:recommended'], rules: Object.fromEntries([...rules].map((id) => [id, false])) },
	});
	await none.exec();
	let bare = 0;
	for (const [, html] of pages) bare += (await lint(none, html))[0];
	console.log(`every rule off (the engine's own walk): ${(bare / pages.length).toFixed(0)} ms a page`);
	costs.sort((a, b) => b[1] - a[1]);
	for (const [rule, spent] of costs) console.log(`${rule}: ${((spent - bare) / pages.length).toFixed(0)} ms a page`);
}
