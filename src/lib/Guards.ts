/** A JSON object (not null, not an array): what a decoded body or file is checked for before its fields are read. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
