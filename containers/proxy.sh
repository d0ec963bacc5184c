#!/bin/sh
# The sandbox's egress proxy: Debian's squid-openssl, run by code-sandbox as
# a service of its own (containers/systemd/code-sandbox-proxy.service, and
# make run). Its configuration is written by the programs from the settings
# and the secrets (sandboxctl proxy-config: SANDBOX_PROXY_DIR/squid.conf;
# lib/sandbox/proxy.h says what it holds); this script adds what only the
# host knows and runs squid in the foreground.
#
#   proxy.sh run   [--env-file F] [--listen ADDR --subnet CIDR]   foreground
#   proxy.sh start [--env-file F] ...   in the background (make run)
#   proxy.sh stop  [--env-file F]       the one start or run started
#   proxy.sh check [--env-file F] [--listen ADDR --subnet CIDR]
#
# In SANDBOX_PROXY_DIR (mode 750, group of the proxy's user):
#   ca.pem, ca.key  the per-installation CA (made once; the sandbox trusts
#                   ca.pem, the key never leaves this folder)
#   listen.conf     the ports on the sandbox network's gateway (or --listen):
#                   PORT for clients that use the proxy, PORT+1 and PORT+2
#                   for HTTP and HTTPS the packet filter redirects to it
#                   (containers/netpolicy.sh), and the acl "sandbox" (the
#                   network's range, or --subnet)
#   ssl_db/         the certificates made for the bumped hosts
#   cache.log, access.log (no header is logged)
# check prints squid's own check of the configuration without the lines
# that carry a secret's header.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cmd=${1:-}
[ $# -gt 0 ] && shift
env_file='' listen='' subnet=''
while [ $# -gt 0 ]; do
	case $1 in
	--env-file) env_file=$2; shift 2 ;;
	--listen) listen=$2; shift 2 ;;
	--subnet) subnet=$2; shift 2 ;;
	*) echo "proxy: unknown argument $1" >&2; exit 2 ;;
	esac
done
die() { echo "proxy: $*" >&2; exit 1; }

ctl=${CS_SANDBOXCTL:-}
if [ -z "$ctl" ]; then
	for c in "$here/../build/bin/sandboxctl" "$here/../../../sbin/sandboxctl"; do
		[ -x "$c" ] && { ctl=$c; break; }
	done
fi
[ -n "$ctl" ] || ctl=sandboxctl
[ -n "$env_file" ] && export SANDBOX_ENV_FILE="$env_file"
command -v squid >/dev/null 2>&1 || die "squid is not installed (the Debian package squid-openssl)"

# The configuration, and where things are (checked values, no spaces).
out=$("$ctl" proxy-config) || die "sandboxctl proxy-config failed"
dir=$(printf '%s\n' "$out" | sed -n 's/^dir=//p')
port=$(printf '%s\n' "$out" | sed -n 's/^port=//p')
network=$(printf '%s\n' "$out" | sed -n 's/^network=//p')
case $port in ''|*[!0-9]*) die "bad port $port" ;; esac
[ "$port" -le 65533 ] || die "SANDBOX_PROXY_PORT: at most 65533 (it uses three ports)"

if [ -z "$listen" ]; then
	[ "$network" != none ] || die "SANDBOX_EGRESS is none: no network, no proxy"
	listen=$(docker network inspect -f '{{range .IPAM.Config}}{{.Gateway}} {{end}}' "$network" | awk '{print $1}')
	subnet=$(docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}} {{end}}' "$network" | awk '{print $1}')
fi
valid() { printf '%s\n' "$1" | grep -Eq '^[0-9]{1,3}(\.[0-9]{1,3}){3}(/[0-9]{1,2})?$'; }
valid "$listen" || die "no gateway address for network $network (got '$listen')"
valid "$subnet" || die "no address range for network $network (got '$subnet')"

user=$(id -un)
if [ "$(id -u)" = 0 ]; then
	user=proxy
	id proxy >/dev/null 2>&1 || die "no user proxy (the squid package makes it)"
	chgrp proxy "$dir"
fi
chmod 750 "$dir"
umask 027
if [ ! -s "$dir/ca.pem" ] || [ ! -s "$dir/ca.key" ]; then
	rm -f "$dir/ca.pem" "$dir/ca.key" "$dir/ca.key.tmp"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -sha256 -days 3650 \
	    -keyout "$dir/ca.key.tmp" -out "$dir/ca.pem" \
	    -subj "/O=code-sandbox/CN=code-sandbox egress proxy CA $(hostname | tr -cd 'A-Za-z0-9.-')" \
	    -addext basicConstraints=critical,CA:TRUE \
	    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
	chmod 640 "$dir/ca.key.tmp"
	mv "$dir/ca.key.tmp" "$dir/ca.key"
	chmod 644 "$dir/ca.pem"
	rm -rf "$dir/ssl_db"
	echo "proxy: made the installation's CA ($dir/ca.pem)"
fi
if [ ! -d "$dir/ssl_db" ]; then
	/usr/lib/squid/security_file_certgen -c -s "$dir/ssl_db" -M 4MB >/dev/null
fi
tls="tls-cert=$dir/ca.pem tls-key=$dir/ca.key generate-host-certificates=on dynamic_cert_mem_cache_size=4MB"
{
	echo "# Written by containers/proxy.sh: the host's part."
	echo "http_port $listen:$port ssl-bump $tls"
	echo "http_port $listen:$((port + 1)) intercept"
	echo "https_port $listen:$((port + 2)) intercept ssl-bump $tls"
	echo "acl sandbox src $subnet"
	[ "$user" = proxy ] && echo "cache_effective_user proxy"
	true
} > "$dir/listen.conf.tmp"
mv "$dir/listen.conf.tmp" "$dir/listen.conf"
# squid's error pages, and the one that names SANDBOX_EGRESS_HOSTS.
rm -rf "$dir/errors.tmp"
mkdir -p "$dir/errors.tmp"
cp /usr/share/squid/errors/templates/* "$dir/errors.tmp/"
cat > "$dir/errors.tmp/ERR_CS_EGRESS_HOSTS" <<'PAGE'
<html><head><title>Refused by SANDBOX_EGRESS_HOSTS</title></head><body>
<p>code-sandbox: %H is not one of the hosts this sandbox may reach
(SANDBOX_EGRESS_HOSTS, set by the server's operator). Only the hosts listed
there are reachable, over HTTP and HTTPS.</p>
</body></html>
PAGE
chmod -R a+rX "$dir/errors.tmp"
rm -rf "$dir/errors"
mv "$dir/errors.tmp" "$dir/errors"
touch "$dir/cache.log" "$dir/access.log"
if [ "$(id -u)" = 0 ]; then
	chgrp proxy "$dir/ca.key" "$dir/listen.conf" "$dir/squid.conf"
	chown -R proxy:proxy "$dir/ssl_db" "$dir/cache.log" "$dir/access.log"
fi

# squid's check prints every line it reads: not those with a value.
check() {
	squid -k parse -f "$dir/squid.conf" 2>&1 |
	    grep -v -e 'request_header_add' -e 'Bungled' || true
	squid -k parse -f "$dir/squid.conf" >/dev/null 2>&1
}

case $cmd in
check)
	check ;;
stop)
	if [ -s "$dir/squid.pid" ]; then
		squid -k shutdown -f "$dir/squid.conf" 2>/dev/null || true
		echo "proxy: stopped"
	fi ;;
start)
	if ! check >/dev/null; then
		check | grep -E 'FATAL|ERROR|WARNING' >&2 || true
		die "the configuration in $dir/squid.conf does not pass squid's check"
	fi
	squid -k shutdown -f "$dir/squid.conf" >/dev/null 2>&1 || true
	i=0
	while [ -s "$dir/squid.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	squid -f "$dir/squid.conf"
	echo "proxy: started on $listen:$port (and $((port + 1)), $((port + 2)) for redirected traffic), network $subnet; logs in $dir"
	;;
run)
	if ! check >/dev/null; then
		check | grep -E 'FATAL|ERROR|WARNING' >&2 || true
		die "the configuration in $dir/squid.conf does not pass squid's check"
	fi
	echo "proxy: listening on $listen:$port (and $((port + 1)), $((port + 2)) for redirected traffic), network $subnet"
	exec squid -N -f "$dir/squid.conf"
	;;
*)
	echo "usage: proxy.sh run|start|stop|check [--env-file F] [--listen ADDR --subnet CIDR]" >&2
	exit 2 ;;
esac
