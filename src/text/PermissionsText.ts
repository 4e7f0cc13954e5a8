// What `/permissions` says (terminal and editor alike): the remembered "always" answers of the
// project, numbered for `/permissions rm N`, each in the words of what it covers.
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { type Scope, scopeCovers } from "../approvals/ApprovalScope"
import type { RememberedApprovalsShape, RememberedState } from "../approvals/RememberedApprovals"
import type { Conversation } from "../sessions/Conversation"

/** One remembered answer in words: `bash: "npm test" with any other arguments`. */
const scopeLine = (scope: Scope, cwd: string): string => {
  switch (scope._tag) {
    case "CommandPrefix":
      return `bash: ${scopeCovers(scope, cwd)}`
    case "ExactCommand":
      return `bash, this exact command only: ${scope.command.replace(/\n/g, "⏎")}`
    case "File": {
      const relative = path.relative(cwd, scope.path)
      return `file: ${relative.startsWith("..") || path.isAbsolute(relative) ? scope.path : relative}`
    }
    case "Project":
      return `edits: ${scopeCovers(scope, cwd)}`
    case "Tool":
      return `tool: ${scopeCovers(scope, cwd)}`
  }
}

/** The listing: a head line, then `  N. what it covers`; the problem line when the file was refused. */
const permissionsListing = (state: RememberedState, cwd: string): string => {
  if (state.problem !== undefined) return state.problem
  if (state.scopes.length === 0) {
    return `no remembered approvals (an [a]lways answer is kept ${
      state.where.startsWith("in memory") ? state.where : `in ${state.where}`
    })`
  }
  return [
    `${state.scopes.length} remembered approval(s), ${
      state.where.startsWith("in memory") ? state.where : `in ${state.where}`
    } — /permissions rm N revokes one`,
    ...state.scopes.map((scope, i) => `  ${i + 1}. ${scopeLine(scope, cwd)}`)
  ].join("\n")
}

const PERMISSIONS_USAGE = "usage: /permissions, or /permissions rm N (N from the listing)"

/** `/permissions` arguments: nothing (list), `rm N` (revoke), or a usage line. */
const parsePermissionsArgs = (
  arg: string
): { readonly _tag: "List" } | { readonly _tag: "Remove"; readonly n: number } | { readonly _tag: "Usage" } => {
  const words = arg.trim().split(/\s+/).filter((w) => w !== "")
  if (words.length === 0) return { _tag: "List" }
  if (words.length === 2 && (words[0] === "rm" || words[0] === "revoke") && /^\d{1,4}$/.test(words[1])) {
    return { _tag: "Remove", n: Number(words[1]) }
  }
  return { _tag: "Usage" }
}

const revokedLine = (n: number, scope: Scope, cwd: string): string =>
  `revoked ${n}: ${scopeLine(scope, cwd)} — it will be asked again`

/** What both façades do for `/permissions ARG`: the lines to show, the revoked scope also dropped from this session. */
export const permissionsCommand = (
  remembered: RememberedApprovalsShape,
  conversation: Conversation,
  arg: string
): Effect.Effect<{ readonly text: string; readonly failed: boolean }> =>
  Effect.gen(function*() {
    const cwd = conversation.cwd
    const parsed = parsePermissionsArgs(arg)
    if (parsed._tag === "Usage") return { text: PERMISSIONS_USAGE, failed: true }
    if (parsed._tag === "List") {
      const state = yield* remembered.read(cwd)
      return { text: permissionsListing(state, cwd), failed: state.problem !== undefined }
    }
    const removed = yield* remembered.remove(cwd, parsed.n)
    if (removed._tag === "Left") return { text: removed.left, failed: true }
    const gone = JSON.stringify(removed.right)
    yield* Ref.update(conversation.allowed, (scopes) => scopes.filter((s) => JSON.stringify(s) !== gone))
    return { text: revokedLine(parsed.n, removed.right, cwd), failed: false }
  })
