import * as path from "node:path"

/** The repository's root, whichever folder of test/ a test file sits in. */
export const REPO_ROOT = path.resolve(__dirname, "../..")

/** The built program the end-to-end tests spawn. */
export const DIST = path.join(REPO_ROOT, "dist")

/** What real model servers sent, kept as fixtures (test/fixtures/servers/README.md names each source). */
export const SERVER_FIXTURES = path.join(REPO_ROOT, "test/fixtures/servers")

/** A small stdio MCP server for the MCP tests. */
export const MCP_TEST_SERVER = path.join(REPO_ROOT, "test/support/mcp-test-server.mjs")
