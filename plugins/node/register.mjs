// Loaded with `node --import` before a worker script: registers resolve.mjs.
import { register } from 'node:module';

register('./resolve.mjs', import.meta.url, { data: process.env.NITPICKER_NODE_MODULES });
