-- compatible: adds a column with a default; a release before it neither reads nor writes it.
-- What the client of a stateful MCP session declared at `initialize` and the gateway acts on
-- (elicitation): every later request of the session may reach another replica, which reads it here.
alter table mcp_session add column client_capabilities jsonb not null default '{}'::jsonb;
