import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"

import type { Preview } from "../tools/Preview"
import type { CallLocation, ToolAccess, ToolKind } from "../tools/ToolRecord"
import type { AlwaysChoice, Keep, Scope } from "./ApprovalScope"

/**
 * The user's answer. `Always` carries one of the scopes the request offered (`always`) and
 * whether it is remembered for the project or kept for this conversation only (`keep`);
 * `Deny` may carry what the user wants done instead, handed to the model as the result;
 * `NoOneToAsk` when no person can answer (no terminal): the call is refused, nothing was read.
 */
export type Approval =
  | { readonly _tag: "Once" }
  | { readonly _tag: "Always"; readonly scope: Scope; readonly keep: Keep }
  | { readonly _tag: "Deny"; readonly instead?: string | undefined }
  | { readonly _tag: "NoOneToAsk" }

export const Approval = {
  once: { _tag: "Once" } as Approval,
  deny: { _tag: "Deny" } as Approval,
  noOneToAsk: { _tag: "NoOneToAsk" } as Approval,
  always: (scope: Scope, keep: Keep = "project"): Approval => ({ _tag: "Always", scope, keep }),
  /** The answer that picks one of the request's choices. */
  chose: (choice: AlwaysChoice): Approval => ({ _tag: "Always", scope: choice.scope, keep: choice.keep }),
  denyWith: (instead: string): Approval => ({ _tag: "Deny", instead })
}

export interface ApprovalRequest {
  readonly sessionId: string
  readonly toolCallId: string
  readonly tool: string
  /** What the tool reaches (the editor words its "always" answers by it). */
  readonly access: ToolAccess
  /** How the call is shown: what it works on, its kind, where. */
  readonly title: string
  readonly kind: ToolKind
  readonly locations: ReadonlyArray<CallLocation>
  readonly input: Record<string, unknown> | undefined
  /** What the call will do, computed by the core: both façades show this. */
  readonly preview: Preview
  /**
   * The "always" answers this call allows, most specific first (empty: ask every time, e.g.
   * a file outside the project). A façade answers `Always` only with one of these scopes.
   */
  readonly always: ReadonlyArray<AlwaysChoice>
  /**
   * Set when the command already ran in the sandbox and the sandbox blocked it: why, in words.
   * The question is then whether to run it again outside the sandbox (yes or no, never "always").
   */
  readonly outsideSandbox?: string
  /** Set when a sub-agent (`task`) makes the call: its name, shown with the question. */
  readonly agent?: string
}

/**
 * How a façade asks the user before a tool that changes things runs (`permissions: ask`).
 * The core asks only when no earlier "always" covers the call (`isAllowed` in
 * ApprovalScope.ts), keeps the scope of an `Always` answer for the rest of the conversation
 * (and, unless it is `keep: "session"`, remembers it for the project),
 * and turns a refusal into the tool's result (`denied by the user[: what to do instead]`).
 */
export class Approver extends Context.Tag("mm/Approver")<
  Approver,
  { readonly ask: (request: ApprovalRequest) => Effect.Effect<Approval> }
>() {}
