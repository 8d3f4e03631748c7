// Loaded with `node --import` before a worker script: registers resolve.mjs, and
// markuplint-hooks.mjs (three of markuplint's costs on a large page, paid once).
import { register } from 'node:module';

register('./resolve.mjs', import.meta.url, { data: process.env.NITPICKER_NODE_MODULES });
register('./markuplint-hooks.mjs', import.meta.url);
