-- 018-redirect-approval.sql: approval per client and redirect URI.
--
-- Errors of /authorize go back to the client only where the owner has
-- signed in before (RFC 9700 §4.11.2). The mark used to be per client
-- (oauth_client.approved): one sign-in through any of its redirect URIs
-- let errors go to every other URI it registered, also ones a metadata
-- document added later, an open redirect. Now it is per redirect URI the
-- browser went back to, and a change of the client's redirect_uris (a
-- metadata document fetched again) clears all of the client's marks.
-- oauth_client.approved stays: "signed in once", which keeps the client
-- from being evicted as unused.
--
-- Operators: sqlite3 state.db 'select * from oauth_approval'

CREATE TABLE oauth_approval (
	client_id	TEXT NOT NULL REFERENCES oauth_client (client_id) ON DELETE CASCADE,
	redirect_uri	TEXT NOT NULL,		-- the URI the browser goes back to
	approved	INTEGER NOT NULL,	-- unix seconds of the first sign-in
	PRIMARY KEY (client_id, redirect_uri)
);

-- Carried over only where it is unambiguous: a client with one URI.
INSERT INTO oauth_approval (client_id, redirect_uri, approved)
SELECT client_id, json_extract(redirect_uris, '$[0]'), approved
FROM oauth_client
WHERE approved IS NOT NULL AND json_valid(redirect_uris) AND
    json_array_length(redirect_uris) = 1;

CREATE TRIGGER oauth_client_uris_changed AFTER UPDATE OF redirect_uris ON oauth_client
WHEN old.redirect_uris IS NOT new.redirect_uris BEGIN
	DELETE FROM oauth_approval WHERE client_id = new.client_id;
END;
CREATE TRIGGER oauth_client_delete_approval AFTER DELETE ON oauth_client BEGIN
	DELETE FROM oauth_approval WHERE client_id = old.client_id;
END;

PRAGMA user_version = 18;
