// ESLint plugin: functions stay short, by rule. `vero/max-lines-per-function` is ESLint's own
// max-lines-per-function (60 lines, blank and comment lines not counted) over the product's code, less the
// functions named in lint/long-functions.json: the ones that were already longer when the rule came. The list
// can only shrink: an entry whose function is now short enough, or gone, is itself an error ("stale"), so a
// function that is split must leave the list in the same change, and a new long function cannot join it
// without a visible edit that test/unit/long-functions.test.ts caps.
'use strict';
const path = require('node:path');
const { builtinRules } = require('eslint/use-at-your-own-risk');

const MAX_LINES = 60;
const CORE_OPTIONS = { max: MAX_LINES, skipBlankLines: true, skipComments: true, IIFEs: true };
const ALLOWANCE_FILE = path.join(__dirname, 'long-functions.json');
const ROOT = path.dirname(__dirname);

/** The allowance: "file.ts: Name" keys, as ESLint names the function ("Async function 'x'", "Method 'y'"). */
function loadAllowance() {
  return new Set(require(ALLOWANCE_FILE).allowed);
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
          if (allowance.has(key)) seen.add(key);
          else context.report(descriptor);
        },
      },
    });
    const listeners = coreRule.create(filtered);
    const prefix = allowanceKey(context.filename, '');
    return {
      ...listeners,
      'Program:exit'(node) {
        for (const key of allowance)
          if (key.startsWith(prefix) && !seen.has(key)) context.report({ node, messageId: 'stale', data: { key, maxLines: MAX_LINES } });
      },
    };
  },
};

module.exports = { MAX_LINES, ALLOWANCE_FILE, loadAllowance, rules: { 'max-lines-per-function': maxLinesPerFunction } };
