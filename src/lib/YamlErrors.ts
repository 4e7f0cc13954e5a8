/** A YAML parser's error as one line, without the position it repeats (the caller says where). */
export const yamlProblem = (error: { readonly message: string }): string =>
  error.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "")
