#!/bin/sh
# The documentation checks:
#   - the settings' manual page (code-sandbox-settings.5, written by make
#     from lib/base/config.c's table through docs/settings-man.c) names
#     every setting of the table's source, in its order, and no other;
#   - it and docs/sandboxctl.8 render without a warning (man, else groff;
#     skipped when neither is installed);
#   - every relative link in README.md, SECURITY.md and docs/*.md names a
#     file that exists and, after a #, a heading of that file.
# Prints "ok - docs/...: ..." or "not ok - docs/...: ..." lines (details
# after a failure as "#   ..."); exits 1 when any failed. Run by
# tests/run.sh. The page is looked for in build/san/man (make SAN=1 all,
# as make test builds), else build/man (make), or where BUILD_MAN says.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

rc=0
tmp=$(mktemp -d /tmp/cs-checkdocs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

ok() { echo "ok - $*"; }
notok() { echo "not ok - $*"; rc=1; }

page=
for d in ${BUILD_MAN:-} build/san/man build/man; do
	if [ -f "$d/code-sandbox-settings.5" ]; then
		page=$d/code-sandbox-settings.5
		break
	fi
done

# The table's names as config.test.mjs reads them: the first string of each
# entry after "settings[] = {".
sed -n '/settings\[\] = {/,/^};/p' lib/base/config.c |
    sed -n 's/^[[:space:]]*{[[:space:]]*"\([A-Z][A-Z0-9_]*\)"[[:space:]]*,.*/\1/p' > "$tmp/table"
ntable=$(wc -l < "$tmp/table" | tr -d ' ')

if [ -z "$page" ]; then
	notok "docs/code-sandbox-settings.5: not generated (make, or make SAN=1 all)"
elif [ "$ntable" -lt 15 ]; then
	notok "docs/code-sandbox-settings.5: found only $ntable settings in lib/base/config.c"
else
	# The page's entries: ".It Ev NAME ...".
	sed -n 's/^\.It Ev \([A-Z][A-Z0-9_]*\).*/\1/p' "$page" > "$tmp/page"
	if cmp -s "$tmp/table" "$tmp/page"; then
		ok "docs/code-sandbox-settings.5: names every setting of lib/base/config.c's table ($ntable), in order, and no other"
	else
		notok "docs/code-sandbox-settings.5: its entries are not lib/base/config.c's table"
		diff "$tmp/table" "$tmp/page" | sed -n 's/^</#   only in the table:/p; s/^>/#   only in the page:/p'
	fi
	# Any other SANDBOX_ name in the text is one of the table's too (or
	# SANDBOX_ENV_FILE, which names the file rather than being in it).
	grep -o 'SANDBOX_[A-Z0-9_]*' "$page" | sort -u |
	    grep -v -x -F -e SANDBOX_ENV_FILE -f "$tmp/table" > "$tmp/other" || true
	if [ -s "$tmp/other" ]; then
		notok "docs/code-sandbox-settings.5: names settings that are not in the table: $(tr '\n' ' ' < "$tmp/other")"
	else
		ok "docs/code-sandbox-settings.5: names no SANDBOX_ variable outside the table but SANDBOX_ENV_FILE"
	fi
fi

# Rendering: man --warnings as man-db runs groff (-ww), else groff itself.
render() {	# render PAGE: the warnings on stdout, status of the renderer
	if command -v man >/dev/null 2>&1; then
		LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 "$1" 2>&1 >/dev/null
	else
		groff -mandoc -ww -z "$1" 2>&1
	fi
}
for p in "$page" docs/sandboxctl.8; do
	[ -n "$p" ] || continue
	name=docs/$(basename "$p")
	if ! command -v man >/dev/null 2>&1 && ! command -v groff >/dev/null 2>&1; then
		ok "$name: renders without warnings # SKIP neither man nor groff is installed"
		continue
	fi
	out=$(render "$p")
	st=$?
	if [ "$st" -eq 0 ] && [ -z "$out" ]; then
		ok "$name: renders without warnings"
	else
		notok "$name: rendering warned or failed (status $st)"
		printf '%s\n' "$out" | head -n 20 | sed 's/^/#   /'
	fi
done

# GitHub's anchor for a heading: lower case, punctuation but - and _
# dropped, spaces as -.
anchors() {	# anchors FILE
	awk '/^```/ { fence = !fence; next } !fence' "$1" |
	    sed -n 's/^#\{1,6\}[[:space:]]\{1,\}//p' | sed 's/[[:space:]]*#*[[:space:]]*$//' |
	    tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9 _-]//g' -e 's/ /-/g'
}
: > "$tmp/broken"
nlinks=0
for md in README.md SECURITY.md docs/*.md; do
	[ -f "$md" ] || continue
	dir=$(dirname "$md")
	# Inline links [text](target), not inside code spans or fenced blocks.
	links=$(awk '/^```/ { fence = !fence; next } !fence' "$md" | sed 's/`[^`]*`//g' |
	    grep -o '\]([^)[:space:]]*)' | sed 's/^](//; s/)$//')
	for l in $links; do
		case "$l" in
		http://*|https://*|mailto:*) continue ;;
		esac
		nlinks=$((nlinks + 1))
		file=${l%%#*}
		frag=
		case "$l" in *'#'*) frag=${l#*#} ;; esac
		if [ -z "$file" ]; then
			target=$md
		else
			target=$dir/$file
		fi
		if [ ! -e "$target" ]; then
			echo "$md: $l: no file $target" >> "$tmp/broken"
			continue
		fi
		if [ -n "$frag" ]; then
			case "$target" in
			*.md) anchors "$target" | grep -q -x -F -e "$frag" ||
			    echo "$md: $l: no heading #$frag in $target" >> "$tmp/broken" ;;
			esac
		fi
	done
done
if [ -s "$tmp/broken" ]; then
	notok "docs: relative links in README.md, SECURITY.md and docs/*.md that lead nowhere"
	sed 's/^/#   /' "$tmp/broken"
else
	ok "docs: every relative link in README.md, SECURITY.md and docs/*.md ($nlinks) leads to a file and heading"
fi

exit "$rc"
