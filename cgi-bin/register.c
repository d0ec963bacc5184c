/*
 * register: /register, dynamic client registration (RFC 7591).
 * The logic is in lib/oauth.c.
 */
#include "app.h"
#include "oauth.h"

int
main(void)
{
	return app_main("register", oauth_register);
}
