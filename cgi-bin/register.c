/*
 * register: /register, dynamic client registration (RFC 7591).
 * The logic is in lib/oauth/oauth.c.
 */
#include "app/app.h"
#include "oauth/oauth.h"

int
main(void)
{
	return app_main("register", oauth_register);
}
