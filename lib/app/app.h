/*
 * app.h: the main of every FastCGI program.
 *
 * app_main reads the settings (one line naming a bad setting, then exit
 * status 1), sets up logging, and serves requests with
 * SANDBOX_THREADS threads until SIGTERM. Each request reaches the handler
 * with the settings and this thread's database connection; a database that
 * cannot be opened is answered 503 before the handler runs.
 *
 * app_main_net is app_main for the programs that reach the Docker engine:
 * the engine client's set-up before the threads start, the engine's calls
 * stopped by SIGTERM, and at exit the end of a background clean-up pass.
 * It sets libcurl up once, before the threads (lib/base/xfer.h); the other
 * programs never load libcurl (the linker's --as-needed).
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
int	app_main_net(const char *name, app_handler);

/* For app_net.c: the engine client's set-up and clean-up around app_main's work. */
struct app_net {
	int	(*init)(void);
	void	(*fini)(void);
};
int	app_run(const char *name, app_handler, const struct app_net *);

#endif
