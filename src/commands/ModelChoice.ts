/**
 * Choosing the model of a conversation by name, as the terminal's `/model` does (the editor
 * chooses it in its selector, acp/Settings.ts): the choice is the conversation's
 * `settings.model`, kept in its session file as the editor's is, so that a resumed
 * conversation goes on with it.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import type { Conversation } from "../sessions/Conversation"

/** The configured model first, then the others the server lists. */
export const modelList = (configured: string, listed: ReadonlyArray<string>): ReadonlyArray<string> => [
  configured,
  ...listed.filter((id) => id !== configured)
]

/** `/model` alone: each model a line, the one in use marked. */
export const modelListing = (
  configured: string,
  listed: ReadonlyArray<string>,
  current: string
): string => {
  if (listed.length === 0) {
    return `model in use: ${current} (the server lists no models: /model NAME takes any name)`
  }
  const models = modelList(configured, listed)
  const rows = (models.includes(current) ? models : [...models, current]).map((id) =>
    `${id === current ? "* " : "  "}${id}${id === configured ? " (agent.yaml)" : ""}`
  )
  return ["models the server lists (* in use; /model NAME switches):", ...rows].join("\n")
}

/** What `/model NAME` says of a name the server does not list: a few of those it does. */
export const unknownModelLine = (name: string, listed: ReadonlyArray<string>): string => {
  const some = listed.slice(0, 8).join(", ")
  return `unknown model ${name} — the server lists ${some}${listed.length > 8 ? `, … (${listed.length} in all)` : ""}`
}

/**
 * The conversation goes on with `model` (undefined: the configured one), and its session file
 * keeps the choice; a warning when the file could not be written.
 */
export const chooseModel = (conversation: Conversation, model: string | undefined) =>
  Effect.gen(function*() {
    const settings = yield* Ref.updateAndGet(conversation.settings, (before) => ({ ...before, model }))
    return yield* conversation.update((session) => ({
      ...session,
      settings: {
        // an editor's mode stays as it was kept; the terminal's is for this run only
        mode: session.settings?.mode ?? settings.mode,
        ...(model === undefined ? {} : { model })
      }
    }))
  })

/**
 * A resumed conversation goes on with the model its file kept (or the configured one): the
 * line that says so when it is not the configured one.
 */
export const restoreModel = (conversation: Conversation) =>
  Effect.gen(function*() {
    const kept = (yield* conversation.snapshot).settings?.model
    yield* Ref.update(conversation.settings, (settings) => ({ ...settings, model: kept }))
    return kept === undefined ? undefined : `model: ${kept}, as this conversation chose (/model to change it)`
  })

/** The question `/init` asks: a normal turn, whose write is approved as any other. */
export const INIT_PROMPT = [
  "Study this project and write, or update, the file AGENTS.md at its root: the instructions a coding agent",
  "reads before it works here.",
  "",
  "First look around: the build and package files, the README, the folder layout, the test set-up, the lint",
  "and format configuration, and a few representative source files. If AGENTS.md already exists, read it and",
  "update it in place: keep what is still true, correct what is not, and add what is missing.",
  "",
  "Keep it concise (well under 200 lines), in plain Markdown, with:",
  "- the exact commands to install, build, run, test (all, and one test), lint and format;",
  "- the layout: what lives in each main folder, and where a new piece of code goes;",
  "- the conventions a newcomer would get wrong: style, naming, error handling, tests, commits.",
  "Write only what you have checked in the project itself; no generic advice. Then say in two lines what you wrote."
].join("\n")
