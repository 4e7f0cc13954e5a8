/** Which conversation mm starts on, as the command line asked. */
export type StartOn =
  | { readonly _tag: "New" }
  /** `--continue`: the latest session of the project (what a bare `/resume` takes). */
  | { readonly _tag: "Latest" }
  /** `--resume` without an id: a list to pick from, on a terminal. */
  | { readonly _tag: "Pick" }
  /** `--resume ID`: full id, unique prefix or hex suffix. */
  | { readonly _tag: "Id"; readonly id: string }
  /** `--fork ID[:N]`: a new session holding that one's turns up to N (all by default). */
  | { readonly _tag: "Fork"; readonly id: string; readonly turn?: number }

/** `ID[:N]` as `--fork` takes it; undefined when it is not that shape. */
export const forkTarget = (value: string): { readonly id: string; readonly turn?: number } | undefined => {
  const match = /^([0-9a-f-]{1,24})(?::(\d{1,6}))?$/.exec(value)
  if (match === null) return undefined
  return match[2] === undefined ? { id: match[1] } : { id: match[1], turn: Number(match[2]) }
}

/** A start with the pick already made: what the session opens on. */
export type ChosenStart = Exclude<StartOn, { readonly _tag: "Pick" }>
