/*
 * scripts.c: every shell script the server runs in the sandbox container,
 * in one place (see scripts.h). Each runs as `bash -c SCRIPT name ARGS...`
 * with a server-side deadline, in a container whose root is the model:
 * every program it calls may be replaced, and what it prints is parsed by
 * the caller as hostile, bounded. Each comment says what else it may meet.
 */
#include "sandbox/scripts.h"

#define RUN_DIR		SCRIPT_RUN_DIR

/*
 * oomc sets $o to the container's count of processes killed by the memory
 * limit (cgroup v2 memory.events, v1 memory.oom_control: "oom_kill N"),
 * empty when neither can be read. Builtins only: no fork.
 */
#define OOM_COUNT \
    "oomc() { o=; local f k v\n" \
    "  for f in /sys/fs/cgroup/memory.events" \
    " /sys/fs/cgroup/memory/memory.oom_control; do\n" \
    "    [ -r \"$f\" ] || continue\n" \
    "    while read -r k v; do [ \"$k\" = oom_kill ] && o=$v; done <\"$f\"\n" \
    "    return; done; }\n"

/*
 * df, then du when the file system is bigger than $1 bytes (watchdog
 * mode): prints "MODE FS_SIZE USED". Only when the volume cannot be
 * measured on the host (host_volume): the container's root can make it
 * print anything, so its answer is never taken to switch the watchdog off,
 * and failed samples count as over the limit (guard.c).
 */
const char SCRIPT_DISK[] =
    "set -- \"$1\" $(df -P -B1 /sandbox 2>/dev/null | tail -n 1)\n"
    "max=$1 size=${3:--1} used=${4:--1}\n"
    "if [ \"$size\" -le \"$max\" ] 2>/dev/null; then\n"
    "  echo \"filesystem $size $used\"; exit 0; fi\n"
    "set -- $(du -sx -B1 /sandbox 2>/dev/null)\n"
    "echo \"watchdog $size ${1:--1}\"\n";

/*
 * The wrapper; $1 timeout seconds, $2 run id, $3... the command, split in
 * chunks when longer than one argument may be (then it runs from a file).
 * Keep it to bash builtins on the common path: each fork costs time.
 *
 * bash, sleep and kill are the container's: the server's own clock
 * decides a timeout and its backstop kills the group from C; nothing the
 * wrapper writes under RUN_DIR decides what the result says.
 */
const char SCRIPT_WRAPPER[] =
    "d=" RUN_DIR " t=$1 id=$2\n"
    "end=$((EPOCHSECONDS + t))\n"
    OOM_COUNT
    "oomc; o0=$o\n"
    "[ -d \"$d\" ] || mkdir -p \"$d\" || exit 125\n"
    "shift 2\n"
    "if [ $# -gt 1 ]; then\n"
    "  printf %s \"$@\" >\"$d/$id.sh\" || exit 125\n"
    "  set -- bash \"$d/$id.sh\"\n"
    "else\n"
    "  set -- bash -c \"$1\"\n"
    "fi\n"
    /*
     * The wrapper's own messages (job reports such as "[1]+ Exit 3") are
     * dropped from before the job starts, or a quick command races them
     * into its stderr; the command keeps the real stderr (fd 3).
     */
    "exec 3>&2 2>/dev/null\n"
    "set -m\n"
    "\"$@\" </dev/null 2>&3 3>&- &\n"
    "p=$!\n"
    "exec 3>&-\n"
    "echo \"$p $o0\" >\"$d/$id\"\n"
    "(sleep \"$t\"; : >\"$d/$id.timeout\"; kill -KILL -- \"-$p\")"
    " </dev/null >/dev/null &\n"
    "w=$!\n"
    "wait \"$p\"; s=$?\n"
    "kill -KILL -- \"-$w\"\n"
    "rm -f \"$d/$id\" \"$d/$id.sh\"\n"
    "if [ \"$s\" = 137 ]; then\n"
    "  oomc; [ \"${o:-0}\" -gt \"${o0:-0}\" ] && : >\"$d/$id.oom\"\n"
    "else\n"
    "  rm -f \"$d/$id.timeout\" \"$d/$id.cancel\"\n"
    "fi\n"
    "if kill -0 -- \"-$p\"; then\n"
    "  (while [ \"$EPOCHSECONDS\" -lt \"$end\" ] && kill -0 -- \"-$p\"\n"
    "   do sleep 1; done\n"
    "   kill -KILL -- \"-$p\") </dev/null >/dev/null &\n"
    "fi\n"
    "exit \"$s\"\n";

/*
 * Kill run $1's group, leaving marker $1.$2 first; 0 if it already ended.
 *
 * The pid file may hold anything: only a number is used, and killing
 * a wrong group can only hurt the container itself.
 */
const char SCRIPT_KILLER[] =
    "d=" RUN_DIR "\n"
    "read -r p _ <\"$d/$1\" 2>/dev/null || exit 0\n"
    "case $p in ''|*[!0-9]*) exit 0;; esac\n"
    ": >\"$d/$1.$2\"\n"
    "kill -KILL -- \"-$p\" 2>/dev/null\n"
    "exit 0\n";

/*
 * Print and remove the markers of run $1. A pid file still there means the
 * wrapper itself was killed (the memory limit picks the largest process,
 * but not always the command): compare the OOM kill count with the one the
 * wrapper saw at the start.
 *
 * Marker files can be made by the command too: they only word the
 * message; the run table decides a cancellation, the server's clock a
 * timeout.
 */
const char SCRIPT_MARKERS[] =
    "d=" RUN_DIR "\n"
    OOM_COUNT
    "if read -r p o0 <\"$d/$1\" 2>/dev/null; then\n"
    "  oomc; [ \"${o:-0}\" -gt \"${o0:-0}\" ] && : >\"$d/$1.oom\"\n"
    "  rm -f \"$d/$1\" \"$d/$1.sh\"\n"
    "fi\n"
    "for m in timeout cancel oom; do [ -e \"$d/$1.$m\" ] && echo \"$m\"; done\n"
    "rm -f \"$d/$1.timeout\" \"$d/$1.cancel\" \"$d/$1.oom\" \"$d/$1.disk\"\n"
    "exit 0\n";

/*
 * The numbers are the container's claim: shown as such in the status,
 * never used to decide anything.
 */
const char SCRIPT_USAGE[] =
    "set -- $(du -sx -B1 /sandbox 2>/dev/null); u=$1\n"
    "set -- $(df -P -B1 /sandbox 2>/dev/null | tail -n 1)\n"
    "echo \"${u:--1} ${4:--1} ${2:--1}\"\n";

/*
 * $1 FILE_TTL seconds. Prints, per entry removed, "R BYTES NAME"; per entry
 * it could not remove, "F NAME"; and last "T REMOVED KEPT FAILED BYTES".
 * At most 100 R lines; every removal still counts in T.
 *
 * Names are printed %q-quoted and cut short; the caller reads at most
 * OUT_MAX bytes and parses every line as hostile, and the pass has a
 * server-side deadline. --one-file-system and -xdev keep it inside the
 * volume when the model mounts something under /sandbox.
 */
const char SCRIPT_CLEANUP[] =
    "LC_ALL=C\n"
    "ttl=$1\n"
    "case $ttl in ''|*[!0-9]*) exit 2;; esac\n"
    "[ \"$ttl\" -ge 60 ] || exit 2\n"
    "cd /sandbox || exit 3\n"
    "dev=$(stat -c %d /sandbox) || exit 3\n"
    "cutoff=$((EPOCHSECONDS - ttl))\n"
    "shopt -s dotglob nullglob\n"
    "removed=0 kept=0 failed=0 bytes=0 shown=0\n"
    "for e in /sandbox/*; do\n"
    "  n=${e#/sandbox/}\n"
    "  if [ ! -L \"$e\" ] && [ \"$(stat -c %d -- \"$e\" 2>/dev/null)\" != \"$dev\" ]; then\n"
    "    kept=$((kept + 1)); continue\n"
    "  fi\n"
    "  if ! hit=$(find \"$e\" -xdev -newermt \"@$cutoff\" -print -quit 2>/dev/null)"
    " || [ -n \"$hit\" ]; then\n"
    "    kept=$((kept + 1)); continue\n"
    "  fi\n"
    "  b=0; read -r b _ < <(du -sx -B1 -- \"$e\" 2>/dev/null)\n"
    "  case $b in ''|*[!0-9]*) b=0;; esac\n"
    "  printf -v q %q \"$n\"; q=${q:0:" "300" "}\n"
    "  if rm -rf --one-file-system -- \"$e\" 2>/dev/null && [ ! -e \"$e\" ] && [ ! -L \"$e\" ]; then\n"
    "    removed=$((removed + 1)); bytes=$((bytes + b))\n"
    "    if [ $shown -lt 100 ]; then printf 'R %s %s\\n' \"$b\" \"$q\"; shown=$((shown + 1)); fi\n"
    "  else\n"
    "    failed=$((failed + 1)); printf 'F %s\\n' \"$q\"\n"
    "  fi\n"
    "done\n"
    "printf 'T %s %s %s %s\\n' $removed $kept $failed $bytes\n";

/*
 * $1 folder, $2 kind, $3 "head" or "get". One 'A' on stdout, then the archive.
 *
 * The 'A' only tells that the script started; the archive after it is
 * passed on as bytes, never parsed, and the server ends the download on its
 * own clock whatever timeout(1) in the container does.
 */
const char SCRIPT_ARCHIVE[] =
    "[ -d \"$1\" ] || exit 3\n"
    "cd -- \"$(dirname -- \"$1\")\" || exit 3\n"
    "b=$(basename -- \"$1\")\n"
    "printf A\n"
    "[ \"$3\" = head ] && exit 0\n"
    "if [ \"$2\" = zip ]; then\n"
    "  exec timeout 3600 zip -q -r - \"./$b\"\n"
    "else\n"
    "  exec timeout 3600 tar -czf - -- \"$b\"\n"
    "fi\n";

/*
 * The folder may be anything the model made (a link, a file): the
 * upload only ever writes into the sandbox the model already owns.
 */
const char SCRIPT_UPLOAD_PREPARE[] =
    "mkdir -p -- \"$1\" && cd -- \"$1\" || exit 1\n"
    /* Hidden folders of uploads cut off more than a day ago. */
    "find . -maxdepth 1 -name '.cs-up-*' -mmin +1440 -exec rm -rf -- {} + "
    "2>/dev/null\n"
    "exit 0\n";

/*
 * $1 folder, $2 hidden folder, $3 name, $4 overwrite. link(2) (ln -T)
 * fails when the name exists, so a file is never replaced unless asked;
 * the next free "stem (N).ext" is taken instead.
 *
 * The printed name is checked by the caller (not empty, no '/') before
 * it is stored or shown.
 */
const char SCRIPT_UPLOAD_FINISH[] =
    "cd -- \"$1\" || exit 1\n"
    "t=$2 n=$3 f=$3\n"
    "if [ \"$4\" = 1 ] && [ ! -d \"$n\" ]; then\n"
    "  mv -fT -- \"$t/$n\" \"$n\" || exit 1\n"
    "else\n"
    "  case $n in ?*.*) stem=${n%.*} ext=.${n##*.} ;; *) stem=$n ext= ;; esac\n"
    "  i=1\n"
    "  until ln -T -- \"$t/$n\" \"$f\" 2>/dev/null; do\n"
    "    [ -e \"$f\" ] || [ -L \"$f\" ] || exit 1\n"
    "    i=$((i + 1)); [ $i -gt 1000 ] && exit 1\n"
    "    f=\"$stem ($i)$ext\"\n"
    "  done\n"
    "fi\n"
    "rm -rf -- \"$t\"\n"
    "printf '%s' \"$f\"\n";

/*
 * Removes only below the folder the upload named.
 */
const char SCRIPT_UPLOAD_DISCARD[] = "rm -rf -- \"$1/$2\"\n";

/*
 * $1 policy, $2 gateway. UDP to port 9 (discard) of the gateway, an
 * address of the host, so the canary never sends a packet off this
 * machine. The rule rejects it with icmp-admin-prohibited, which a
 * connected UDP socket reports at the next write as EHOSTUNREACH ("No
 * route to host"); without the rule the host answers port-unreachable
 * ("Connection refused"). ICMP errors are rate-limited per peer (about
 * one a second after a burst of six): with no answer in a second the
 * probe waits for the bucket to refill and tries once more.
 *
 * With the egress proxy, $3 its port: the proxy must answer there, and
 * TCP to the gateway's port 443 must reach it too (the packet filter's
 * redirect of every port 443 to it: without that, HTTPS bypasses the
 * proxy). A proxy that does not answer is said, not failed (it lets
 * nothing through). With $4 "hosts" (SANDBOX_EGRESS_HOSTS), TCP to a
 * documentation address (192.0.2.1, TEST-NET-1, never routed) must be
 * refused at once by the host's reset, as every forwarded packet but DNS
 * is; it leaves the host only when that rule is missing.
 *
 * The container can print anything: its line is parsed as hostile
 * (netpolicy_canary_parse) and is only the container's report of the
 * policy, next to the host's own check of the rules.
 */
const char SCRIPT_PROXY_CA[] =
    "f=/usr/local/share/ca-certificates/code-sandbox-proxy.crt\n"
    "b=/etc/ssl/certs/ca-certificates.crt\n"
    "line=$(printf '%s\\n' \"$1\" | tail -n 2 | head -n 1)\n"
    "if [ -f \"$f\" ] && [ \"$(cat \"$f\")\" = \"$1\" ] && grep -qxF -- \"$line\" \"$b\" 2>/dev/null; then\n"
    "  echo same; exit 0\n"
    "fi\n"
    "mkdir -p /usr/local/share/ca-certificates /etc/ssl/certs || exit 1\n"
    "printf '%s\\n' \"$1\" > \"$f.tmp\" && mv -f \"$f.tmp\" \"$f\" || exit 1\n"
    /* The bundle and the hashed folder, as update-ca-certificates would. */
    "grep -qxF -- \"$line\" \"$b\" 2>/dev/null || cat \"$f\" >> \"$b\" || exit 1\n"
    "if command -v openssl >/dev/null 2>&1; then\n"
    "  h=$(openssl x509 -hash -noout -in \"$f\" 2>/dev/null) &&\n"
    "    ln -sfn \"$f\" \"/etc/ssl/certs/$h.0\"\n"
    "fi\n"
    "echo installed\n";

const char SCRIPT_CANARY[] =
    "if [ \"$1\" = none ]; then\n"
    "  for i in /sys/class/net/*; do\n"
    "    [ \"${i##*/}\" = lo ] || { echo \"open interface ${i##*/}\"; exit 0; }\n"
    "  done\n"
    "  echo 'blocked no network interface but lo'; exit 0\n"
    "fi\n"
    "probe() {\n"
    "  exec 3<>\"/dev/udp/$1/9\" || { m=cannot-open; return; }\n"
    "  i=0 m=\n"
    "  while [ $i -lt 20 ]; do\n"
    "    m=$( { printf x >&3; } 2>&1 ) && m=\n"
    "    [ -n \"$m\" ] && break\n"
    "    sleep 0.05; i=$((i + 1))\n"
    "  done\n"
    "  exec 3>&-\n"
    "}\n"
    "probe \"$2\"\n"
    "[ -z \"$m\" ] && { sleep 1.2; probe \"$2\"; }\n"
    "case $m in\n"
    "*'No route to host'*) v=\"$2 UDP port 9 rejected (No route to host)\";;\n"
    "*'Connection refused'*) echo \"open $2 UDP port 9 answered by the host (Connection refused): no rule\"; exit 0;;\n"
    "'') echo \"unexpected no answer from $2 UDP port 9 (dropped, not rejected)\"; exit 0;;\n"
    "*) echo \"unexpected $2 UDP port 9: ${m##*: }\"; exit 0;;\n"
    "esac\n"
    /* The proxy: a bypass must fail (see above). */
    "tcp() { m=$(timeout 3 bash -c 'exec 3<>\"/dev/tcp/$0/$1\"' \"$1\" \"$2\" 2>&1) && m=connected; [ -n \"$m\" ] || m=timeout; }\n"
    "if [ -n \"$3\" ]; then\n"
    "  tcp \"$2\" \"$3\"\n"
    "  if [ \"$m\" != connected ]; then\n"
    "    v=\"$v; the egress proxy does not answer on $2 port $3 (${m##*: })\"\n"
    "  else\n"
    "    tcp \"$2\" 443\n"
    "    [ \"$m\" = connected ] || { echo \"open $2 TCP port 443 not sent to the egress proxy (${m##*: }): HTTPS can bypass it\"; exit 0; }\n"
    "    v=\"$v; TCP port 443 sent to the egress proxy\"\n"
    "  fi\n"
    "fi\n"
    "if [ \"$4\" = hosts ]; then\n"
    "  tcp 192.0.2.1 9\n"
    "  case $m in\n"
    "  *'Connection refused'*) v=\"$v; TCP to 192.0.2.1 port 9 refused (names only)\";;\n"
    "  *) echo \"open TCP to 192.0.2.1 port 9 not refused (${m##*: }) though SANDBOX_EGRESS_HOSTS allows names only\"; exit 0;;\n"
    "  esac\n"
    "fi\n"
    "echo \"blocked $v\"\n";

