#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/state-images.sh BUILD DIR: the "State images at disk scale"
# section of bench/results.md, in Markdown on stdout.  flushlog check with
# the checker `true`, so that what is timed is flushlog's own work per
# state, on a 128 MiB image (the base all data) and a 10 GiB image (the
# base 1 GiB of data in 1 MiB pieces, the rest holes), for each crash-state
# model, in place (one image per job moved forward) and, for scale, with a
# copy of the image per state (--images copy, what check did before).
# DIR must be on tmpfs or another fast filesystem, with room for two bases
# and their job images (about 2.5 GiB).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=$1 dir=$2
flushlog=$build/flushlog
runs=3

# best_ms CMD...: the best wall time of $runs runs, in ms
best_ms() {
	local i t0 t1 best=
	for ((i = 0; i < runs; i++)); do
		t0=$(date +%s%N)
		"$@" >"$dir/out"
		t1=$(date +%s%N)
		t1=$(((t1 - t0) / 1000000))
		[[ -n $best && $best -le $t1 ]] || best=$t1
	done
	echo "$best"
}

make_inputs() {
	"$top/bench/gen-points" 1200 262144 >"$dir/p128.fls"
	"$top/bench/gen-points" 1200 20971520 >"$dir/p10g.fls"
	"$build/tests/fl-mklog" -o "$dir/log-128m" "$dir/p128.fls"
	"$build/tests/fl-mklog" -o "$dir/log-10g" "$dir/p10g.fls"
	head -c 128M /dev/urandom >"$dir/base-128m"
	rm -f "$dir/base-10g"
	truncate -s 10G "$dir/base-10g"
	for ((i = 0; i < 1024; i++)); do
		head -c 1M /dev/urandom |
			dd of="$dir/base-10g" bs=1M seek=$((i * 10)) conv=notrunc status=none
	done
}

# row SIZE SETUP-MS IMAGES ARGS...: states, seconds, states a minute
# (of the whole run, and without the base's copy)
row() {
	local size=$1 setup=$2 images=$3 ms n
	shift 3
	ms=$(best_ms "$flushlog" check -q -w "$dir" --images "$images" --base "$dir/base-$size" \
		"$@" "$dir/log-$size" -- true)
	n=$(head -n 1 "$dir/out" | cut -d' ' -f1)
	printf '| %s | %s | %s | %s | %.2f | %.0f | %.0f |\n' "$size" "$images" "$*" "$n" \
		"$(echo "$ms / 1000" | bc -l)" "$(echo "$n * 60000 / $ms" | bc -l)" \
		"$(echo "$n * 60000 / ($ms - $setup)" | bc -l)"
}

make_inputs
setup_128=$(best_ms "$flushlog" check -q -w "$dir" --max-states 1 --base "$dir/base-128m" "$dir/log-128m" -- true)
setup_10g=$(best_ms "$flushlog" check -q -w "$dir" --max-states 1 --base "$dir/base-10g" "$dir/log-10g" -- true)
echo
echo "## State images at disk scale"
echo
echo "\`bench/state-images.sh\`: \`bench/gen-points 1200\` on a 128 MiB device and on a 10 GiB one"
echo "(1322 flush and FUA points, 40 MB of log each), checked from a base image: 128 MiB of data, and"
echo "10 GiB with 1 GiB of data (1 MiB every 10 MiB). Checker \`true\`, -j 1, all in tmpfs, best of $runs."
echo "Seconds are the whole run: planning, copying the base into the job's image once"
echo "(${setup_128} ms at 128 MiB, ${setup_10g} ms at 10 GiB, timed with one state), and every state."
echo
echo "| image | --images | states | count | seconds | states per minute | without the base's copy |"
echo "|---|---|---|---|---|---|---|"
for size in 128m 10g; do
	setup=$setup_128
	[[ $size == 128m ]] || setup=$setup_10g
	row "$size" "$setup" in-place --states prefix
	row "$size" "$setup" in-place --states epoch -K 1
	row "$size" "$setup" in-place --states torn --max-torn 1
	row "$size" "$setup" in-place --states epoch,torn -K 2 --max-torn 2
	row "$size" "$setup" copy --states prefix --max-states 40
done
rm -f "$dir"/p128.fls "$dir"/p10g.fls "$dir"/log-128m "$dir"/log-10g "$dir"/base-128m "$dir"/base-10g "$dir/out"
