/**
 * The secrets mm knows (the model server's key, values taken from the environment for
 * headers or MCP servers): kept out of anything shown, saved or sent to an editor, and out
 * of the environment the tools run in. See docs/explanation/guarantees.md.
 */

export const REDACTED = "[redacted]"

/** Shorter values are too likely to occur by chance to be replaced everywhere. */
const MIN_SECRET_LENGTH = 4

const secrets = new Set<string>()
const secretVariables = new Set<string>()
/** Every form a secret may take in text: as is, and as it appears inside a JSON string. */
let forms: Array<string> = []

const rebuild = (): void => {
  const all = new Set<string>()
  for (const secret of secrets) {
    all.add(secret)
    const quoted = JSON.stringify(secret).slice(1, -1)
    if (quoted !== secret) all.add(quoted)
  }
  // longest first, so a secret that contains another is replaced whole
  forms = [...all].sort((a, b) => b.length - a.length)
}

/** From now on `value` is replaced by `[redacted]` wherever `redact` runs. Values under 4 characters are ignored. */
export const registerSecret = (value: string): void => {
  const secret = value.trim()
  if (secret.length < MIN_SECRET_LENGTH || secrets.has(secret)) return
  secrets.add(secret)
  rebuild()
}

/**
 * The environment variable `name` holds a secret: its value is registered, and the
 * variable is left out of `toolEnv()`.
 */
export const registerSecretVariable = (name: string, env: NodeJS.ProcessEnv = process.env): void => {
  secretVariables.add(name)
  const value = env[name]
  if (value !== undefined) registerSecret(value)
}

/** `text` with every registered secret replaced by `[redacted]`. */
export const redact = (text: string): string => {
  if (forms.length === 0 || text.length < MIN_SECRET_LENGTH) return text
  let out = text
  for (const form of forms) {
    if (out.includes(form)) out = out.split(form).join(REDACTED)
  }
  return out
}

/**
 * Redaction of text that arrives in pieces (a streamed answer): a piece that ends with the
 * beginning of a secret keeps that end back until the next piece shows whether it is one.
 */
export const makeStreamRedactor = (): { readonly push: (text: string) => string; readonly flush: () => string } => {
  let held = ""
  const heldBack = (text: string): number => {
    let keep = 0
    for (const form of forms) {
      for (let n = Math.min(form.length - 1, text.length); n > keep; n--) {
        if (text.endsWith(form.slice(0, n))) {
          keep = n
          break
        }
      }
    }
    return keep
  }
  return {
    push: (text) => {
      if (forms.length === 0) return text
      const all = redact(held + text)
      const keep = heldBack(all)
      held = all.slice(all.length - keep)
      return all.slice(0, all.length - keep)
    },
    flush: () => {
      const rest = redact(held)
      held = ""
      return rest
    }
  }
}

/** Whether any secret is registered at all. */
export const secretsKnown = (): boolean => forms.length > 0

/** Whether any registered secret occurs in `text`. */
export const holdsSecret = (text: string): boolean => forms.some((form) => text.includes(form))

/** The environment for tools: mm's own, without the variables that hold secrets. */
export const toolEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (secretVariables.has(name)) continue
    if (value !== undefined && value.trim().length >= MIN_SECRET_LENGTH && secrets.has(value.trim())) continue
    env[name] = value
  }
  return env
}

/**
 * A configuration value in which `${NAME}` stands for the environment variable NAME: the
 * value with each reference replaced, each value so read registered as a secret, and the
 * names that are not set (they become empty).
 */
export const resolveSecretRefs = (
  text: string,
  env: NodeJS.ProcessEnv = process.env
): { readonly value: string; readonly missing: ReadonlyArray<string> } => {
  const missing: Array<string> = []
  const value = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const found = env[name]
    if (found === undefined) {
      missing.push(name)
      return ""
    }
    registerSecretVariable(name, env)
    return found
  })
  return { value, missing }
}

/** Forgets every secret (tests only). */
export const resetSecretsForTests = (): void => {
  secrets.clear()
  secretVariables.clear()
  forms = []
}
