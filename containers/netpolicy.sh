#!/bin/sh
# The sandbox's egress policy on the host: a dedicated Docker bridge network
# and firewall rules scoped to that bridge. Root only; idempotent.
#
#   netpolicy.sh apply   [--env-file F] [--network NAME] [--policy P]
#                        [--allow "CIDR ..."] [--dns "IP ..."]
#                        [--proxy-port PORT | --no-proxy] [--hosts-only | --any-host]
#   netpolicy.sh reapply     the rules again for every network applied
#                            here (kept in /var/lib/code-sandbox/netpolicy;
#                            after a host or dockerd restart: systemd unit
#                            code-sandbox-firewall.service, ensure-docker.sh)
#   netpolicy.sh check   [--env-file F] [--network NAME]   exit 0 when present
#   netpolicy.sh remove  [--env-file F] [--network NAME] [--keep-network]
#
# Settings come from the arguments, else the env file (SANDBOX_EGRESS,
# SANDBOX_NETWORK, SANDBOX_EGRESS_ALLOW, SANDBOX_DNS), else the defaults
# (internet, code-sandbox, none, the host's resolvers). With SANDBOX_PROXY=1
# (or --proxy-port), the egress proxy (containers/proxy.sh) listens on the
# gateway at SANDBOX_PROXY_PORT (default 3129) and the two after it: those
# three ports are the one host address the sandbox may reach, and TCP to
# ports 80 and 443 anywhere is redirected to the proxy (nat chain
# CSNAT-BRIDGE in PREROUTING), so ignoring proxy variables does not bypass
# it. With SANDBOX_EGRESS_HOSTS set (or --hosts-only), nothing else leaves
# the bridge: after DNS to the resolvers, every forwarded packet is
# rejected (the proxy enforces the names).
#
# Policy "internet" (the default): the network "NAME" is a bridge named
# cs-<10 hex of sha256(NAME)> with inter-container traffic off and no IPv6,
# Docker's dynamic range the lower half of its subnet (the upper half holds
# owners' fixed addresses: lib/sandbox/owneraddr.h).
# Traffic entering the host from that bridge goes through two chains:
#
#   FORWARD -> DOCKER-USER -i BRIDGE -> CSFWD-BRIDGE   (to other machines)
#     established replies, DNS to the resolvers, the allow-list: RETURN
#     (Docker's own rules then accept it); link-local, loopback, private
#     ranges (RFC 1918), CGNAT, multicast, "this network", reserved and
#     broadcast: REJECT, never a silent drop: TCP with a reset (connect
#     fails at once with ECONNREFUSED; resets are not rate-limited as ICMP
#     errors are), anything else with icmp-admin-prohibited (EHOSTUNREACH,
#     "No route to host": the server's canary looks for it over UDP);
#     everything else: RETURN.
#   INPUT -i BRIDGE -> CSIN-BRIDGE                     (to the host itself,
#     every address of it, the gateway included)
#     established replies, DNS to resolvers and the allow-list: RETURN;
#     everything else: REJECT (the same two ways).
#
# IPv6: the network has none; ip6tables rejects anything from the bridge
# as well (link-local fe80:: would otherwise reach the host).
# The chains are written with iptables-restore --noflush: each chain is
# replaced in one transaction, so there is never a moment without rules.
# Nothing here touches loopback, docker0 or other bridges: every rule
# matches -i BRIDGE.
set -eu

cmd=${1:-}
[ $# -gt 0 ] && shift

env_file= network= policy= allow= dns= keep_network=0 proxy_port=
set_network= set_policy= set_allow= set_dns= set_proxy= hosts_only= set_hosts=
while [ $# -gt 0 ]; do
	case $1 in
	--env-file) env_file=$2; shift 2 ;;
	--network) network=$2; set_network=1; shift 2 ;;
	--policy) policy=$2; set_policy=1; shift 2 ;;
	--allow) allow=$2; set_allow=1; shift 2 ;;
	--dns) dns=$2; set_dns=1; shift 2 ;;
	--keep-network) keep_network=1; shift ;;
	--proxy-port) proxy_port=$2; set_proxy=1; shift 2 ;;
	--no-proxy) proxy_port=; set_proxy=1; shift ;;
	--hosts-only) hosts_only=1; set_hosts=1; shift ;;
	--any-host) hosts_only=; set_hosts=1; shift ;;
	*) echo "netpolicy: unknown argument $1" >&2; exit 2 ;;
	esac
done

# The value of KEY in the env file (last one wins), environment first.
setting() {
	eval "v=\${$1:-}"
	if [ -z "$v" ] && [ -n "$env_file" ] && [ -r "$env_file" ]; then
		v=$(sed -n "s/^[[:space:]]*$1=//p" "$env_file" | tail -n 1 |
		    sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'\$/\1/")
	fi
	printf '%s' "$v"
}
[ -n "$set_network" ] || network=$(setting SANDBOX_NETWORK)
[ -n "$set_policy" ] || policy=$(setting SANDBOX_EGRESS)
[ -n "$set_allow" ] || allow=$(setting SANDBOX_EGRESS_ALLOW)
[ -n "$set_dns" ] || dns=$(setting SANDBOX_DNS)
network=${network:-code-sandbox}
policy=${policy:-internet}
if [ -z "$set_proxy" ]; then
	case $(setting SANDBOX_PROXY) in
	1|true|yes|on) proxy_port=$(setting SANDBOX_PROXY_PORT); proxy_port=${proxy_port:-3129} ;;
	esac
fi
if [ -z "$set_hosts" ] && [ -n "$(setting SANDBOX_EGRESS_HOSTS)" ]; then
	hosts_only=1
fi
if [ -n "$hosts_only" ] && [ -z "$proxy_port" ]; then
	echo "netpolicy: SANDBOX_EGRESS_HOSTS needs the proxy (SANDBOX_PROXY=1 or --proxy-port)" >&2
	exit 2
fi
case $proxy_port in
'') ;;
*[!0-9]*) echo "netpolicy: bad proxy port $proxy_port" >&2; exit 2 ;;
*) if [ "$proxy_port" -lt 1 ] || [ "$proxy_port" -gt 65533 ]; then
	echo "netpolicy: bad proxy port $proxy_port" >&2; exit 2
   fi ;;
esac

case $network in
*[!A-Za-z0-9_.-]*|''|[.-]*) echo "netpolicy: bad network name $network" >&2; exit 2 ;;
esac
bridge=cs-$(printf %s "$network" | sha256sum | cut -c1-10)
fwd=CSFWD-$bridge
inp=CSIN-$bridge
nat=CSNAT-$bridge
tag=code-sandbox:$bridge
# What apply last installed per network, for reapply.
state=${CS_NETPOLICY_STATE:-/var/lib/code-sandbox/netpolicy}

die() { echo "netpolicy: $*" >&2; exit 1; }

# An IPv4 address or CIDR, checked strictly (it goes into a rule).
valid_cidr() {
	printf '%s\n' "$1" | grep -Eq \
	    '^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}(/([0-9]|[12][0-9]|3[0-2]))?$'
}

# The resolvers the sandbox's DNS goes to. On a user-defined network the
# container asks Docker's embedded resolver (127.0.0.11, inside its own
# namespace), which forwards from that namespace to the host's upstream
# resolvers: those cross the bridge and must be allowed, port 53 only.
resolvers() {
	if [ -n "$dns" ]; then
		printf '%s\n' $dns
		return
	fi
	r=$(sed -n 's/^[[:space:]]*nameserver[[:space:]]\+\([0-9.]*\)[[:space:]]*$/\1/p' \
	    /etc/resolv.conf 2>/dev/null | grep -v '^127\.' || true)
	if [ -z "$r" ] && [ -r /run/systemd/resolve/resolv.conf ]; then
		r=$(sed -n 's/^[[:space:]]*nameserver[[:space:]]\+\([0-9.]*\)[[:space:]]*$/\1/p' \
		    /run/systemd/resolve/resolv.conf | grep -v '^127\.' || true)
	fi
	printf '%s\n' $r
}

# Blocked destinations for forwarded traffic (IPv4).
BLOCKED="0.0.0.0/8 10.0.0.0/8 100.64.0.0/10 127.0.0.0/8 169.254.0.0/16
172.16.0.0/12 192.168.0.0/16 224.0.0.0/4 240.0.0.0/4"

network_exists() { docker network inspect "$network" >/dev/null 2>&1; }

make_network() {
	if network_exists; then
		b=$(docker network inspect -f '{{index .Options "com.docker.network.bridge.name"}}' "$network")
		[ "$b" = "$bridge" ] || die "network $network exists with bridge '$b', not $bridge: remove it (docker network rm $network) and run again"
		icc=$(docker network inspect -f '{{index .Options "com.docker.network.bridge.enable_icc"}}' "$network")
		[ "$icc" = false ] || die "network $network allows inter-container traffic: remove it and run again"
		range=$(docker network inspect -f '{{range .IPAM.Config}}{{.IPRange}}{{end}}' "$network")
		[ -n "$range" ] || echo "netpolicy: note: network $network has no dynamic range of its own (made by an older version): owners' own secrets are not added until it is made again (remove, then apply)" >&2
		return
	fi
	# Docker's dynamic range is the subnet's lower half; the upper half is
	# for owners' fixed addresses (lib/sandbox/owneraddr.h), which Docker
	# then never gives to another container. Docker picks a free subnet
	# for a first network of the name, made again with the range.
	docker network create --driver bridge --label code-sandbox=probe \
	    "$network" >/dev/null
	sub=$(docker network inspect -f '{{(index .IPAM.Config 0).Subnet}}' "$network")
	gw=$(docker network inspect -f '{{(index .IPAM.Config 0).Gateway}}' "$network")
	docker network rm "$network" >/dev/null
	valid_cidr "$sub" || die "Docker gave network $network no IPv4 subnet (got '$sub')"
	valid_cidr "$gw" || die "Docker gave network $network no gateway (got '$gw')"
	bits=${sub#*/}
	[ "$bits" -le 29 ] || die "Docker gave network $network too small a subnet ($sub)"
	docker network create --driver bridge \
	    --subnet "$sub" --ip-range "${sub%/*}/$((bits + 1))" --gateway "$gw" \
	    --opt com.docker.network.bridge.name="$bridge" \
	    --opt com.docker.network.bridge.enable_icc=false \
	    --label code-sandbox=network \
	    "$network" >/dev/null
	echo "netpolicy: created network $network (bridge $bridge, $sub, no inter-container traffic, IPv4 only)"
}

ipt() { iptables -w 10 "$@"; }
ip6() { ip6tables -w 10 "$@"; }

rules() {
	{
		echo '*filter'
		echo ":$fwd - [0:0]"
		echo ":$inp - [0:0]"
		echo "-A $fwd -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN"
		echo "-A $inp -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN"
		for r in $(resolvers); do
			valid_cidr "$r" || die "bad resolver address $r"
			for p in udp tcp; do
				echo "-A $fwd -d $r/32 -p $p --dport 53 -j RETURN"
				echo "-A $inp -d $r/32 -p $p --dport 53 -j RETURN"
			done
		done
		# Names only: nothing else is forwarded (the proxy runs on the host).
		if [ -n "$hosts_only" ]; then
			echo "-A $fwd -p tcp -j REJECT --reject-with tcp-reset"
			echo "-A $fwd -j REJECT --reject-with icmp-admin-prohibited"
		fi
		for a in $allow; do
			valid_cidr "$a" || die "SANDBOX_EGRESS_ALLOW: $a is not an IPv4 address or CIDR"
			echo "-A $fwd -d $a -j RETURN"
			echo "-A $inp -d $a -j RETURN"
		done
		for b in $BLOCKED; do
			echo "-A $fwd -d $b -p tcp -j REJECT --reject-with tcp-reset"
			echo "-A $fwd -d $b -j REJECT --reject-with icmp-admin-prohibited"
		done
		echo "-A $fwd -j RETURN"
		if [ -n "$proxy_port" ]; then
			echo "-A $inp -p tcp --dport $proxy_port:$((proxy_port + 2)) -j RETURN"
		fi
		echo "-A $inp -p tcp -j REJECT --reject-with tcp-reset"
		echo "-A $inp -j REJECT --reject-with icmp-admin-prohibited"
		echo COMMIT
	} | iptables-restore -w 10 --noflush
	# Docker creates DOCKER-USER; at boot this may run first.
	ipt -n -L DOCKER-USER >/dev/null 2>&1 || ipt -N DOCKER-USER
	ipt -C DOCKER-USER -i "$bridge" -j "$fwd" 2>/dev/null ||
	    ipt -I DOCKER-USER 1 -i "$bridge" -j "$fwd"
	ipt -C INPUT -i "$bridge" -j "$inp" 2>/dev/null ||
	    ipt -I INPUT 1 -i "$bridge" -j "$inp"
	# HTTP and HTTPS to the proxy, whatever the sandbox asks for.
	{
		echo '*nat'
		echo ":$nat - [0:0]"
		if [ -n "$proxy_port" ]; then
			echo "-A $nat -p tcp --dport 80 -j REDIRECT --to-ports $((proxy_port + 1))"
			echo "-A $nat -p tcp --dport 443 -j REDIRECT --to-ports $((proxy_port + 2))"
		fi
		echo COMMIT
	} | iptables-restore -w 10 --noflush
	ipt -t nat -C PREROUTING -i "$bridge" -j "$nat" 2>/dev/null ||
	    ipt -t nat -I PREROUTING 1 -i "$bridge" -j "$nat"
	if command -v ip6tables >/dev/null 2>&1 && ip6 -n -L INPUT >/dev/null 2>&1; then
		for ch in INPUT FORWARD; do
			ip6 -C "$ch" -i "$bridge" -m comment --comment "$tag" -j REJECT 2>/dev/null ||
			    ip6 -I "$ch" 1 -i "$bridge" -m comment --comment "$tag" -j REJECT
		done
	fi
}

unrules() {
	while ipt -D DOCKER-USER -i "$bridge" -j "$fwd" 2>/dev/null; do :; done
	while ipt -D INPUT -i "$bridge" -j "$inp" 2>/dev/null; do :; done
	for ch in "$fwd" "$inp"; do
		if ipt -n -L "$ch" >/dev/null 2>&1; then
			ipt -F "$ch"
			ipt -X "$ch"
		fi
	done
	while ipt -t nat -D PREROUTING -i "$bridge" -j "$nat" 2>/dev/null; do :; done
	if ipt -t nat -n -L "$nat" >/dev/null 2>&1; then
		ipt -t nat -F "$nat"
		ipt -t nat -X "$nat"
	fi
	if command -v ip6tables >/dev/null 2>&1; then
		for ch in INPUT FORWARD; do
			while ip6 -D "$ch" -i "$bridge" -m comment --comment "$tag" -j REJECT 2>/dev/null; do :; done
		done
	fi
}

check() {
	ok=0
	ipt -C DOCKER-USER -i "$bridge" -j "$fwd" 2>/dev/null || { echo "missing: DOCKER-USER -i $bridge -j $fwd"; ok=1; }
	ipt -C INPUT -i "$bridge" -j "$inp" 2>/dev/null || { echo "missing: INPUT -i $bridge -j $inp"; ok=1; }
	ipt -S "$fwd" 2>/dev/null | grep -q -- '-j REJECT' || { echo "missing: chain $fwd"; ok=1; }
	ipt -S "$inp" 2>/dev/null | grep -q -- '-j REJECT' || { echo "missing: chain $inp"; ok=1; }
	[ "$ok" = 0 ] && echo "present: network $network, bridge $bridge"
	return $ok
}

[ "$(id -u)" = 0 ] || die "run as root (it changes the host's firewall)"

case $cmd in
apply)
	case $policy in
	internet)
		make_network
		rules
		mkdir -p "$state"
		printf 'allow=%s\ndns=%s\nproxy=%s\nhosts=%s\n' "$allow" "$dns" "$proxy_port" "$hosts_only" >"$state/$network"
		echo "netpolicy: rules for $network (bridge $bridge) in place"
		;;
	none|open)
		echo "netpolicy: policy $policy needs no network or rules" ;;
	*) die "SANDBOX_EGRESS must be internet, none or open, not $policy" ;;
	esac
	;;
reapply)
	for f in "$state"/*; do
		[ -f "$f" ] || continue
		n=$(basename "$f")
		a=$(sed -n 's/^allow=//p' "$f")
		d=$(sed -n 's/^dns=//p' "$f")
		p=$(sed -n 's/^proxy=//p' "$f")
		h=$(sed -n 's/^hosts=//p' "$f")
		if [ -n "$p" ] && [ -n "$h" ]; then
			"$0" apply --network "$n" --policy internet --allow "$a" --dns "$d" --proxy-port "$p" --hosts-only
		elif [ -n "$p" ]; then
			"$0" apply --network "$n" --policy internet --allow "$a" --dns "$d" --proxy-port "$p" --any-host
		else
			"$0" apply --network "$n" --policy internet --allow "$a" --dns "$d" --no-proxy --any-host
		fi
	done
	;;
check)
	check ;;
remove)
	unrules
	if [ "$keep_network" = 0 ] && network_exists; then
		docker network rm "$network" >/dev/null
	fi
	rm -f "$state/$network"
	echo "netpolicy: removed the rules of $network (bridge $bridge)"
	;;
*)
	echo "usage: netpolicy.sh apply|reapply|check|remove [--env-file F] [--network N] [--policy P] [--allow CIDRS] [--dns IPS]" >&2
	exit 2 ;;
esac
