import * as Effect from "effect/Effect"
import type { LoadedConfig } from "../Config"

export const runAcp = (_loaded: LoadedConfig) =>
  Effect.sync(() => {
    process.stderr.write("[acp] mm acp is not built yet\n")
    process.exitCode = 1
  })
