// Lint and format for the whole tree: `npm run lint` checks, `npm run lint:fix` rewrites.
// Formatting is dprint through @effect/eslint-plugin, with the settings of Effect's own repositories.
import effect from "@effect/eslint-plugin"
import js from "@eslint/js"
import simpleImportSort from "eslint-plugin-simple-import-sort"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "bench/.data/**", "test/fixtures/**", "scripts/*.cjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  ...effect.configs.dprint,
  {
    files: ["**/*.ts", "**/*.mjs", "**/*.mts"],
    plugins: { "simple-import-sort": simpleImportSort },
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: {
        process: "readonly",
        Buffer: "readonly",
        console: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setImmediate: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        URL: "readonly",
        TextDecoder: "readonly",
        TextEncoder: "readonly",
        fetch: "readonly",
        AbortController: "readonly",
        __dirname: "readonly",
        require: "readonly",
        module: "readonly",
        structuredClone: "readonly",
        queueMicrotask: "readonly",
        performance: "readonly",
        WritableStream: "readonly",
        ReadableStream: "readonly"
      }
    },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force",
          "module.sortImportDeclarations": "maintain"
        }
      }],
      "simple-import-sort/imports": "error",
      "simple-import-sort/exports": "error",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        caughtErrors: "none"
      }],
      "@typescript-eslint/no-require-imports": "off",
      "@typescript-eslint/consistent-type-imports": ["error", {
        fixStyle: "inline-type-imports",
        disallowTypeAnnotations: false
      }],
      "require-yield": "off",
      "no-control-regex": "off",
      "no-empty": ["error", { allowEmptyCatch: true }]
    }
  },
  {
    // The house's size rules (issue 21): a file is walked by its name, a function read at once.
    files: ["src/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "max-lines": ["error", { max: 450 }],
      "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }]
    }
  }
)
