// markuplint for plugins/markuplint.py: request {url, html} -> [{severity, rule, message, line, col}].
// Settings: {config?: markuplint config}; without one, markuplint's own defaults apply.
import { MLEngine } from 'markuplint';

import { serve, settings } from './protocol.mjs';

const { config } = settings();

/** markuplint picks rules by file name, so a URL becomes a plausible .html file name. */
function fileName(url) {
	if (url.endsWith('/')) return `${url}index.html`;
	if (url.endsWith('.html')) return url;
	return `${url}.html`;
}

serve(async ({ url, html }) => {
	const engine = await MLEngine.fromCode(html, {
		name: fileName(url),
		config: config ?? undefined,
		noSearchConfig: true,
	});
	const result = await engine.exec();
	if (!result) return [];
	return result.violations.map((v) => ({
		severity: v.severity,
		rule: v.ruleId,
		message: v.message,
		line: v.line,
		col: v.col,
	}));
});
