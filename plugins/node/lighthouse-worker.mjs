// Lighthouse for plugins/lighthouse.py: request {url} -> {categories: {id: {score, audits}}}
// or {error}. Settings: {chrome: executable, flags: [chrome flags], concurrency, config?}.
// Each of `concurrency` slots keeps one headless Chromium (chrome-launcher) and reuses it for
// page after page: Lighthouse needs a browser to itself, not a fresh one per page.
import * as chromeLauncher from 'chrome-launcher';
import lighthouse from 'lighthouse';

import { serve, settings } from './protocol.mjs';

const { chrome, flags = [], concurrency = 1, config } = settings();
const CATEGORIES = ['performance', 'accessibility', 'best-practices', 'seo'];

const idle = [];
const launched = new Set();

async function borrow() {
	if (idle.length > 0) return idle.pop();
	const browser = await chromeLauncher.launch({
		chromePath: chrome,
		chromeFlags: ['--headless=new', ...flags],
		logLevel: 'silent',
	});
	launched.add(browser);
	return browser;
}

function retire(browser) {
	launched.delete(browser);
	try {
		browser.kill();
	} catch {
		// already gone
	}
}

/** An audit's line in its category's note: the audits that lose points. */
function failing(lhr, category) {
	return category.auditRefs
		.map((ref) => lhr.audits[ref.id])
		.filter((audit) => audit && audit.score !== null && audit.score < 1)
		.map((audit) => ({ title: audit.title, description: audit.description, score: audit.score }));
}

serve(
	async ({ url }) => {
		const browser = await borrow();
		let result;
		try {
			result = await lighthouse(
				url,
				{ port: browser.port, output: 'json', logLevel: 'error', onlyCategories: CATEGORIES },
				config ?? undefined,
			);
		} catch (error) {
			// a browser Lighthouse failed in is not trusted with the next page
			retire(browser);
			return { error: String(error?.message ?? error) };
		}
		idle.push(browser);
		if (!result) return { error: 'Lighthouse returned no result' };
		const { lhr } = result;
		const categories = {};
		for (const id of CATEGORIES) {
			const category = lhr.categories[id];
			if (category) categories[id] = { score: category.score, audits: failing(lhr, category) };
		}
		return { categories, runtimeError: lhr.runtimeError?.message ?? null };
	},
	{ concurrency },
);

const shutdown = () => {
	for (const browser of launched) retire(browser);
};
process.on('exit', shutdown);
process.on('SIGTERM', () => process.exit(0));
