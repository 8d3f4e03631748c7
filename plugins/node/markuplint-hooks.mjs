// Module hooks of the workers (registered by register.mjs): three of markuplint's costs on a
// large page, each paid once instead of again and again. Each is a narrow fix of one function of one module,
// made as the module is loaded; a module whose text is not as written here (another
// markuplint version) is left as it is. tests/test_plugin_markuplint_engine.py checks that
// whole pages get the same violations, at the same lines and columns, with and without them;
// bench/README.md has the profile they come from.
//
// 1. @markuplint/parser-utils `getPosition(rawCode, offset)` found a token's line and column
//    by `rawCode.slice(0, offset).split('\n')`: a copy and a split of the document up to the
//    token, for every token (the parser passes the page's whole source). O(n²) in the page's
//    length, and the garbage of those copies on top. Here: the offset is looked up, by binary
//    search, in the positions of the source's line breaks, found once per source (the last
//    few kept).
// 2. @markuplint/ml-spec `getPermittedRoles(specs, localName, namespace, version, matches)`
//    merged the permitted role lists with `mergeArray` (a `findIndex` over the list so far,
//    lower-casing every name, for each role: ~80 roles for an element that permits any) every
//    time an element's role was computed — and it is computed again for every ancestor of every
//    element the accessibility rules look at. The list depends only on the element's ARIA
//    definition (its implicit role and permitted roles, after its conditions), so it is
//    computed once per definition and copied out.
// 3. @markuplint/selector built a new `Ruleset` (each of its selectors parsed into a structure)
//    for the argument of `:not()`, `:is()`, `:has()`, `:closest()` … every time such a
//    pseudo-class was matched against an element: the presets' selectors match every element
//    of the page. A ruleset is not changed once built, so it is built once per pseudo-class
//    node (per `extended` and depth) and reused.

const PATCHES = [
	{
		target: '/@markuplint/parser-utils/lib/get-location.js',
		replace: [['export function getPosition(rawCodeFragment, startOffset) {',
			'function scanningGetPosition(rawCodeFragment, startOffset) {']],
		append: `
const LINE_BREAKS_KEPT = 8;
const lineBreaks = new Map();
function lineBreaksOf(source) {
    let found = lineBreaks.get(source);
    if (found === undefined) {
        found = [];
        for (let at = source.indexOf('\\n'); at !== -1; at = source.indexOf('\\n', at + 1)) found.push(at);
        if (lineBreaks.size >= LINE_BREAKS_KEPT) lineBreaks.delete(lineBreaks.keys().next().value);
        lineBreaks.set(source, found);
    }
    return found;
}
export function getPosition(rawCodeFragment, startOffset) {
    if (typeof rawCodeFragment !== 'string' || rawCodeFragment.length < 2048
        || !Number.isInteger(startOffset) || startOffset < 0) {
        return scanningGetPosition(rawCodeFragment, startOffset);
    }
    const end = Math.min(startOffset, rawCodeFragment.length);
    const breaks = lineBreaksOf(rawCodeFragment);
    let low = 0;
    let high = breaks.length;
    while (low < high) {
        const middle = (low + high) >> 1;
        if (breaks[middle] < end) low = middle + 1;
        else high = middle;
    }
    return { line: low + 1, column: low === 0 ? end + 1 : end - breaks[low - 1] };
}
`,
	},
	{
		target: '/@markuplint/ml-spec/lib/algorithm/aria/get-permitted-roles-spec.js',
		replace: [
			['export function getPermittedRoles(specs, localName, namespace, version, matches) {',
				'function permittedRolesOfARIA(specs, version, aria) {'],
			['    const aria = getARIA(specs, localName, namespace, version, matches);\n    if (!aria) {\n        return [];\n    }\n', ''],
		],
		append: `
const permittedRolesKept = new WeakMap();
export function getPermittedRoles(specs, localName, namespace, version, matches) {
    const aria = getARIA(specs, localName, namespace, version, matches);
    if (!aria) {
        return [];
    }
    let byVersion = permittedRolesKept.get(specs);
    if (byVersion === undefined) {
        byVersion = new Map();
        permittedRolesKept.set(specs, byVersion);
    }
    let byPermitted = byVersion.get(version);
    if (byPermitted === undefined) {
        byPermitted = new Map();
        byVersion.set(version, byPermitted);
    }
    let byImplicit = byPermitted.get(aria.permittedRoles);
    if (byImplicit === undefined) {
        byImplicit = new Map();
        byPermitted.set(aria.permittedRoles, byImplicit);
    }
    let roles = byImplicit.get(aria.implicitRole);
    if (roles === undefined) {
        roles = permittedRolesOfARIA(specs, version, aria);
        byImplicit.set(aria.implicitRole, roles);
    }
    return roles.map(role => (typeof role === 'object' && role !== null ? { ...role } : role));
}
`,
	},
	{
		target: '/@markuplint/selector/lib/selector.js',
		replace: [['new Ruleset(pseudo.nodes, extended, depth + 1)',
			'pseudoRuleset(pseudo, extended, depth + 1)', 'all']],
		append: `
const pseudoRulesets = new WeakMap();
function pseudoRuleset(pseudo, extended, depth) {
    let byExtended = pseudoRulesets.get(pseudo);
    if (byExtended === undefined) {
        byExtended = new Map();
        pseudoRulesets.set(pseudo, byExtended);
    }
    let byDepth = byExtended.get(extended);
    if (byDepth === undefined) {
        byDepth = new Map();
        byExtended.set(extended, byDepth);
    }
    let ruleset = byDepth.get(depth);
    if (ruleset === undefined) {
        ruleset = new Ruleset(pseudo.nodes, extended, depth);
        byDepth.set(depth, ruleset);
    }
    return ruleset;
}
`,
	},
];

export async function load(url, context, nextLoad) {
	const loaded = await nextLoad(url, context);
	const patch = PATCHES.find(({ target }) => url.endsWith(target));
	if (patch === undefined || loaded.source == null) return loaded;
	let source = String(loaded.source);
	for (const [written, instead, all] of patch.replace) {
		if (!source.includes(written)) return loaded; // another version: as it is
		source = all ? source.replaceAll(written, instead) : source.replace(written, instead);
	}
	// what was patched, for the tests: (globalThis.nitpickerMarkuplintPatches ??= []) names it
	const mark = `\n(globalThis.nitpickerMarkuplintPatches ??= []).push(${JSON.stringify(patch.target)});\n`;
	return { ...loaded, source: source + patch.append + mark };
}
