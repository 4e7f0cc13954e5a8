// What `/permissions` says (terminal and editor alike): the remembered "always" answers of the
// project, numbered for `/permissions rm N`, each in the words of what it covers; and, for
// `/permissions import`, the rows of the project's own `.mm/permissions.json`, which of them
// mm would import into the user's file, and why not the others.
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { grantsNothing, type Scope, scopeCovers } from "../approvals/ApprovalScope"
import { commandReader } from "../approvals/CommandReader"
import { importable, type ProjectRow, readProjectApprovals } from "../approvals/ProjectApprovals"
import {
  PROJECT_PERMISSIONS_FILE,
  type RememberedApprovalsShape,
  type RememberedState,
  sameScope
} from "../approvals/RememberedApprovals"
import { shownHomePath } from "../lib/UserState"
import type { Conversation } from "../sessions/Conversation"
import { sanitize } from "./Sanitize"

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
    case "Domain":
      return `web_fetch: ${scopeCovers(scope, cwd)}`
  }
}

/** The listing: a head line, then `  N. what it covers`; the problem line when the file was refused. */
const permissionsListing = (state: RememberedState, cwd: string, ignored: string | undefined): string => {
  if (state.problem !== undefined) return state.problem
  const where = shownHomePath(state.where)
  const lines = state.scopes.length === 0
    ? [`no remembered approvals (an [a]lways answer is kept in ${where})`]
    : [
      `${state.scopes.length} remembered approval(s), in ${where} — /permissions rm N revokes one`,
      ...state.scopes.map((scope, i) => {
        const nothing = grantsNothing(scope)
        return `  ${i + 1}. ${scopeLine(scope, cwd)}${nothing === undefined ? "" : `, which ${nothing}`}`
      })
    ]
  return [...lines, ...(ignored === undefined ? [] : [ignored])].join("\n")
}

const PERMISSIONS_USAGE =
  "usage: /permissions, /permissions rm N (N from the listing), or /permissions import (the project's .mm/permissions.json)"

type PermissionsArgs =
  | { readonly _tag: "List" }
  | { readonly _tag: "Remove"; readonly n: number }
  | { readonly _tag: "Import"; readonly confirm: boolean }
  | { readonly _tag: "Usage" }

/** `/permissions` arguments: nothing (list), `rm N` (revoke), `import [confirm]`, or a usage line. */
const parsePermissionsArgs = (arg: string): PermissionsArgs => {
  const words = arg.trim().split(/\s+/).filter((w) => w !== "")
  if (words.length === 0) return { _tag: "List" }
  if (words.length === 2 && (words[0] === "rm" || words[0] === "revoke") && /^\d{1,4}$/.test(words[1])) {
    return { _tag: "Remove", n: Number(words[1]) }
  }
  if (words[0] === "import" && words.length === 1) return { _tag: "Import", confirm: false }
  if (words[0] === "import" && words.length === 2 && words[1] === "confirm") return { _tag: "Import", confirm: true }
  return { _tag: "Usage" }
}

/** Whether the arguments are `import confirm` (the editor's second step of an import). */
export const isImportConfirm = (arg: string): boolean => {
  const parsed = parsePermissionsArgs(arg)
  return parsed._tag === "Import" && parsed.confirm
}

const revokedLine = (n: number, scope: Scope, cwd: string): string =>
  `revoked ${n}: ${scopeLine(scope, cwd)} — it will be asked again`

/** What a `/permissions` command comes to: lines said, or an import's rows shown and waiting for the user's yes. */
export type PermissionsOutcome =
  | { readonly _tag: "Said"; readonly text: string; readonly failed: boolean }
  /** The rows of the project's file; `scopes` (never empty) would be imported once the user confirms. */
  | { readonly _tag: "ImportShown"; readonly text: string; readonly scopes: ReadonlyArray<Scope> }

/** One row of the project's file in the import listing: what becomes of it, what it covers, and why not. */
const importRowLine = (row: ProjectRow, i: number, kept: ReadonlyArray<Scope>, cwd: string): string => {
  if (row._tag === "Unknown") return `  ${i + 1}. refused  ${row.text} — not an approval mm knows`
  const covers = scopeLine(row.scope, cwd)
  if (row.why !== undefined) return `  ${i + 1}. refused  ${covers} — ${row.why}`
  return kept.some((s) => sameScope(s, row.scope))
    ? `  ${i + 1}. kept     ${covers} (already remembered)`
    : `  ${i + 1}. import   ${covers}`
}

/** `/permissions import`: the project file's rows and which would be imported; nothing is written. */
const importPlan = (remembered: RememberedApprovalsShape, cwd: string) =>
  Effect.gen(function*() {
    const reader = yield* commandReader
    const found = readProjectApprovals(cwd, reader.read)
    if (found._tag === "None") return said(`this project has no ${PROJECT_PERMISSIONS_FILE}: nothing to import`, false)
    if (found._tag === "Refused") return said(`${PROJECT_PERMISSIONS_FILE} ${found.why}: nothing to import`, true)
    const state = yield* remembered.read(cwd)
    if (state.problem !== undefined) return said(state.problem, true)
    const scopes = importable(found.rows).filter((scope) => !state.scopes.some((s) => sameScope(s, scope)))
    const head =
      `${PROJECT_PERMISSIONS_FILE} in this project holds ${found.rows.length} row(s); ${scopes.length} can be imported (only what mm would offer itself):`
    const text = sanitize(
      [head, ...found.rows.map((row, i) => importRowLine(row, i, state.scopes, cwd))].join("\n")
    )
    return scopes.length === 0
      ? said(`${text}\nnothing to import`, false)
      : ({ _tag: "ImportShown", text, scopes } as const)
  })

const said = (text: string, failed: boolean): PermissionsOutcome => ({ _tag: "Said", text, failed })

/** Adds the confirmed rows to the user's file: the line saying so, or why it stopped. */
export const importApprovals = (
  remembered: RememberedApprovalsShape,
  cwd: string,
  scopes: ReadonlyArray<Scope>
): Effect.Effect<{ readonly text: string; readonly failed: boolean }> =>
  Effect.gen(function*() {
    for (const scope of scopes) {
      const problem = yield* remembered.add(cwd, scope)
      if (problem !== undefined) return { text: problem, failed: true }
    }
    const { where } = yield* remembered.read(cwd)
    return {
      text: `imported ${scopes.length} approval(s) into ${
        shownHomePath(where)
      }; ${PROJECT_PERMISSIONS_FILE} is left as it is`,
      failed: false
    }
  })

/** What both façades do for `/permissions ARG`: the lines to show (a revoked scope also dropped from this session), or an import to confirm. */
export const permissionsCommand = (
  remembered: RememberedApprovalsShape,
  conversation: Conversation,
  arg: string
): Effect.Effect<PermissionsOutcome> =>
  Effect.gen(function*() {
    const cwd = conversation.cwd
    const parsed = parsePermissionsArgs(arg)
    if (parsed._tag === "Usage") return said(PERMISSIONS_USAGE, true)
    if (parsed._tag === "Import") return yield* importPlan(remembered, cwd)
    if (parsed._tag === "List") {
      const state = yield* remembered.read(cwd)
      return said(permissionsListing(state, cwd, yield* remembered.ignoredLine(cwd)), state.problem !== undefined)
    }
    const removed = yield* remembered.remove(cwd, parsed.n)
    if (removed._tag === "Left") return said(removed.left, true)
    const gone = JSON.stringify(removed.right)
    yield* Ref.update(conversation.allowed, (scopes) => scopes.filter((s) => JSON.stringify(s) !== gone))
    return said(revokedLine(parsed.n, removed.right, cwd), false)
  })
