#!/bin/sh
# A fixed-size file system for /sandbox: an ext4 image file on a loop
# device, mounted on the host and given to Docker as the sandbox's volume
# (a local volume bound to the mount point). A full sandbox then gets
# ENOSPC from the kernel, and the host's disk (with the SQLite file) keeps
# its room. Root only.
#
#   sandbox-disk.sh create [--env-file F] [--volume NAME] [--size SIZE]
#   sandbox-disk.sh mount-all    mount every image again (at boot, before
#                                Docker starts the container: systemd unit
#                                code-sandbox-disk.service)
#   sandbox-disk.sh remove [--env-file F] [--volume NAME]
#
# The volume and size come from the arguments, else the env file
# (SANDBOX_VOLUME, SANDBOX_DISK_LIMIT), else code-sandbox-data and 10g.
# Images live in CS_DISK_DIR (default /var/lib/code-sandbox/disk): NAME.img
# and the mount point NAME/. create refuses an existing volume of another
# kind (its files would be hidden): move them first, or keep the watchdog.
# Where loop devices cannot be used (some containers and VMs), create
# exits 3 and says so: the server then bounds /sandbox with its watchdog.
set -eu

cmd=${1:-}
[ $# -gt 0 ] && shift
env_file= volume= size=
while [ $# -gt 0 ]; do
	case $1 in
	--env-file) env_file=$2; shift 2 ;;
	--volume) volume=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	*) echo "sandbox-disk: unknown argument $1" >&2; exit 2 ;;
	esac
done

setting() {
	eval "v=\${$1:-}"
	if [ -z "$v" ] && [ -n "$env_file" ] && [ -r "$env_file" ]; then
		v=$(sed -n "s/^[[:space:]]*$1=//p" "$env_file" | tail -n 1 |
		    sed -e 's/^"\(.*\)"$/\1/' -e "s/^'\(.*\)'\$/\1/")
	fi
	printf '%s' "$v"
}
[ -n "$volume" ] || volume=$(setting SANDBOX_VOLUME)
[ -n "$size" ] || size=$(setting SANDBOX_DISK_LIMIT)
volume=${volume:-code-sandbox-data}
size=${size:-10g}
dir=${CS_DISK_DIR:-/var/lib/code-sandbox/disk}

die() { echo "sandbox-disk: $*" >&2; exit 1; }
case $volume in
*[!A-Za-z0-9_.-]*|''|[.-]*) die "bad volume name $volume" ;;
esac
case $size in
*[!0-9kKmMgGtT]*|'') die "bad size $size (bytes, or with k, m, g, t)" ;;
esac
[ "$(id -u)" = 0 ] || die "run as root (it makes a loop device and a mount)"
img=$dir/$volume.img
mnt=$dir/$volume

loop_ok() {
	command -v losetup >/dev/null 2>&1 && command -v mkfs.ext4 >/dev/null 2>&1 &&
	    losetup -f >/dev/null 2>&1
}

do_mount() {
	mountpoint -q "$mnt" && return 0
	mkdir -p "$mnt"
	mount -o loop,nodev,nosuid "$img" "$mnt"
}

case $cmd in
create)
	if docker volume inspect "$volume" >/dev/null 2>&1; then
		dev=$(docker volume inspect -f '{{index .Options "device"}}' "$volume")
		if [ "$dev" = "$mnt" ]; then
			[ -f "$img" ] && do_mount
			echo "sandbox-disk: $volume is already a fixed-size file system ($img)"
			exit 0
		fi
		die "volume $volume exists on the host's disk; the server watches its size instead (to move it onto a fixed-size file system: back it up, docker volume rm $volume, run this again, restore)"
	fi
	if ! loop_ok; then
		echo "sandbox-disk: loop devices cannot be used here; /sandbox is bounded by the server's watchdog instead" >&2
		exit 3
	fi
	mkdir -p "$dir"
	chmod 700 "$dir"
	[ -f "$img" ] && die "$img exists without its volume: remove it or run remove first"
	# Units as the server reads SANDBOX_DISK_LIMIT (k, m, g: powers of 1024).
	truncate -s "$(printf %s "$size" | tr 'kmgt' 'KMGT')" "$img"
	mkfs.ext4 -q -F -m 0 "$img" >/dev/null
	do_mount
	docker volume create --driver local --opt type=none --opt o=bind \
	    --opt device="$mnt" --label code-sandbox=data \
	    --label code-sandbox.disk=fixed "$volume" >/dev/null
	echo "sandbox-disk: $volume is a $size file system ($img on a loop device, mounted at $mnt)"
	;;
mount-all)
	for f in "$dir"/*.img; do
		[ -f "$f" ] || continue
		img=$f
		mnt=${f%.img}
		do_mount
	done
	;;
remove)
	docker volume rm -f "$volume" >/dev/null 2>&1 || true
	if mountpoint -q "$mnt"; then umount "$mnt"; fi
	rm -f "$img"
	[ -d "$mnt" ] && rmdir "$mnt"
	echo "sandbox-disk: removed $volume ($img)"
	;;
*)
	echo "usage: sandbox-disk.sh create|mount-all|remove [--env-file F] [--volume NAME] [--size SIZE]" >&2
	exit 2 ;;
esac
