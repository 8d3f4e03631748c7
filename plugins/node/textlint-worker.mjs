// textlint for plugins/textlint.py: request {url, html, lang} -> [{severity, rule, message,
// line, col}]. Settings: {rules: {lang: {ruleId: true | false | options}}} — the full rule set
// of each language (the Python side merges the user's rules over the defaults). One linter per
// language, built when its first page comes (the Japanese dictionaries load only then).
import { TextlintKernelDescriptor } from '@textlint/kernel';
import { createLinter } from 'textlint';

import { serve, settings } from './protocol.mjs';

/** Rules whose package name is not `textlint-rule-<id>`. */
const PACKAGES = {
	'@textlint-ja/no-synonyms': '@textlint-ja/textlint-rule-no-synonyms',
};

/** The module's export, through the CommonJS/ESM wrappers rule packages come in. */
async function load(name) {
	const module = await import(name);
	return module.default?.default ?? module.default ?? module;
}

async function buildLinter(rules) {
	const enabled = Object.entries(rules).filter(([, options]) => options !== false);
	const descriptors = await Promise.all(
		enabled.map(async ([ruleId, options]) => ({
			ruleId,
			rule: await load(PACKAGES[ruleId] ?? (ruleId.startsWith('@') ? ruleId : `textlint-rule-${ruleId}`)),
			options: options === true ? {} : options,
		})),
	);
	const descriptor = new TextlintKernelDescriptor({
		rules: descriptors,
		plugins: [{ pluginId: 'html', plugin: await load('textlint-plugin-html') }],
		filterRules: [],
	});
	return createLinter({ descriptor });
}

const SEVERITY = { 1: 'warning', 2: 'error' };

const rulesByLanguage = settings().rules ?? {};
const linters = new Map();

function linterFor(lang) {
	if (!linters.has(lang)) linters.set(lang, buildLinter(rulesByLanguage[lang] ?? {}));
	return linters.get(lang);
}

/**
 * textlint picks the HTML plugin by the file name's extension: `/a/` becomes `/a/index.html`
 * (the original's `/a/.html` has no extension to Node's path.extname, so textlint refused it).
 */
function fileName(url) {
	const { pathname } = new URL(url);
	if (pathname.endsWith('/')) return `${pathname}index.html`;
	if (pathname.endsWith('.html')) return pathname;
	return `${pathname}.html`;
}

serve(async ({ url, html, lang }) => {
	const result = await (await linterFor(lang)).lintText(html, fileName(url));
	return result.messages.map((m) => ({
		severity: SEVERITY[m.severity] ?? 'error',
		rule: m.ruleId,
		message: m.message,
		line: m.line,
		col: m.column,
	}));
});
