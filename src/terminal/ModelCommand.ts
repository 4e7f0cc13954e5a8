/**
 * `/model`: the models the server lists, the one in use marked; `/model NAME` switches this
 * conversation to NAME (kept in its session, src/commands/ModelChoice.ts).
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { chooseModel, modelList, modelListing, unknownModelLine } from "../commands/ModelChoice"
import { AppConfig } from "../config/Config"
import { ModelClient } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import { sanitize } from "../text/Sanitize"

/** What `/model` reaches: the conversation, and where it prints. */
interface ModelContext {
  readonly conversation: Conversation
  readonly print: { readonly line: (line: string) => void }
  readonly notice: (line: string | undefined) => void
}

export const modelCommand = (ctx: ModelContext, arg: string) =>
  Effect.gen(function*() {
    const { config } = yield* AppConfig
    const configured = config.model.name
    const listed = (yield* (yield* ModelClient).models).map(sanitize)
    const current = (yield* Ref.get(ctx.conversation.settings)).model ?? configured
    const name = arg.trim()
    if (name === "") return ctx.print.line(modelListing(configured, listed, current))
    if (/\s/.test(name)) return ctx.print.line("usage: /model [NAME] — one model id")
    if (listed.length > 0 && !modelList(configured, listed).includes(name)) {
      return ctx.print.line(unknownModelLine(name, modelList(configured, listed)))
    }
    ctx.notice(yield* chooseModel(ctx.conversation, name === configured ? undefined : name))
    const unlisted = listed.length === 0 ? " (the server lists no models: taken as it is)" : ""
    ctx.print.line(`model: ${name} from now on in this conversation${unlisted}`)
  })

/** The ids Tab completes after `/model `: the configured model, then those the server lists. */
export const modelIds = Effect.gen(function*() {
  const { config } = yield* AppConfig
  return modelList(config.model.name, yield* (yield* ModelClient).models)
})
