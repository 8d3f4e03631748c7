// markuplint for plugins/markuplint.py: request {url, html} -> [{severity, rule, message, line, col}].
// Settings: {config?: markuplint config, threads?: n}; without a config, markuplint's own
// defaults apply.
//
// What a page costs (markuplint 4.18, a 4 KB page, CPU): resolving the config, the rules and
// the schemas ~260 ms, parsing ~220 ms, the rules ~550 ms (require-accessible-name alone ~300).
// So each thread builds ONE engine and lints every page with it (`setCode` re-parses, the
// config and the rules stay resolved), and `threads` worker threads of this one process lint
// pages side by side (each with its own engine, one page at a time). A config whose effect
// depends on the file's name (overrides, excludeFiles, parser, specs) gets an engine per page.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

import { serve, settings } from './protocol.mjs';

/** Config keys that pick settings by the file's name: the engine cannot be kept for them. */
const PATH_KEYS = ['overrides', 'excludeFiles', 'parser', 'specs'];

/** markuplint picks rules by file name, so a URL becomes a plausible .html file name. */
function fileName(url) {
	if (url.endsWith('/')) return `${url}index.html`;
	if (url.endsWith('.html')) return url;
	return `${url}.html`;
}

/**
 * A lint function for one page at a time, reusing its engine from page to page. markuplint is
 * loaded here, not at the top: with threads, the main thread only hands pages on, and loading
 * it there too cost ~1.3 s of CPU at every start of the process.
 */
async function linter(config) {
	const { MLEngine } = await import('markuplint');
	const perPage = config != null && PATH_KEYS.some((key) => key in config);
	let engine = null;
	return async ({ url, html }) => {
		let result;
		try {
			if (engine === null) {
				const fresh = await MLEngine.fromCode(html, {
					name: fileName(url),
					config: config ?? undefined,
					noSearchConfig: true,
				});
				result = await fresh.exec();
				if (!perPage && result) engine = fresh;
			} else {
				await engine.setCode(html);
				result = await engine.exec();
			}
		} catch (error) {
			engine = null; // whatever state it was left in, the next page starts afresh
			throw error;
		}
		if (!result) return [];
		return result.violations.map((v) => ({
			severity: v.severity,
			rule: v.ruleId,
			message: v.message,
			line: v.line,
			col: v.col,
		}));
	};
}

/** Worker threads, each linting one page at a time; a thread that dies is replaced. */
class Threads {
	constructor(count, config) {
		this.config = config;
		this.idle = [];
		this.failures = 0; // threads in a row that died before answering
		for (let i = 0; i < count; i += 1) this.spawn();
	}

	spawn() {
		const worker = new Worker(new URL(import.meta.url), { workerData: { config: this.config } });
		worker.job = null;
		worker.on('message', ({ result, error }) => {
			const { resolve, reject } = worker.job;
			worker.job = null;
			worker.answered = true;
			this.failures = 0;
			this.idle.push(worker);
			if (error === undefined) resolve(result);
			else reject(new Error(error));
		});
		worker.on('error', (error) => {
			worker.failure = error;
		});
		worker.on('exit', (code) => {
			this.idle = this.idle.filter((other) => other !== worker);
			worker.job?.reject(new Error(`markuplint thread exited with code ${code}: ${String(worker.failure?.stack ?? worker.failure ?? '')}`));
			worker.job = null;
			this.failures = worker.answered ? 0 : this.failures + 1;
			if (this.failures >= 3) {
				// a thread that cannot start (a broken install): the process ends, Python says why
				process.stderr.write(`markuplint threads keep dying: ${String(worker.failure?.stack ?? worker.failure)}\n`);
				process.exit(1);
			}
			this.spawn();
		});
		this.idle.push(worker);
	}

	/** serve() runs at most `count` requests at once, so a thread is idle for each. */
	lint(request) {
		const worker = this.idle.shift();
		return new Promise((resolve, reject) => {
			worker.job = { resolve, reject };
			worker.postMessage({ url: request.url, html: request.html });
		});
	}
}

if (isMainThread) {
	const { config, threads = 1 } = settings();
	if (threads > 1) {
		const pool = new Threads(threads, config);
		serve((request) => pool.lint(request), { concurrency: threads });
	} else {
		serve(await linter(config), { concurrency: 1 });
	}
} else {
	console.log = console.error; // a thread's stdout is the process's: answers only
	console.info = console.error;
	console.debug = console.error;
	const lint = await linter(workerData.config);
	parentPort.on('message', async (request) => {
		try {
			parentPort.postMessage({ result: await lint(request) });
		} catch (error) {
			parentPort.postMessage({ error: String(error?.stack ?? error) });
		}
	});
}
