// ESLint flat config: type-aware typescript-eslint rules plus the layer rules of docs/ARCHITECTURE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Each zone forbids `target` (a layer) from importing `from` (layers above or beside it). */
const layerZones = [
  { target: './src/common', from: './src', except: ['./common'], message: 'common/ is leaf code and imports nothing from src/.' },
  { target: './src/engine/sip', from: ['./src/engine/media', './src/engine/calls', './src/providers', './src/storage', './src/control-api', './src/config', './src/cli', './src/main.ts'], message: 'engine/sip may only import common/.' },
  { target: './src/engine/media', from: ['./src/engine/sip', './src/engine/calls', './src/providers', './src/storage', './src/control-api', './src/config', './src/cli', './src/main.ts'], message: 'engine/media may only import common/.' },
  { target: './src/engine/calls', from: ['./src/providers', './src/storage', './src/control-api', './src/cli', './src/main.ts'], message: 'engine/calls reaches providers and storage only through ports.ts.' },
  { target: './src/providers', from: ['./src/engine/sip', './src/storage', './src/control-api', './src/cli', './src/main.ts'], message: 'providers/ may not import sip, storage or control-api.' },
  { target: './src/storage', from: ['./src/engine/sip', './src/engine/media', './src/providers', './src/control-api', './src/cli', './src/main.ts'], message: 'storage/ may not import engine internals or control-api.' },
  { target: './src/control-api', from: ['./src/engine/sip', './src/engine/media', './src/providers', './src/cli', './src/main.ts'], message: 'control-api/ acts on calls only through engine/calls.' },
];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.tap/**', 'coverage/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['eslint.config.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })] },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'error',
      'no-restricted-syntax': ['error', { selector: 'TSEnumDeclaration', message: 'Use string-literal unions or as-const objects, not enum.' }],
      'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Only src/config reads process.env.' }],
      'import-x/no-restricted-paths': ['error', { zones: layerZones }],
      'import-x/no-cycle': ['error', { maxDepth: 8 }],
    },
  },
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
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
