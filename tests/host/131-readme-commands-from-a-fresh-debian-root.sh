#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The README's two commands work on a fresh Debian 12 machine: from a
# clone, in a minimal Debian root holding only what the README assumes
# (mmdebstrap --variant=minbase, git and make), each installs what it needs
# before it builds anything.  `make crashtest` runs end to end, guest
# included, on a short workload; `make test` runs its build steps and one
# host test (its guests are this suite's own business).  Then both again:
# the second run installs nothing.
#
# The root is made once into the cache and never changed: each run works
# in an overlay over it, in a mount and PID namespace of its own, so
# nothing of the host is written and nothing outlives the test.  apt's
# downloads are kept in the cache, as a proxy would keep them: what is
# installed is installed anew every time.
# kernels: 6.1
# asan: no
# timeout: none
. "$FLUSHLOG_TOP/tests/common.sh"
. "$FLUSHLOG_TOP/scripts/lib.sh"

((EUID == 0)) || _skip "needs root: a chroot, and apt inside it"
_require_cmd mmdebstrap
_require_cmd unshare
# (a module of the host's is never loaded for a test)
grep -qw overlay /proc/filesystems || _skip "no overlay filesystem in this kernel: the test never loads a module of the host's (an administrator may, with modprobe overlay)"

# What the README assumes of a fresh machine, besides Debian 12 itself.
ASSUMED=git,make
cache=$FLUSHLOG_CACHE/fresh-root
key=$(printf '%s\n' bookworm minbase "$ASSUMED" | sha256sum | cut -c1-12)
base=$cache/bookworm-minbase-$key
archives=$cache/apt-archives
mkdir -p "$cache" "$archives/partial"

# The host's way to the mirror (its sources and any proxy or validity
# setting), which is the fresh machine's too: the same network.
apt-config dump Acquire |
	grep -E '^Acquire::(Check-Valid-Until|Check-Date|[a-z]+::Proxy)' >"$TEST_TMP/acquire.conf" || true

fl_cache_lock fresh-root
if [ ! -d "$base" ]; then
	rm -rf "$base.new"
	# the mirror lines as apt reads them from the host's sources
	# shellcheck disable=SC2016 # apt's format, not the shell's
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Identifier: Packages' 2>/dev/null |
		sed -n 's|^\(.*debian[^ ]*/\) \([a-z-]*\)$|deb \1 \2 main|p' | sort -u >"$TEST_TMP/sources.list"
	grep -q . "$TEST_TMP/sources.list" || _fail "no Debian mirror in apt's sources (apt-get update first?)"
	cat "$TEST_TMP/sources.list"
	mmdebstrap --quiet --variant=minbase --include="$ASSUMED" \
		--aptopt="$TEST_TMP/acquire.conf" bookworm "$base.new" - <"$TEST_TMP/sources.list" ||
		_fail "mmdebstrap could not make a minimal bookworm root"
	mv "$base.new" "$base"
fi
fl_cache_unlock
du -sh "$base"

# The checkout as a clone would have it: the files git tracks, and those
# it would add (a developer's uncommitted work is what is under test).
root=$TEST_TMP/root
mkdir -p "$root" "$TEST_TMP/upper" "$TEST_TMP/work"
if git -C "$FLUSHLOG_TOP" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$FLUSHLOG_TOP" ls-files -z -co --exclude-standard
else
	(cd "$FLUSHLOG_TOP" && find . -path ./build -prune -o -type f -print0)
fi | (cd "$FLUSHLOG_TOP" && tar --null -T - -cf "$TEST_TMP/tree.tar" --ignore-failed-read)

# inside: the README's commands, as a user types them after cloning
cat >"$TEST_TMP/readme.sh" <<'EOF'
set -euo pipefail
git config --global user.email fresh@root.invalid
git config --global user.name "fresh root"
mkdir -p /srv/flushlog && cd /srv/flushlog
tar -xf /tmp/tree.tar
git init -q && git add -A && git commit -qm "the tree under test"
git clone -q /srv/flushlog /root/flushlog && cd /root/flushlog
for round in first second; do
	echo "=== $round round: make crashtest"
	start=$SECONDS
	make crashtest OPTS="--ops 20 --seed 3 --out /root/run-$round"
	echo "=== $round round: make crashtest took $((SECONDS - start)) s"
	echo "=== $round round: make test TESTS=001"
	start=$SECONDS
	make test TESTS=001 | tee /root/test-$round.txt
	echo "=== $round round: make test TESTS=001 took $((SECONDS - start)) s"
done
EOF

# namespace.sh ROOT: mount the root and run readme.sh in it
cat >"$TEST_TMP/namespace.sh" <<'EOF'
set -euo pipefail
base=$1 root=$2 tmp=$3 archives=$4
mount -t overlay overlay -o "lowerdir=$base,upperdir=$tmp/upper,workdir=$tmp/work" "$root"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount -o remount,bind,ro "$root/sys"    # no package's script sets a host's knob
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
mkdir -m 1777 "$root/run/lock"     # as a booted system's tmpfiles.d makes it
mount -t tmpfs -o size=50% tmpfs "$root/tmp"
mount --bind "$archives" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp "$tmp/acquire.conf" "$root/etc/apt/apt.conf.d/00host-network"
# as a container would: a chroot starts no services (slurm's, munge's),
# and dpkg does not sync every file it unpacks (Debian's own container
# images do the same): what gets installed is no different
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/unsafe-io"
cp "$tmp/tree.tar" "$tmp/readme.sh" "$root/tmp/"
exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	bash /tmp/readme.sh
EOF

rc=0
start=$SECONDS
unshare --mount --pid --fork --kill-child --propagation private \
	bash "$TEST_TMP/namespace.sh" "$base" "$root" "$TEST_TMP" "$archives" \
	>"$TEST_TMP/out.txt" 2>&1 || rc=$?
echo "in the fresh root: $((SECONDS - start)) s, exit $rc"
grep -n '^=== \|passed\|failed\|install-deps: installing\|states checked' "$TEST_TMP/out.txt" || true
if ((rc != 0)); then
	tail -n 40 "$TEST_TMP/out.txt"
	_fail "the README's commands failed in a fresh Debian root (exit $rc)"
fi

up=$TEST_TMP/upper/root
for round in first second; do
	[ -s "$up/run-$round/report.json" ] || _fail "$round make crashtest left no report.json"
	states=$(jq '.states | length' "$up/run-$round/report.json")
	((states > 0)) || _fail "$round make crashtest checked no state"
	grep -qx '2 passed, 0 failed, 0 skipped' "$up/test-$round.txt" ||
		_fail "$round make test TESTS=001: $(tail -n1 "$up/test-$round.txt")"
done
# the second round found everything in place
n=$(grep -c 'install-deps: installing' "$TEST_TMP/out.txt" || true)
sed -n '/^=== second round/,$p' "$TEST_TMP/out.txt" | grep 'install-deps: installing' &&
	_fail "the second round installed packages again"
echo "ok: both commands from a fresh root, $n installs in the first round, none in the second"
