/** PLACEHOLDER while issue 48 is being built: the Anthropic Messages adapter replaces this file. */
import * as Effect from "effect/Effect"

import { AppConfig } from "../../config/Config"
import { makeChatClient } from "../chat/ChatClient"

export const makeAnthropicClient = Effect.zipRight(AppConfig, makeChatClient)
