// The worker side of plugins/_node.py: one JSON request per stdin line, one JSON answer per
// stdout line ({id, result} or {id, error}), answered in any order. stdout carries answers
// only: whatever a tool logs goes to stderr.
import { createInterface } from 'node:readline';

/**
 * Serve requests with `handle(request) -> result` until stdin closes, then exit once the
 * requests in flight are answered. At most `concurrency` requests run at once; the rest wait.
 */
export function serve(handle, { concurrency = Infinity } = {}) {
	console.log = console.error;
	console.info = console.error;
	console.debug = console.error;

	let running = 0;
	let closed = false;
	const waiting = [];

	const reply = (answer) => process.stdout.write(JSON.stringify(answer) + '\n');
	const finish = () => {
		if (closed && running === 0 && waiting.length === 0) process.exit(0);
	};
	const run = async (request) => {
		running += 1;
		try {
			reply({ id: request.id, result: await handle(request) });
		} catch (error) {
			reply({ id: request.id, error: String(error?.stack ?? error) });
		} finally {
			running -= 1;
			if (waiting.length > 0) run(waiting.shift());
			finish();
		}
	};

	const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
	lines.on('line', (line) => {
		if (line.trim() === '') return;
		let request;
		try {
			request = JSON.parse(line);
		} catch (error) {
			process.stderr.write(`not a JSON request: ${String(error)}\n`);
			return;
		}
		if (running < concurrency) run(request);
		else waiting.push(request);
	});
	lines.on('close', () => {
		closed = true;
		finish();
	});
}

/** The worker's settings: the JSON object given as its first argument. */
export function settings() {
	return JSON.parse(process.argv[2] ?? '{}');
}
