#!/bin/sh
# The source check, in the spirit of curl's scripts/checksrc.pl: no call of
# a banned function in the C files of lib/, cgi-bin/ and containers/. Each
# of these has a bounded replacement used instead (snprintf, a length and
# memcpy, strtol or strtoll with a range check, a pointer-advancing parser),
# so a new call is a mistake, not a style.
#
# Comments, string literals and character literals are blanked first (line
# numbers kept), so "sprintf(" in a comment or a message is not a call;
# snprintf, vsnprintf, fgets and strtok_r do not match.
#
# Also the one way between the areas of lib/: a folder includes only the
# folders before it in the Makefile's LIB_AREAS.
#
# Prints one line for the areas and one per banned function, "ok -
# checksrc: ..." or "not ok - checksrc: ..." followed by what was found as
# "#   FILE:LINE: ...". Exits 1 when anything was. Run by tests/run.sh.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

banned="sprintf strcat strcpy strncpy gets strtok atoi sscanf"
tmp=$(mktemp /tmp/cs-checksrc.XXXXXX)
trap 'rm -f "$tmp"' EXIT INT TERM

files=$(find lib cgi-bin containers -type f \( -name '*.c' -o -name '*.h' \) | sort)
if [ -z "$files" ]; then
	echo "not ok - checksrc: no C files found in lib/ cgi-bin/ containers/"
	exit 1
fi

# Every file as FILE:LINE:TEXT with comments and literals blanked.
# shellcheck disable=SC2086
awk '
FNR == 1 { state = "code" }	# a file never starts inside a comment
{
	out = ""
	n = length($0)
	for (i = 1; i <= n; i++) {
		c = substr($0, i, 1)
		d = substr($0, i, 2)
		if (state == "code") {
			if (d == "/*") { state = "block"; out = out "  "; i++; continue }
			if (d == "//") { for (; i <= n; i++) out = out " "; break }
			if (c == "\"") { state = "str"; out = out c; continue }
			if (c == "\047") { state = "chr"; out = out c; continue }
			out = out c
		} else if (state == "block") {
			if (d == "*/") { state = "code"; out = out "  "; i++; continue }
			out = out " "
		} else {	# in a string or a character literal
			if (c == "\\") { out = out "  "; i++; continue }
			if ((state == "str" && c == "\"") || (state == "chr" && c == "\047")) {
				state = "code"; out = out c; continue
			}
			out = out " "
		}
	}
	# A literal ends at its line unless the line is continued.
	if ((state == "str" || state == "chr") && substr($0, n, 1) != "\\")
		state = "code"
	print FILENAME ":" FNR ":" out
}' $files > "$tmp"

rc=0

# The areas of lib/ one way (docs/architecture.md): a folder includes only
# folders before it in the Makefile's LIB_AREAS. Includes of anything else
# (containers/supervisor's "supervisor/frames.h") are not areas.
areas=$(sed -n 's/^LIB_AREAS[[:space:]]*=[[:space:]]*//p' Makefile)
if [ -z "$areas" ]; then
	echo "not ok - checksrc: no LIB_AREAS in the Makefile"
	rc=1
else
	bad=$(for f in $files; do
		case "$f" in lib/*/*) ;; *) continue ;; esac
		a=${f#lib/}
		a=${a%%/*}
		grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' "$f" |
		    sed 's|^\([0-9]*\):[^"]*"\([a-z_]*\)/.*|\1 \2|' |
		while read -r line b; do
			[ "$b" = "$a" ] && continue
			ia=0 ib=0 k=0
			for x in $areas; do
				k=$((k + 1))
				[ "$x" = "$a" ] && ia=$k
				[ "$x" = "$b" ] && ib=$k
			done
			[ "$ib" -eq 0 ] && continue
			if [ "$ia" -eq 0 ] || [ "$ib" -gt "$ia" ]; then
				echo "$f:$line: $a includes $b"
			fi
		done
	done)
	if [ -z "$bad" ]; then
		echo "ok - checksrc: each lib/ folder includes only folders before it in LIB_AREAS ($(echo $areas | tr ' ' ','))"
	else
		echo "not ok - checksrc: lib/ folders that include folders after them in LIB_AREAS"
		printf '%s\n' "$bad" | sed 's/^/#   /'
		rc=1
	fi
fi

for f in $banned; do
	hits=$(grep -E "^[^:]*:[0-9]+:(.*[^A-Za-z0-9_])?$f[[:space:]]*\\(" "$tmp")
	if [ -z "$hits" ]; then
		echo "ok - checksrc: no $f() call in lib/ cgi-bin/ containers/"
	else
		echo "not ok - checksrc: $f() called in lib/ cgi-bin/ containers/"
		printf '%s\n' "$hits" | while IFS= read -r h; do
			file=${h%%:*}
			rest=${h#*:}
			line=${rest%%:*}
			printf '#   %s:%s: %s\n' "$file" "$line" "$(sed -n "${line}p" "$file")"
		done
		rc=1
	fi
done
exit "$rc"
