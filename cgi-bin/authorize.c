/*
 * authorize: /authorize, the authorization endpoint and its sign-in page
 * (RFC 6749 §4.1.1, RFC 7636, RFC 8707, RFC 9207).
 * The logic is in lib/oauth/authorize.c.
 */
#include "app/app.h"
#include "oauth/oauth.h"

int
main(void)
{
	return app_main_net("authorize", oauth_authorize);
}
