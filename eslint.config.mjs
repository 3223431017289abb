import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    // services/gateway/assets: Redoc's published bundle, copied by the build (not our code).
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/generated/**',
      '.local/**',
      'coverage/**',
      'services/gateway/assets/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        require: 'readonly',
        module: 'writable',
        __dirname: 'readonly',
        Buffer: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The operator console's page script runs in the browser.
    files: ['services/gateway/console/**/*.js'],
    languageOptions: { sourceType: 'script', globals: { document: 'readonly', EventSource: 'readonly' } },
  },
);
