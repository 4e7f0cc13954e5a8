/** PLACEHOLDER while issue 48 is being built: the OpenAI Responses adapter replaces this file. */
import * as Effect from "effect/Effect"

import { AppConfig } from "../../config/Config"
import { makeChatClient } from "../chat/ChatClient"

export const makeResponsesClient = Effect.zipRight(AppConfig, makeChatClient)
