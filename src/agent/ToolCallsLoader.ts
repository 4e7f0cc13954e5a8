import * as Effect from "effect/Effect"

/**
 * The code that runs a tool call — the tools themselves, the approvals' reading of a command,
 * the previews, the sandbox's wrapping — loaded when the first call comes rather than at
 * start: a question answered without a tool never evaluates it (`import()` keeps it out of
 * the bundle's eager graph). Loaded once; every later call finds it there.
 */
export const toolCalls = Effect.promise(() => import("./ToolCalls"))
