// ESLint plugin: functions stay short, by rule. `vero/max-lines-per-function` is ESLint's own
// max-lines-per-function (60 lines, blank and comment lines not counted) over the product's code, less the
// functions named in lint/long-functions.json with their line counts: the ones that were already longer when the
// rule came. The list can only shrink: an allowed function that grows past its count is an error ("grew"); an
// entry whose function is now short enough, or gone, is an error too ("stale"), so a function that is split
// leaves the list in the same change; and a new long function cannot join it without a visible edit that
// test/unit/long-functions.test.ts caps.
'use strict';
const path = require('node:path');
const { builtinRules } = require('eslint/use-at-your-own-risk');

const MAX_LINES = 60;
const CORE_OPTIONS = { max: MAX_LINES, skipBlankLines: true, skipComments: true, IIFEs: true };
const ALLOWANCE_FILE = path.join(__dirname, 'long-functions.json');
const ROOT = path.dirname(__dirname);

/**
 * The allowance: "file.ts: Name" keys, as ESLint names the function ("Async function 'x'", "Method 'y'"), each
 * with the most lines it may have (its count when it was listed, or lower).
 */
function loadAllowance() {
  return new Map(Object.entries(require(ALLOWANCE_FILE).allowed));
}

/** The key of one report: the file relative to the repository, and the function's name as ESLint gives it. */
function allowanceKey(filename, functionName) {
  return `${path.relative(ROOT, filename).split(path.sep).join('/')}: ${functionName}`;
}

const coreRule = builtinRules.get('max-lines-per-function');

const maxLinesPerFunction = {
  meta: {
    type: 'suggestion',
    schema: [],
    messages: {
      exceed: '{{name}} has {{lineCount}} lines (at most {{maxLines}}): split it into named steps',
      stale: '{{key}} is in lint/long-functions.json but is no longer over {{maxLines}} lines (or is gone): remove it',
      grew: '{{name}} has {{lineCount}} lines, more than the {{allowed}} lint/long-functions.json allows it: split out the new lines',
    },
  },
  create(context) {
    const allowance = loadAllowance();
    const seen = new Set();
    const filtered = Object.create(context, {
      options: { value: [CORE_OPTIONS] },
      report: {
        value(descriptor) {
          const key = allowanceKey(context.filename, descriptor.data.name);
          const allowed = allowance.get(key);
          if (allowed === undefined) return context.report(descriptor);
          seen.add(key);
          if (descriptor.data.lineCount > allowed)
            context.report({ ...descriptor, messageId: 'grew', data: { ...descriptor.data, allowed } });
        },
      },
    });
    const listeners = coreRule.create(filtered);
    const prefix = allowanceKey(context.filename, '');
    return {
      ...listeners,
      'Program:exit'(node) {
        for (const key of allowance.keys())
          if (key.startsWith(prefix) && !seen.has(key)) context.report({ node, messageId: 'stale', data: { key, maxLines: MAX_LINES } });
      },
    };
  },
};

module.exports = { MAX_LINES, ALLOWANCE_FILE, loadAllowance, rules: { 'max-lines-per-function': maxLinesPerFunction } };
