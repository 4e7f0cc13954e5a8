// What /permissions lists: each remembered answer in the words of what it covers, and a row
// that grants nothing whatever it says (a Tool row naming a built-in tool) said to be so.
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import type { Scope } from "../../src/approvals/ApprovalScope"
import type { RememberedApprovalsShape } from "../../src/approvals/RememberedApprovals"
import type { Conversation } from "../../src/sessions/Conversation"
import { permissionsCommand } from "../../src/text/PermissionsText"

const rememberedOf = (scopes: ReadonlyArray<Scope>): RememberedApprovalsShape => ({
  read: () => Effect.succeed({ scopes, where: "/state/mm/projects/x/permissions.json", problem: undefined }),
  add: () => Effect.succeed(undefined),
  remove: () => Effect.succeed(Either.left("not here")),
  ignoredLine: () => Effect.succeed(undefined)
})

describe("/permissions", () => {
  it.effect("lists a Tool row for bash as covering nothing, and an MCP tool's as it is", () =>
    Effect.gen(function*() {
      const remembered = rememberedOf([{ _tag: "Tool", name: "bash" }, { _tag: "Tool", name: "mcp__docs__search" }])
      const outcome = yield* permissionsCommand(remembered, { cwd: "/p" } as Conversation, "")
      expect(outcome._tag === "Said" ? outcome.text.split("\n") : []).toEqual([
        "2 remembered approval(s), in /state/mm/projects/x/permissions.json — /permissions rm N revokes one",
        "  1. tool: every bash call, which covers nothing: bash is built in, its calls are asked one by one",
        "  2. tool: every mcp__docs__search call"
      ])
    }))
})
