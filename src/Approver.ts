import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

export type Approval = "once" | "always" | "deny"

export interface ApprovalRequest {
  readonly sessionId: string
  readonly toolCallId: string
  readonly tool: string
  readonly title: string
  readonly input: Record<string, unknown> | undefined
}

/** How a façade asks the user before a tool that changes things runs (`permissions: ask`). */
export class Approver extends Context.Tag("mm/Approver")<
  Approver,
  { readonly ask: (request: ApprovalRequest) => Effect.Effect<Approval> }
>() {}
