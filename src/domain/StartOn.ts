/** Which conversation mm starts on, as the command line asked. */
export type StartOn =
  | { readonly _tag: "New" }
  /** `--continue`: the latest session of the project (what a bare `/resume` takes). */
  | { readonly _tag: "Latest" }
  /** `--resume` without an id: a list to pick from, on a terminal. */
  | { readonly _tag: "Pick" }
  /** `--resume ID`: full id, unique prefix or hex suffix. */
  | { readonly _tag: "Id"; readonly id: string }

/** A start with the pick already made: what the session opens on. */
export type ChosenStart = Exclude<StartOn, { readonly _tag: "Pick" }>
