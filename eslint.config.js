// ESLint flat config: type-aware typescript-eslint rules plus the layer rules of docs/ARCHITECTURE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** An import pattern that matches a path segment naming one of `layers` (folder names are unique). */
const into = (layers, message) => ({ regex: `(^|/)(${layers.join('|')})(/|\\.js$|$)`, message });

/** post-call/: storage repositories and common/ only, and nothing of HTTP. */
const postCallLayer = [
  into(['sip', 'media', 'calls', 'providers', 'control-api', 'config', 'cli', 'gateway', 'main', 'cluster'], 'post-call/ uses storage repositories and common/; providers reach it through post-call-ports.ts.'),
  { regex: '^(koa|koa-body|@koa/.*)$', message: 'post-call/ is a domain module: the HTTP layer calls it, it knows nothing of HTTP.' },
];

/** Recordings are megabytes, and live calls' media shares the event loop. */
const noSyncFiles = (layer) => ({ regex: '^(node:)?fs$', message: `${layer} does file I/O through node:fs/promises only, never synchronously on the event loop.` });

/**
 * docs/CONSOLE.md: the console is browser code built apart; the server never imports it, and it
 * reaches the server only over HTTP (its API types are generated, not imported from src/).
 */
const noConsole = { regex: '(^|/)console/(src|index)', message: 'Server code never imports the browser console; it serves its build (dist/console).' };
const consoleLayer = { files: ['console/src/**'], patterns: [{ regex: '(^|/)(src|test|scripts)/|^node:', message: 'The console is browser code: it uses the API over HTTP and its generated types, nothing of the server.' }] };

/**
 * The dependency direction of docs/ARCHITECTURE.md, per folder. Matching import paths needs no
 * module resolver because every layer folder has a name no other folder uses.
 */
const layerRules = [
  { files: ['src/common/**'], patterns: [{ regex: '^\\.\\./', message: 'common/ is leaf code and imports nothing from src/.' }] },
  { files: ['src/engine/sip/**'], patterns: [into(['media', 'calls', 'providers', 'storage', 'control-api', 'post-call', 'config', 'cli', 'gateway', 'main', 'cluster'], 'engine/sip may only import common/.')] },
  { files: ['src/engine/media/**'], patterns: [into(['sip', 'calls', 'providers', 'storage', 'control-api', 'post-call', 'config', 'cli', 'gateway', 'main', 'cluster'], 'engine/media may only import common/.')] },
  {
    files: ['src/engine/calls/**'],
    patterns: [
      into(['providers', 'storage', 'control-api', 'post-call', 'config', 'cli', 'gateway', 'main', 'cluster'], 'engine/calls reaches providers and storage only through ports.ts.'),
      { regex: '(^|/)(sip|media)/(?!index\\.js$)', message: 'engine/calls imports sip/ and media/ only through their index.ts.' },
    ],
  },
  {
    files: ['src/providers/**'],
    patterns: [
      into(['sip', 'storage', 'control-api', 'config', 'cli', 'gateway', 'main', 'cluster'], 'providers/ may not import sip, storage or control-api.'),
      // The folder only: vendors' own files may be called post-call-….ts.
      { regex: '(^|/)post-call/', message: 'providers/ is what post-call/ receives through its ports; it may not import it.' },
    ],
  },
  { files: ['src/storage/**'], patterns: [into(['sip', 'media', 'providers', 'control-api', 'post-call', 'config', 'cli', 'gateway', 'main', 'cluster'], 'storage/ may not import engine internals or control-api.')] },
  { files: ['src/control-api/**'], patterns: [into(['sip', 'media', 'providers', 'config', 'cli', 'gateway', 'main', 'cluster'], 'control-api/ acts on calls only through engine/calls.')] },
  {
    files: ['src/events/**'],
    patterns: [
      into(['sip', 'media', 'calls', 'providers', 'control-api', 'post-call', 'config', 'cli', 'gateway', 'main', 'cluster'], 'events/ uses storage repositories and common/; calls reach it through its ports.'),
      { regex: '^(koa|koa-body|@koa/.*)$', message: 'events/ is a domain module: the HTTP layer serves it, it knows nothing of Koa.' },
    ],
  },
  // docs/CLUSTER.md "Live state in Redis": only the process roles (gateway/) and the CLI reach the cluster's state.
  { files: ['src/cluster/**'], ignores: ['src/cluster/**/*.test.ts'], patterns: [into(['engine', 'sip', 'media', 'calls', 'providers', 'storage', 'control-api', 'post-call', 'events', 'config', 'cli', 'gateway', 'main'], 'cluster/ imports common/ and the redis package only.')] },
  // Its tests hold the live list to the SQL one, so they may open a store.
  { files: ['src/cluster/**/*.test.ts'], patterns: [into(['engine', 'sip', 'media', 'calls', 'providers', 'control-api', 'post-call', 'events', 'config', 'cli', 'gateway', 'main'], 'cluster/ tests use common/ and storage/ only.')] },
  // Tests may set up files synchronously; the module itself may not.
  { files: ['src/post-call/**'], ignores: ['src/post-call/**/*.test.ts'], patterns: [...postCallLayer, noSyncFiles('post-call/')] },
  { files: ['src/post-call/**/*.test.ts'], patterns: postCallLayer },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**', 'coverage/**', 'data/**', 'scratch/**', 'console/src/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js', 'scripts/*.mjs', 'console/vite.config.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'error',
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'Use string-literal unions or as-const objects, not enum.' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Only src/config reads process.env.' }],
    },
  },
  // Every server file keeps out of the console; a layer's own block (later, so it wins) repeats it.
  { files: ['src/**', 'test/**', 'scripts/**', 'bench/**'], rules: { 'no-restricted-imports': ['error', { patterns: [noConsole] }] } },
  ...layerRules.map(({ files, ignores, patterns }) => ({ files, ...(ignores ? { ignores } : {}), rules: { 'no-restricted-imports': ['error', { patterns: [...patterns, noConsole] }] } })),
  { files: consoleLayer.files, rules: { 'no-restricted-imports': ['error', { patterns: consoleLayer.patterns }] } },
  {
    files: ['src/config/**', 'test/**', 'bench/**', 'scripts/**', '**/*.test.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['test/**', 'bench/**', 'scripts/**', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // tap awaits subtests itself; a floating t.test() is how tap is meant to be used.
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafePromises: [{ from: 'package', name: 'PromiseWithSubtest', package: '@tapjs/core' }] }],
    },
  },
  { files: ['eslint.config.js', 'scripts/*.mjs', 'console/vite.config.ts'], ...tseslint.configs.disableTypeChecked },
  { files: ['scripts/*.mjs'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
);
