/**
 * The user's hooks (agent.yaml's `hooks:`, a project's only once trusted): the commands of an
 * event whose matcher takes it, run side by side, their answers read as one. The service also
 * keeps which conversations had their `SessionStart` in this run.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import { AppConfig } from "../config/Config"
import type { HookEvent, HookGroupConfig } from "../config/ConfigSchema"
import { truncateOutput } from "../tools/Truncate"
import {
  type HookDetails,
  hookInput,
  type HookPlace,
  matcherTakes,
  needsRegex,
  type RegexTest,
  subjectsOf
} from "./HookInput"
import { combined, type HookOutcome, NOTHING, outcomeOf } from "./HookOutput"
import { runHookCommand } from "./HookRunner"

/** Seconds a hook may run when its `timeout` does not say (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT = 60

export type SessionSource = "startup" | "resume" | "clear" | "compact"

export interface HooksShape {
  /** Whether any hook is configured for `event` (nothing is prepared for an event without one). */
  readonly has: (event: HookEvent) => boolean
  /** Runs the hooks of the event `details` names whose matcher takes it, in `place`; never fails. */
  readonly run: (place: HookPlace, details: HookDetails) => Effect.Effect<HookOutcome>
  /**
   * The `SessionStart` source of a conversation's turn: `startup` or `clear` for a new one
   * (the first of the run, or one after another), `resume` for one with a history, `compact`
   * after a compaction; undefined when it had its `SessionStart` in this run already.
   */
  readonly sessionSource: (conversationId: string, hasHistory: boolean) => SessionSource | undefined
  /** Says that a conversation was compacted: its next turn runs `SessionStart` with source `compact`. */
  readonly compacted: (conversationId: string) => void
}

export class Hooks extends Context.Tag("mm/Hooks")<Hooks, HooksShape>() {}

/** RE2's test, loaded the first time a matcher is a regular expression (dist/mm-regex.cjs). */
let regexTest: RegexTest | undefined
const patterns = new Map<string, { test: (subject: string) => boolean } | undefined>()

const loadRegex = Effect.promise(() => import("./HookRegex")).pipe(
  Effect.map(({ RE2JS }): RegexTest => (pattern, subject) => {
    if (!patterns.has(pattern)) {
      try {
        patterns.set(pattern, RE2JS.compile(pattern))
      } catch {
        patterns.set(pattern, undefined)
      }
    }
    return patterns.get(pattern)?.test(subject) ?? false
  })
)

const regexFor = (groups: ReadonlyArray<HookGroupConfig>) =>
  groups.some((group) => needsRegex(group.matcher)) && regexTest === undefined
    ? Effect.map(loadRegex, (test) => (regexTest = test))
    : Effect.succeed(regexTest)

/** The matchers of `groups` that are not valid regular expressions (known once they were tried). */
const badMatchers = (groups: ReadonlyArray<HookGroupConfig>): Array<string> =>
  groups.flatMap((group) => {
    const pattern = group.matcher?.trim() ?? ""
    return needsRegex(pattern) && patterns.has(pattern) && patterns.get(pattern) === undefined ? [pattern] : []
  })

/** The hooks service over the configuration in force. */
export const makeHooks = Effect.map(AppConfig, ({ config }): HooksShape => {
  const configured = config.hooks
  const maxOutput = config.maxOutput
  const started = new Set<string>()
  const pending = new Map<string, SessionSource>()
  let anyStarted = false
  const saidBad = new Set<string>()
  const has = (event: HookEvent) => (configured[event] ?? []).some((group) => group.hooks.length > 0)
  return {
    has,
    run: Effect.fn("Hooks.run")(function*(place: HookPlace, details: HookDetails) {
      const event = details.event
      const groups = configured[event] ?? []
      if (groups.length === 0) return NOTHING
      const subjects = subjectsOf(details)
      const regex = yield* regexFor(groups)
      const commands = groups.filter((group) => matcherTakes(group.matcher, subjects, regex)).flatMap((group) =>
        group.hooks
      )
      // the same command twice (from the user's file and the project's) runs once, as in Claude Code
      const unique = [...new Map(commands.map((hook) => [hook.command, hook])).values()]
      const stdin = JSON.stringify(hookInput(place, details))
      const outcomes = yield* Effect.forEach(unique, (hook) =>
        Effect.map(
          runHookCommand({
            command: hook.command,
            stdin,
            cwd: place.cwd,
            projectDir: place.cwd,
            timeoutSeconds: hook.timeout ?? DEFAULT_HOOK_TIMEOUT
          }),
          (run) => outcomeOf(event, hook.command, run)
        ), { concurrency: "unbounded" })
      // what a hook gives the model is cut as a tool's output is (maxOutput characters)
      const together = combined(outcomes)
      const all = { ...together, context: together.context.map((text) => truncateOutput(text, maxOutput)) }
      // a matcher that is not a valid regular expression: one line, once per run, and its group never runs
      const bad = badMatchers(groups).filter((pattern) => !saidBad.has(`${event}\0${pattern}`))
      for (const pattern of bad) saidBad.add(`${event}\0${pattern}`)
      const lines = bad.map((pattern) =>
        `hook ${event}: the matcher ${JSON.stringify(pattern)} is not a valid regular expression`
      )
      return lines.length === 0 ? all : { ...all, lines: [...lines, ...all.lines] }
    }),
    sessionSource: (id, hasHistory) => {
      const waiting = pending.get(id)
      if (waiting !== undefined) {
        pending.delete(id)
        return waiting
      }
      if (started.has(id)) return undefined
      started.add(id)
      const source: SessionSource = hasHistory ? "resume" : anyStarted ? "clear" : "startup"
      anyStarted = true
      return source
    },
    compacted: (id) => {
      if (started.has(id)) pending.set(id, "compact")
    }
  }
})
