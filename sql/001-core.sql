-- 001-core.sql: MCP sessions.
--
-- Read it with: sqlite3 state.db '.schema'
-- Every file in sql/ runs once, in order, in one transaction, and ends by
-- setting user_version to its number.

-- One row per MCP session (Streamable HTTP "Session Management"). The
-- session id itself is not stored, only its SHA-256, so a copy of this
-- file cannot be used to join a session.
CREATE TABLE session (
	id_hash		TEXT PRIMARY KEY,	-- hex SHA-256 of Mcp-Session-Id
	protocol_version TEXT NOT NULL,		-- negotiated at initialize
	client_info	TEXT,			-- clientInfo name/version, for operators
	created		INTEGER NOT NULL,	-- unix seconds
	last_used	INTEGER NOT NULL	-- unix seconds
);
CREATE INDEX session_last_used ON session (last_used);

PRAGMA user_version = 1;
