// Module resolution hooks of the workers (registered by register.mjs): a bare import that Node
// does not find from the importing file is looked up in the node_modules directory the Python
// side found (NITPICKER_NODE_MODULES, or the checkout's), so the worker scripts also run when
// installed away from the checkout.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

let fallback;

export async function initialize(nodeModules) {
	if (nodeModules) fallback = pathToFileURL(join(nodeModules, 'resolve-from-here.mjs')).href;
}

export async function resolve(specifier, context, nextResolve) {
	try {
		return await nextResolve(specifier, context);
	} catch (error) {
		const bare = !/^(\.|\/|[a-z][a-z0-9+.-]*:)/i.test(specifier);
		if (!fallback || !bare || error?.code !== 'ERR_MODULE_NOT_FOUND') throw error;
		return nextResolve(specifier, { ...context, parentURL: fallback });
	}
}
