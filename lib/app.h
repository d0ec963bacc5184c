/*
 * app.h: the main of every FastCGI program.
 *
 * app_main reads the settings (one line naming a bad setting, then exit
 * status 1), sets up logging and libcurl, and serves requests with
 * SANDBOX_THREADS threads until SIGTERM. Each request reaches the handler
 * with the settings and this thread's database connection; a database that
 * cannot be opened is answered 503 before the handler runs.
 */
#ifndef CS_APP_H
#define CS_APP_H

struct config;
struct db;
struct http_req;

typedef void	(*app_handler)(struct http_req *, const struct config *,
		    struct db *);

/* Run the program called name; returns main's exit status. */
int	app_main(const char *name, app_handler);

#endif
