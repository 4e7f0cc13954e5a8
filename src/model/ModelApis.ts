/**
 * The model client of the configured API (`model.api`): chat completions (every local server,
 * most gateways), OpenAI Responses or Anthropic Messages, each an adapter in its own folder
 * behind the one `ModelClient` port.
 */
import * as Effect from "effect/Effect"

import { AppConfig } from "../config/Config"
import { makeAnthropicClient } from "./anthropic/AnthropicClient"
import { makeChatClient } from "./chat/ChatClient"
import { makeResponsesClient } from "./responses/ResponsesClient"

export const makeModelClient = Effect.flatMap(AppConfig, ({ config }) => {
  switch (config.model.api) {
    case "anthropic":
      return makeAnthropicClient
    case "responses":
      return makeResponsesClient
    default:
      return makeChatClient
  }
})
