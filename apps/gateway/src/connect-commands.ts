/**
 * What `npm start` prints to connect a client: the same commands as the root README's, with the
 * gateway's URL and the dev token filled in (a test runs the Inspector line of both).
 */
export function connectCommands(mcpUrl: string, token: string): string {
  return `  Connect a client:
    Claude Code  : claude mcp add --transport http openwork ${mcpUrl} --header "Authorization: Bearer ${token}"
    Codex        : add to ~/.codex/config.toml
                     [mcp_servers.openwork]
                     url = "${mcpUrl}"
                     http_headers = { Authorization = "Bearer ${token}" }
    Inspector    : ${inspectorCommand(mcpUrl, token)}`;
}

/**
 * The Inspector's CLI declares Node >= 22 yet runs on 20; `--engine-strict=false` lets npx install it
 * where an `.npmrc` (this repository's among them) makes engines strict.
 */
export function inspectorCommand(mcpUrl: string, token: string): string {
  return `npx -y --engine-strict=false @modelcontextprotocol/inspector@2.12.0 --cli ${mcpUrl} --transport http --header "Authorization: Bearer ${token}" --method tools/list`;
}
