import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as SynchronizedRef from "effect/SynchronizedRef"

import { approvalModes, isApprovalMode, type SessionSettings } from "../approvals/SessionSettings"
import { AppConfig } from "../config/Config"
import { ModelClient } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import { AcpConnection, type AcpSession, send } from "./Connection"
import { configOptions, MODE_OPTION, MODEL_OPTION, modelChoices, modeState } from "./SessionOptions"
import { heldSession } from "./Sessions"

/**
 * A session's settings as the editor sees and changes them: its approval mode and model,
 * through `session/set_mode` and `session/set_config_option`.
 */

/** What the server's `/models` lists: asked the first time, then kept for the connection. */
const listedModels = Effect.gen(function*() {
  const { listed } = yield* AcpConnection
  return yield* SynchronizedRef.modifyEffect(listed, (held) =>
    Option.match(held, {
      onSome: (ids) => Effect.succeed([ids, held] as const),
      onNone: () =>
        Effect.map(Effect.flatMap(ModelClient, (model) => model.models), (ids) => [ids, Option.some(ids)] as const)
    }))
})

/**
 * The models to choose from: the configured one, then what the server's `/models` lists (asked
 * once), and the session's own choice when the server no longer lists it.
 */
const models = (chosen?: string) =>
  Effect.gen(function*() {
    const { config } = yield* AppConfig
    const choices = modelChoices(config.model.name, yield* listedModels)
    return chosen === undefined || choices.includes(chosen) ? choices : [...choices, chosen]
  })

/** The modes and config options a session starts with (and shows after each change). */
export const setup = Effect.fn("Acp.setup")(function*(conversation: Conversation) {
  const settings = yield* Ref.get(conversation.settings)
  return { modes: modeState(settings), configOptions: configOptions(settings, yield* models(settings.model)) }
})

/** A loaded or resumed thread takes the mode and model its file kept (an unknown mode is ignored). */
export const restoreSettings = Effect.fn("Acp.restoreSettings")(function*(conversation: Conversation) {
  const kept = (yield* conversation.snapshot).settings
  if (kept === undefined) return
  yield* Ref.update(conversation.settings, (settings) => ({
    mode: isApprovalMode(kept.mode) ? kept.mode : settings.mode,
    model: kept.model
  }))
})

/** The settings are kept in the session's file, so that a reload restores them. */
const keepSettings = (conversation: Conversation, settings: SessionSettings) =>
  conversation.update((session) => ({
    ...session,
    settings: { mode: settings.mode, ...(settings.model === undefined ? {} : { model: settings.model }) }
  }))

/** Changes a session's settings, then tells the editor what they are now. */
const changeSettings = Effect.fn("Acp.changeSettings")(function*(
  session: AcpSession,
  client: acp.AgentContext,
  change: (settings: SessionSettings) => SessionSettings
) {
  const before = yield* Ref.get(session.conversation.settings)
  const after = change(before)
  yield* Ref.set(session.conversation.settings, after)
  const warning = yield* keepSettings(session.conversation, after)
  if (warning !== undefined) (yield* AcpConnection).log(warning)
  const { configOptions: options } = yield* setup(session.conversation)
  const updates: Array<acp.SessionUpdate> = [{ sessionUpdate: "config_option_update", configOptions: options }]
  if (after.mode !== before.mode) {
    updates.unshift({ sessionUpdate: "current_mode_update", currentModeId: after.mode })
  }
  yield* send(client, session.id, updates)
  return options
})

const unknownMode = (data: Record<string, unknown>, mode: string) =>
  acp.RequestError.invalidParams(
    data,
    `unknown mode ${JSON.stringify(mode)}; the modes are ${approvalModes.join(", ")}`
  )

/** `session/set_mode`. */
export const setMode = Effect.fn("Acp.setMode")(function*(params: acp.SetSessionModeRequest, client: acp.AgentContext) {
  const session = yield* heldSession(params.sessionId)
  const mode = params.modeId
  if (!isApprovalMode(mode)) return yield* Effect.fail(unknownMode({ modeId: mode }, mode))
  yield* changeSettings(session, client, (settings) => ({ ...settings, mode }))
  return {}
})

/** `session/set_config_option`: the `mode` or the `model` of the session. */
export const setConfigOption = Effect.fn("Acp.setConfigOption")(function*(
  params: acp.SetSessionConfigOptionRequest,
  client: acp.AgentContext
) {
  const session = yield* heldSession(params.sessionId)
  const value = params.value
  if (typeof value !== "string") {
    return yield* Effect.fail(
      acp.RequestError.invalidParams({ configId: params.configId }, `${params.configId} takes one of its listed values`)
    )
  }
  if (params.configId === MODE_OPTION) {
    if (!isApprovalMode(value)) return yield* Effect.fail(unknownMode({ value }, value))
    return { configOptions: yield* changeSettings(session, client, (settings) => ({ ...settings, mode: value })) }
  }
  if (params.configId === MODEL_OPTION) {
    const choices = yield* models()
    if (!choices.includes(value)) {
      return yield* Effect.fail(
        acp.RequestError.invalidParams(
          { value },
          `unknown model ${JSON.stringify(value)}; the models are ${choices.join(", ")}`
        )
      )
    }
    const { config } = yield* AppConfig
    const model = value === config.model.name ? undefined : value
    return { configOptions: yield* changeSettings(session, client, (settings) => ({ ...settings, model })) }
  }
  return yield* Effect.fail(
    acp.RequestError.invalidParams(
      { configId: params.configId },
      `unknown config option ${JSON.stringify(params.configId)}; the options are mode, model`
    )
  )
})
