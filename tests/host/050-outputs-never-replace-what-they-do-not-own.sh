#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Every file a command writes under a name the user gave follows one rule
# (flushlog(1) OUTPUTS), and nothing else is ever replaced: the log given
# as the output (by its name, a symlink, a hard link, --in-place, a
# report or a picture) is refused with exit 2 and left as it was; a
# regular file is replaced whole and keeps its mode; a symlink is written
# through and stays a link, a dangling one refused; '-' is stdout for a
# report or a picture and refused for an image.  In a private mount
# namespace, on a tmpfs of throwaway nodes (never the host's /dev): a
# character device (1:3, /dev/null's numbers) and a FIFO take reports as
# streams and refuse images, staying what they were; a socket and a
# folder are refused; a loop block device takes an image in place, O_EXCL,
# and is refused when the log is on it (the same device under another
# node, or the filesystem a log file is in).
. "$FLUSHLOG_TOP/tests/common.sh"

# _same FILE COPY WHAT: FILE is byte for byte COPY still
_same() {
	cmp -s "$1" "$2" || _fail "$3: '$1' was changed"
}

# _kind PATH WANT WHAT: stat's file type of PATH (not followed) is WANT
_kind() {
	local got
	got=$(stat -c %F "$1" 2>/dev/null || echo missing)
	[ "$got" = "$2" ] || _fail "$3: '$1' is a $got now, not a $2"
}

# _refused WANT-IN-STDERR CMD...: CMD exits 2 saying why
_refused() {
	local want=$1
	shift
	_expect_exit 2 "$@"
	grep -q -- "$want" "$TEST_TMP/stderr" ||
		_fail "'$*': expected '$want', got: $(cat "$TEST_TMP/stderr")"
}

# in_namespace: the device-node cases, run in a mount namespace of their
# own with a tmpfs at $TEST_TMP/ns
in_namespace() {
	local ns=$TEST_TMP/ns log=$TEST_TMP/basic/log
	mkdir -p "$ns"
	mount -t tmpfs -o size=64m flushlog-test "$ns"
	mknod "$ns/null" c 1 3
	mkfifo "$ns/fifo"
	ln -s null "$ns/null-link"
	mkdir "$ns/folder"

	# a character device: an image needs seeking, a report is a stream
	_refused "is a character device, and an image needs seeking" \
		"$FLUSHLOG" replay -q -o "$ns/null" "$log"
	_refused "is a character device" "$FLUSHLOG" replay -q -o "$ns/null-link" "$log"
	_expect_exit 0 "$FLUSHLOG" plot -o "$ns/null" "$log"
	_expect_exit 0 "$FLUSHLOG" check -q -w "$TEST_TMP" --report "$ns/null-link" \
		--junit "$ns/null" "$log" -- true
	_kind "$ns/null" "character special file" "a character device as an output"
	_kind "$ns/null-link" "symbolic link" "a symlink to a character device"
	echo "character device: images refused, reports written to it, still a device"

	# a FIFO: refused for an image, one whole report through it
	_refused "is a FIFO, and an image needs seeking" "$FLUSHLOG" replay -q -o "$ns/fifo" "$log"
	cat "$ns/fifo" >"$TEST_TMP/from-fifo" &
	_expect_exit 0 "$FLUSHLOG" check -q -w "$TEST_TMP" --report "$ns/fifo" "$log" -- true
	wait $!
	jq -e '.finished and .checked == .passed' "$TEST_TMP/from-fifo" >/dev/null ||
		_fail "the report through a FIFO is not one whole report: $(head -c 300 "$TEST_TMP/from-fifo")"
	_kind "$ns/fifo" fifo "a FIFO as an output"
	echo "FIFO: image refused, one whole report through it, still a FIFO"

	# a socket and a folder: refused, for any output
	if command -v python3 >/dev/null; then
		python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$ns/socket"
		_refused "is a socket" "$FLUSHLOG" plot -o "$ns/socket" "$log"
		_refused "is a socket" "$FLUSHLOG" replay -q -o "$ns/socket" "$log"
		_kind "$ns/socket" socket "a socket as an output"
		echo "socket: refused"
	else
		echo "skipped the socket: python3 is not installed"
	fi
	_refused "is a folder" "$FLUSHLOG" replay -q -o "$ns/folder" "$log"
	_refused "is a folder" "$FLUSHLOG" check -q -w "$TEST_TMP" --report "$ns/folder" "$log" -- true
	_kind "$ns/folder" directory "a folder as an output"
	echo "folder: refused"

	block_devices
}

# block_devices: loop devices over files, each through a node of our own
block_devices() {
	local ns=$TEST_TMP/ns log=$TEST_TMP/basic/log dev logdev fsdev filedev basedev
	if ! command -v losetup >/dev/null || ! [ -d /sys/module/loop ]; then
		echo "skipped the block devices: no losetup, or no loop driver loaded (none is loaded here)"
		return 0
	fi
	# detached however the test ends
	loops=()
	trap 'for d in "${loops[@]}"; do losetup -d "$d"; done' EXIT

	truncate -s 2M "$TEST_TMP/disk"
	dev=$(losetup -f --show "$TEST_TMP/disk") && loops+=("$dev")
	mknod "$ns/blk" b "$(stat -c '0x%t' "$dev")" "$(stat -c '0x%T' "$dev")"
	_expect_exit 0 "$FLUSHLOG" replay -q -o "$ns/blk" "$log"
	_kind "$ns/blk" "block special file" "a block device as an output"
	cmp -n 1048576 "$TEST_TMP/disk" "$TEST_TMP/basic/point-7.img" ||
		_fail "the image was not written in place on the block device"
	_refused "is a block device, which takes only an image" \
		"$FLUSHLOG" plot -o "$ns/blk" "$log"
	echo "block device: the image written in place, a picture refused, still a device"

	# the log on a block device, given as the output under another node
	cp "$log" "$TEST_TMP/log-disk"
	logdev=$(losetup -f --show "$TEST_TMP/log-disk") && loops+=("$logdev")
	mknod "$ns/log-blk" b "$(stat -c '0x%t' "$logdev")" "$(stat -c '0x%T' "$logdev")"
	mknod "$ns/log-blk-too" b "$(stat -c '0x%t' "$logdev")" "$(stat -c '0x%T' "$logdev")"
	_refused "refusing to write '$ns/log-blk-too': the log '$ns/log-blk' is on that device" \
		"$FLUSHLOG" replay -q -o "$ns/log-blk-too" "$ns/log-blk"
	_refused "the log '$ns/log-blk' is on that device" \
		"$FLUSHLOG" replay -q --in-place -o "$ns/log-blk-too" "$ns/log-blk"
	_same "$TEST_TMP/log-disk" "$log" "the log's own block device as the output"
	echo "block device: one that holds the log refused, the log intact"

	# a loop device over the log file, or over the base: writing it
	# writes them, though neither is on a block device of its own
	cp "$log" "$TEST_TMP/log-file"
	cp "$TEST_TMP/disk" "$TEST_TMP/base-file"
	filedev=$(losetup -f --show "$TEST_TMP/log-file") && loops+=("$filedev")
	mknod "$ns/file-blk" b "$(stat -c '0x%t' "$filedev")" "$(stat -c '0x%T' "$filedev")"
	_refused "the log '$TEST_TMP/log-file' is on that device" \
		"$FLUSHLOG" replay -q -o "$ns/file-blk" "$TEST_TMP/log-file"
	_same "$TEST_TMP/log-file" "$log" "a loop device over the log file as the output"
	basedev=$(losetup -f --show "$TEST_TMP/base-file") && loops+=("$basedev")
	mknod "$ns/base-blk" b "$(stat -c '0x%t' "$basedev")" "$(stat -c '0x%T' "$basedev")"
	cp "$TEST_TMP/base-file" "$TEST_TMP/base-file.orig"
	_refused "'$TEST_TMP/base-file' is on that device" \
		"$FLUSHLOG" replay -q --base "$TEST_TMP/base-file" -o "$ns/base-blk" "$log"
	_same "$TEST_TMP/base-file" "$TEST_TMP/base-file.orig" "a loop device over the base as the output"
	echo "block device: a loop device over the log or the base refused"

	# a log file in a filesystem on the output block device
	if ! command -v mkfs.ext4 >/dev/null || ! grep -qw ext4 /proc/filesystems; then
		echo "skipped the log in a filesystem on the device: no mkfs.ext4, or no ext4 loaded"
		return 0
	fi
	truncate -s 16M "$TEST_TMP/fs-disk"
	mkfs.ext4 -q -F "$TEST_TMP/fs-disk"
	fsdev=$(losetup -f --show "$TEST_TMP/fs-disk") && loops+=("$fsdev")
	mknod "$ns/fs-blk" b "$(stat -c '0x%t' "$fsdev")" "$(stat -c '0x%T' "$fsdev")"
	mkdir "$ns/mnt"
	mount "$ns/fs-blk" "$ns/mnt"
	cp "$log" "$ns/mnt/log"
	_refused "the log '$ns/mnt/log' is on that device" \
		"$FLUSHLOG" replay -q -o "$ns/fs-blk" "$ns/mnt/log"
	_same "$ns/mnt/log" "$log" "the block device of the log's filesystem as the output"
	umount "$ns/mnt"
	echo "block device: the one holding the log's filesystem refused"
}

if [ "${1:-}" = in-namespace ]; then
	in_namespace
	exit 0
fi

dir=$TEST_TMP/basic
_mklog "$DATA/basic.fls" flushlog "$dir"
log=$dir/log
cp "$log" "$TEST_TMP/log.orig"
cd "$dir"

# the log as an output: under its name, a symlink, a hard link; never
# touched, whatever the command
ln -s log log.link
ln log log.hard
for out in log log.link log.hard "$log"; do
	_refused "refusing to write '$out': it is the log 'log'" "$FLUSHLOG" replay -q -o "$out" log
	_refused "it is the log" "$FLUSHLOG" replay -q --in-place -o "$out" log
	_refused "it is the log" "$FLUSHLOG" replay -q -o "0=$out" log
	_refused "it is the log" "$FLUSHLOG" plot -o "$out" log
	_refused "it is the log" "$FLUSHLOG" check -q -w "$TEST_TMP" --report "$out" log -- true
	_refused "it is the log" "$FLUSHLOG" check -q -w "$TEST_TMP" --junit "$out" log -- true
	_same log "$TEST_TMP/log.orig" "the log given as the output '$out'"
done
_kind log.link "symbolic link" "the log's symlink given as the output"
echo "the log as an output: refused by every command, under every name"

# the base, and a report merged, as outputs
_expect_exit 0 "$FLUSHLOG" replay -q -o base.img --to flush:1 log
cp base.img base.orig
_refused "it is the base 'base.img'" "$FLUSHLOG" replay -q -o base.img --base base.img log
_same base.img base.orig "the base given as the output"
_expect_exit 0 "$FLUSHLOG" check -q -w "$TEST_TMP" --report r.json log -- true
cp r.json r.orig
_refused "refusing to write 'r.json': it is the report 'r.json'" \
	"$FLUSHLOG" merge --report r.json r.json
_same r.json r.orig "a report merged given as the output"
echo "the base and a report merged as outputs: refused"

# a regular file: replaced whole, its mode kept
printf 'old' >state.img
chmod 600 state.img
_expect_exit 0 "$FLUSHLOG" replay -q -o state.img log
_same state.img point-7.img "a regular file as the output"
[ "$(stat -c %a state.img)" = 600 ] || _fail "the image's mode $(stat -c %a state.img) is not its old 600"
! ls state.img.flushlog-* 2>/dev/null || _fail "a temporary file was left"

# a symlink: written through, still a link; a dangling one refused
ln -s state.img state.link
_expect_exit 0 "$FLUSHLOG" replay -q -o state.link --to flush:1 log
_kind state.link "symbolic link" "a symlink as the output"
_same state.img point-1.img "the file a symlink names"
_expect_exit 0 "$FLUSHLOG" plot -o svg.link log
ln -s nowhere/at-all dangling
_refused "refusing to write 'dangling': it is a symlink to 'nowhere/at-all', which does not exist" \
	"$FLUSHLOG" replay -q -o dangling log
_kind dangling "symbolic link" "a dangling symlink as the output"
echo "regular files replaced whole with their mode, symlinks written through"

# '-': stdout where a stream makes sense, refused for an image
_refused "cannot write an image to stdout ('-')" "$FLUSHLOG" replay -q -o - log
[ ! -e ./- ] || _fail "replay -o - made a file named '-'"
_expect_exit 0 "$FLUSHLOG" plot -o - log
grep -q '<svg' "$TEST_TMP/stdout" || _fail "plot -o - wrote no SVG on stdout"
_expect_exit 0 "$FLUSHLOG" check -q -w "$TEST_TMP" --report - log -- true
jq -e '.finished' "$TEST_TMP/stdout" >/dev/null || _fail "check --report - printed no report"
_expect_exit 0 "$FLUSHLOG" check -q -w "$TEST_TMP" --junit - log -- true
xmllint --noout "$TEST_TMP/stdout" 2>/dev/null || grep -q '<testsuite' "$TEST_TMP/stdout" ||
	_fail "check --junit - printed no JUnit XML"
_refused "stdout already takes the JSON report" \
	"$FLUSHLOG" check -q -w "$TEST_TMP" --json --junit - log -- true
_refused "stdout holds this command's own output" "$FLUSHLOG_BUILD/fl-workload" --oracle - "$TEST_TMP"
[ ! -e ./- ] || _fail "a file named '-' was made"
echo "'-': stdout for reports and pictures, refused for an image and the oracle"

# the device nodes, in a mount namespace of this test's own
_require_cmd unshare
_require_cmd jq
unshare -m --propagation private bash "$0" in-namespace ||
	_fail "the device-node cases failed (exit $?)"
