/*
 * supervisor: runs the sandbox's commands inside the container, so a
 * command's result exists whatever happens to the server process that
 * asked for it. Static, no dependencies; the server uploads it into the
 * container on start (lib/sandbox/sup.c) and runs it through an engine exec.
 *
 *   supervisor run ID TIMEOUT MAX CHUNK...
 *	Run `bash -c COMMAND` (COMMAND is the CHUNKs joined; when there are
 *	several, from a file) in /sandbox, stdin /dev/null, as the leader of
 *	its own session and process group. Kill the whole group with SIGKILL
 *	TIMEOUT seconds after the start. stdout carries the live frames
 *	(frames.h): S, o/e as output comes, R. Keep at most MAX bytes of each
 *	stream (head and tail) and write them with the result as the run's
 *	record, RUNS/ID/record, for whoever collects it. Exit with the
 *	command's status (128+N for signal N), 125 when it could not start.
 *	Processes the command detached keep their output pipes drained by a
 *	small child of the supervisor until they close them.
 *   supervisor kill ID
 *	SIGKILL the process group of run ID, if it still runs. Exit 0, or 1
 *	when the supervisor never ran such a run.
 *   supervisor collect ID
 *	Copy run ID's record to stdout: exit 0; 3 while it runs, 4 when its
 *	supervisor ended without a record, 5 when there is no such run.
 *   supervisor mux [--lane PATH]
 *	Carry many TCP connections to ports in the container (preview
 *	links, lib/preview/) over one exec (frames.h, "The mux"): each port
 *	is tried at 127.0.0.1, then ::1, then the container's own addresses
 *	(a server bound to one of them), 2 s each; bytes go unchanged both
 *	ways, each stream within its credit; with --lane, a stream opened
 *	with a key is handed over to the server on that socket instead.
 *	Ends when stdin ends.
 *   supervisor channel
 *	Serve many runs over one exec (frames.h, "The channel"): 'r', 'k'
 *	and 'q' frames on stdin; each run is a child doing what "run" does,
 *	its live stream sent back as 'M' frames tagged with its id, then 'E'
 *	with its exit status. Ends when stdin ends or stdout fails; the runs
 *	in flight go on and keep their records.
 *
 * Where each is: run, kill and collect in run.c, the channel in
 * channel.c, the mux in mux.c, the terminals in term*.c; frames.h says
 * what goes over the exec's streams.
 */
#include <string.h>

#include "supervisor/channel.h"
#include "supervisor/io.h"
#include "supervisor/mux.h"
#include "supervisor/run.h"
#include "supervisor/term.h"

int
main(int argc, char **argv)
{
	long timeout = 0, max = 0;

	if (argc == 2 && strcmp(argv[1], "mux") == 0)
		return mux_main(NULL);
	if (argc == 4 && strcmp(argv[1], "mux") == 0 &&
	    strcmp(argv[2], "--lane") == 0)
		return mux_main(argv[3]);
	if (argc >= 3 && !run_valid_id(argv[2]))
		sup_die(125, "bad run id");
	if (argc >= 6 && strcmp(argv[1], "run") == 0) {
		if ((timeout = sup_number(argv[3], 1, RUN_TIMEOUT_MAX)) < 0 ||
		    (max = sup_number(argv[4], 0, RUN_OUTPUT_MAX)) < 0)
			sup_die(125, "bad timeout or output limit");
		return run_main(argv[2], timeout, max, argc - 5, argv + 5);
	}
	if (argc == 3 && strcmp(argv[1], "kill") == 0)
		return run_kill(argv[2]);
	if (argc == 3 && strcmp(argv[1], "collect") == 0)
		return run_collect(argv[2]);
	if (argc == 2 && strcmp(argv[1], "channel") == 0)
		return channel_main();
	if (argc >= 2 && strncmp(argv[1], "term-", 5) == 0)
		return term_main(argc, argv);
	sup_die(125, "usage: supervisor run ID TIMEOUT MAX CHUNK... | kill ID | "
	    "collect ID | mux [--lane PATH] | channel | term-start ... | "
	    "term-send ... | term-watch ... | term-close ID | term-list");
	return 125;
}
