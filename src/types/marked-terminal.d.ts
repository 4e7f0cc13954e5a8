/** The part of marked-terminal 7 that mm uses (the package ships no types). */
declare module "marked-terminal" {
  import type { MarkedExtension } from "marked"
  export function markedTerminal(
    options?: Record<string, unknown>,
    highlightOptions?: Record<string, unknown>
  ): MarkedExtension
}
