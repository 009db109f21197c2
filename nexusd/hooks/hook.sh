#!/bin/sh
# nexusd-managed-hook @HOOK@ @VERSION@
# Queues one JSON line for the nexusd daemon under <git-common-dir>/nexus/inbox/ and
# exits: no Python starts here, and git never waits on or fails because of nexusd.
# Installed by `nexusd hooks install`; `nexusd hooks uninstall` puts back what was here.
nexusd_hook=@HOOK@
nexusd_chain=@CHAIN@
nexusd_nl='
'

nexusd_enqueue() {
	# Fast path: find the repository with shell builtins only (no process starts). git runs
	# hooks from the top of the work tree, with GIT_DIR exported in linked worktrees.
	top=$PWD
	gd=${GIT_DIR:-}
	if [ -z "$gd" ]; then
		if [ -d .git ]; then
			gd=.git
		elif [ -f .git ] && read -r gd <.git; then
			gd=${gd#gitdir: }
		fi
	fi
	case $gd in '' | /*) ;; *) gd=$top/$gd ;; esac
	common=$gd
	if [ -n "$gd" ] && [ -f "$gd/commondir" ] && read -r c <"$gd/commondir"; then
		case $c in /*) common=$c ;; *) common=$gd/$c ;; esac
	fi
	head=
	if [ -n "$gd" ] && read -r h <"$gd/HEAD"; then
		case $h in
		"ref: "*) [ -f "$common/${h#ref: }" ] && read -r head <"$common/${h#ref: }" ;;
		*) head=$h ;;
		esac
	fi 2>/dev/null
	if [ -z "$gd" ] || [ ! -d "$common/nexus" ]; then
		# Anything unusual: ask git (one process).
		out=$(git rev-parse --git-common-dir --show-toplevel HEAD 2>/dev/null) ||
			out=$(git rev-parse --git-common-dir --show-toplevel 2>/dev/null) || return 0
		common=${out%%"$nexusd_nl"*}
		rest=${out#*"$nexusd_nl"}
		top=${rest%%"$nexusd_nl"*}
		head=${rest#*"$nexusd_nl"}
		[ "$head" = "$rest" ] && head=
	fi
	# Only values that need no JSON escaping are written; the daemon fills in the rest.
	case $head in *[!0-9a-f]*) head= ;; esac
	case $top in *[\"\\]* | *[[:cntrl:]]*) top= ;; esac
	args=
	for a in "$@"; do
		case $a in *[!0-9A-Za-z._-]*) continue ;; esac
		args="$args${args:+,}\"$a\""
	done
	# Only where nexusd runs: a hooks folder shared by many repositories (a global
	# core.hooksPath) must not leave an inbox no daemon drains in each of the others.
	[ -d "$common/nexus" ] || return 0
	inbox=$common/nexus/inbox
	[ -d "$inbox" ] || mkdir "$inbox" || return 0
	line="{\"v\":1,\"hook\":\"$nexusd_hook\",\"args\":[$args]${head:+,\"head\":\"$head\"}${top:+,\"worktree\":\"$top\"}}"
	# noclobber: each event gets a new file (O_EXCL), so concurrent hooks never mix lines.
	set -C
	n=0
	until { printf '%s\n' "$line" >"$inbox/$nexusd_hook.$$.$n.jsonl"; } 2>/dev/null; do
		n=$((n + 1))
		[ "$n" -gt 20 ] && return 0
	done
	return 0
}

(nexusd_enqueue "$@") </dev/null >/dev/null 2>&1 || true

# The hook that was here before nexusd was installed now runs in our place, as git ran it:
# same arguments, stdin (untouched above: pre-push reads its refs there), stdout and stderr,
# and its exit status is the hook's, so a failing hook still fails the git command as it did
# (`git checkout` exits 1 on a failing post-checkout; pre-commit, commit-msg and pre-push
# abort). Only nexusd's part above fails open. git skips a hook that is not executable: so do we.
case $0 in */*) nexusd_dir=${0%/*} ;; *) nexusd_dir=. ;; esac
nexusd_prev=$nexusd_dir/$nexusd_hook.nexusd-chained
[ -f "$nexusd_prev" ] && [ -x "$nexusd_prev" ] || exit 0
if [ "$nexusd_chain" = husky ]; then
	# husky's stub finds the user's script from the name in $0: keep it `<hook>`.
	exec sh -c '. "$0.nexusd-chained"' "$nexusd_dir/$nexusd_hook" "$@"
fi
exec "$nexusd_prev" "$@"
