/*
 * scripts.h: the shell run in the sandbox container, every script in one
 * place (scripts.c), each with a comment on its arguments, what it prints
 * and what it may meet in a hostile container. Run through sandbox_script
 * (sandbox.h) or the exec paths of sandbox/exec.c, always with a deadline.
 */
#ifndef CS_SCRIPTS_H
#define CS_SCRIPTS_H

/* Where the command wrapper keeps its pid, marker and script files. */
#define SCRIPT_RUN_DIR	"/run/code-sandbox"

/* Commands (sandbox/exec.c, kill.c): the wrapper, its killer, its markers. */
extern const char SCRIPT_WRAPPER[];
extern const char SCRIPT_KILLER[];
extern const char SCRIPT_MARKERS[];

/* Guards (sandbox/guard_disk.c, status.c): disk sample, volume usage. */
extern const char SCRIPT_DISK[];
extern const char SCRIPT_USAGE[];

/*
 * The egress canary, run with $1 the policy name and $2 the gateway
 * address (internet), $3 the egress proxy's port ("" without one), $4
 * "hosts" under SANDBOX_EGRESS_HOSTS. It prints one line: "blocked DETAIL"
 * when the policy holds, else "open DETAIL" or "unexpected DETAIL".
 */
extern const char SCRIPT_CANARY[];

/*
 * The egress proxy's CA (sandbox/guard_egress.c, with the canary), $1 its PEM
 * text: put in the system store (the local certificates folder, the
 * bundle and the hashed folder, as update-ca-certificates would, without
 * its time) unless the same is there already. Prints
 * "same" or "installed"; exit status not 0 when it could not.
 */
extern const char SCRIPT_PROXY_CA[];

/* The clean-up pass over /sandbox (ops/cleanup.c). */
extern const char SCRIPT_CLEANUP[];

/* A folder as one archive on stdout (links/dl_archive.c). */
extern const char SCRIPT_ARCHIVE[];

/* An upload (links/upload.c): the folder made, the file named, discarded. */
extern const char SCRIPT_UPLOAD_PREPARE[];
extern const char SCRIPT_UPLOAD_FINISH[];
extern const char SCRIPT_UPLOAD_DISCARD[];

#endif
