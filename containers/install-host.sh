#!/bin/sh
# The root-only part of installing code-sandbox as a service (run by
# `make install-systemd`, once, as root; safe to run again):
#   - the system user USER_NAME (default code-sandbox), in the docker group
#     when there is one (the programs reach the Docker socket through it);
#   - SYSCONFDIR/code-sandbox/env with a fresh SANDBOX_API_KEY and the
#     database under /var/lib/code-sandbox, when there is no such file
#     (mode 600, owned by the user: the programs and sandboxctl read it);
#   - systemctl daemon-reload when systemd runs.
# Nothing is enabled or started.
set -eu

user=${USER_NAME:-code-sandbox}
etc=${SYSCONFDIR:-/etc}/code-sandbox
env=$etc/env

if [ "$(id -u)" != 0 ]; then
	echo "install-host: run as root (it makes a user and $env)" >&2
	exit 1
fi

if ! getent passwd "$user" >/dev/null; then
	useradd --system --user-group --home-dir /var/lib/code-sandbox \
		--no-create-home --shell /usr/sbin/nologin \
		--comment "code-sandbox MCP server" "$user"
	echo "install-host: created system user $user"
fi
if getent group docker >/dev/null; then
	if ! id -nG "$user" | tr ' ' '\n' | grep -qx docker; then
		usermod -a -G docker "$user"
		echo "install-host: added $user to the docker group (it reaches the Docker socket)"
	fi
else
	echo "install-host: no docker group: give $user access to the Docker engine (DOCKER_HOST)" >&2
fi

install -d -m 755 "$etc"
if [ ! -e "$env" ]; then
	key=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
	(umask 077 && printf '%s\n' \
		'# code-sandbox settings (man 5 code-sandbox-settings); read by the programs,' \
		'# sandboxctl and the units. Set SANDBOX_PUBLIC_URL to the https origin' \
		'# clients use, then: systemctl restart code-sandbox-lighttpd (or caddy).' \
		"SANDBOX_API_KEY=$key" \
		'SANDBOX_DB=/var/lib/code-sandbox/state.db' > "$env")
	echo "install-host: created $env with a fresh SANDBOX_API_KEY (mode 600)"
fi
chown "$user:$user" "$env"
chmod 600 "$env"

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload
	echo "install-host: systemd reloaded; next: systemctl enable --now code-sandbox-lighttpd"
fi
