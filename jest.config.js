// TypeScript is compiled by swc (types are checked once by `npm run typecheck`, not per test file). execa (and its
// dependency tree) ships ESM only; jest runs CommonJS. Those packages are transformed by
// swc; the list is computed from execa's dependency tree so an upgrade does not silently break tests.
const fs = require('node:fs');
const path = require('node:path');

function esmPackagesUnder(root) {
  const seen = new Set();
  const esm = new Set();
  const visit = (name, from) => {
    let dir = from;
    let pkgFile;
    for (;;) {
      pkgFile = path.join(dir, 'node_modules', name, 'package.json');
      if (fs.existsSync(pkgFile) || dir === __dirname) break;
      dir = path.dirname(dir);
    }
    if (!fs.existsSync(pkgFile) || seen.has(pkgFile)) return;
    seen.add(pkgFile);
    const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
    if (pkg.type === 'module') esm.add(name);
    for (const dep of Object.keys(pkg.dependencies ?? {})) visit(dep, path.dirname(pkgFile));
  };
  visit(root, __dirname);
  return [...esm];
}

const esmOnly = esmPackagesUnder('execa').map((n) => n.replace(/[/\\^$*+?.()|[\]{}]/g, '\\$&'));

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testTimeout: 60_000,
  reporters: ['default', '<rootDir>/test/setup/summary-reporter.js'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } }],
    '^.+\\.m?js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // unicorn-magic exports only an "import" condition, which jest's CommonJS resolver does not match.
  moduleNameMapper: { '^unicorn-magic$': '<rootDir>/node_modules/unicorn-magic/node.js' },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
};
