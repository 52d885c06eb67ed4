#!/usr/bin/env bats
# JPEG decompression bombs (issue 16, item 5): a JPEG of a hundred bytes that declares
# 40000x40000 pixels, one that declares 65500x65500 in colour, one of 4096x4096 with thousands
# of progressive scans. Every decode path refuses them with an exact message and the exit
# status of a bad sample, before they cost memory: pack with and without --jpeg-check and
# --jpeg-max-side, and the training loader's image pipeline (imgcrop runs it alone). Peak RSS
# is measured; times are not. --max-pixels moves the limit both ways.

load test_helper/common

jpegbomb() {
	python3 "$HELPERS/jpegbomb.py" "$@"
}

# bombs.tar: a.jpg (and a.cls) 40000x40000 progressive grey; b.jpg 4096x4096 grey of 3000
# scans (883 of them without a libjpeg warning, then refinements again); c.jpg a 65500x65500
# YCbCr baseline header; d.jpg an ordinary 64x48 JPEG.
setup_bombs() {
	mkdir -p src
	jpegbomb pixels 40000 40000 src/a.jpg
	printf 0 > src/a.cls
	jpegbomb scans 4096 4096 3000 src/b.jpg
	jpegbomb header 65500 65500 src/c.jpg
	jpegbomb flat 64 48 src/d.jpg
	(cd src && tar --format=gnu --sort=name -cf ../bombs.tar a.cls a.jpg b.jpg c.jpg d.jpg)
}

PIXELS_A="JPEG of 40000x40000 pixels (1600000000): over the limit of 178956970 pixels"
SCANS="JPEG of more than 500 scans: over the limit of 500 scans"
PIXELS_C="JPEG of 65500x65500 pixels (4290250000): over the limit of 178956970 pixels"

# peak_rss CMD...: run CMD (its output thrown away); sets rc to its exit status and rss to
# its peak resident set in KiB (getrusage of the child: no GNU time needed).
peak_rss() {
	local r
	r=$(python3 - "$@" <<'PY'
import resource, subprocess, sys
p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
PY
)
	rc=${r% *}
	rss=${r#* }
}

# Under 200 MB whatever the bomb: the coefficients of a 40000x40000 one alone take 3.2 GB.
RSS_MAX_KB=$((200 * 1024))

@test "the bombs are what they say: tiny files, valid headers" {
	setup_bombs
	[ "$(stat -c %s src/a.jpg)" -lt 1000 ]
	[ "$(stat -c %s src/c.jpg)" -lt 1000 ]
	[ "$(stat -c %s src/b.jpg)" -lt 400000 ]
	run -0 pack -q --max-pixels none -o all.slab bombs.tar
	run -0 inspect --list all.slab
	[[ "${lines[0]}" == *"	jpg:"*":40000x40000"* ]]
	[[ "${lines[1]}" == *"	jpg:"*":4096x4096"* ]]
	[[ "${lines[2]}" == *"	jpg:"*":65500x65500"* ]]
}

@test "pack --jpeg-check: a pixel bomb is a bad sample named by its key, exit 1, no output" {
	setup_bombs
	run -1 --separate-stderr pack --jpeg-check -o x.slab bombs.tar
	assert_equal "$stderr" "pack: 'bombs.tar': sample 'a' field 'jpg': $PIXELS_A"
	[ ! -e x.slab ]
	run -1 --separate-stderr pack --jpeg-check -j3 -o x.slab bombs.tar
	assert_equal "$stderr" "pack: 'bombs.tar': sample 'a' field 'jpg': $PIXELS_A"
	[ ! -e x.slab ]
}

@test "pack --jpeg-check --on-error=skip: each bomb skipped with its reason, the rest kept" {
	setup_bombs
	for j in 1 2; do
		run -0 --separate-stderr pack --jpeg-check --on-error=skip -j$j -o x.slab bombs.tar
		assert_equal "${stderr_lines[0]}" "pack: 'bombs.tar': skipping: sample 'a' field 'jpg': $PIXELS_A"
		assert_equal "${stderr_lines[1]}" "pack: 'bombs.tar': skipping: sample 'b' field 'jpg': $SCANS"
		assert_equal "${stderr_lines[2]}" "pack: 'bombs.tar': skipping: sample 'c' field 'jpg': $PIXELS_C"
		[[ "${stderr_lines[3]}" == "pack: 'x.slab': 1 sample, "*"; skipped 3 bad samples" ]]
		assert_equal "${#stderr_lines[@]}" 4
		run -0 inspect --list x.slab
		assert_equal "${#lines[@]}" 1
		[[ "${lines[0]}" == "0	d	"*"	jpg:"*":64x48"* ]]
	done
}

@test "pack --jpeg-max-side: the bombs are refused before anything is decoded or re-encoded" {
	setup_bombs
	run -1 --separate-stderr pack --jpeg-max-side 100 -o x.slab bombs.tar
	assert_equal "$stderr" "pack: 'bombs.tar': sample 'a' field 'jpg': $PIXELS_A"
	run -0 --separate-stderr pack --jpeg-max-side 100 --on-error=skip -q -o x.slab bombs.tar
	assert_equal "${stderr_lines[0]}" "pack: 'bombs.tar': skipping: sample 'a' field 'jpg': $PIXELS_A"
	assert_equal "${stderr_lines[1]}" "pack: 'bombs.tar': skipping: sample 'b' field 'jpg': $SCANS"
	assert_equal "${stderr_lines[2]}" "pack: 'bombs.tar': skipping: sample 'c' field 'jpg': $PIXELS_C"
	assert_equal "${#stderr_lines[@]}" 3
}

@test "pack without JPEG options: the header read for the table refuses pixel bombs; scans need a decode" {
	setup_bombs
	run -1 --separate-stderr pack -o x.slab bombs.tar
	assert_equal "$stderr" "pack: 'bombs.tar': sample 'a' field 'jpg': $PIXELS_A"
	[ ! -e x.slab ]
	run -0 --separate-stderr pack -q --on-error=skip -o x.slab bombs.tar
	assert_equal "${stderr_lines[0]}" "pack: 'bombs.tar': skipping: sample 'a' field 'jpg': $PIXELS_A"
	assert_equal "${stderr_lines[1]}" "pack: 'bombs.tar': skipping: sample 'c' field 'jpg': $PIXELS_C"
	assert_equal "${#stderr_lines[@]}" 2
	run -0 inspect --list x.slab
	assert_equal "${#lines[@]}" 2
	[[ "${lines[0]}" == "0	b	"*":4096x4096"* ]]
	[[ "${lines[1]}" == "1	d	"*":64x48"* ]]
	run -0 inspect x.slab
	assert_line "  max-pixels=178956970"
}

@test "the image pipeline (imgcrop, the loader's decoder) refuses each bomb with the same text" {
	setup_bombs
	run -1 --separate-stderr imgcrop src/a.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'src/a.jpg': $PIXELS_A"
	run -1 --separate-stderr imgcrop src/b.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'src/b.jpg': $SCANS"
	run -1 --separate-stderr imgcrop src/c.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'src/c.jpg': $PIXELS_C"
	run -0 imgcrop --size 32x32 src/d.jpg out.rgb
	# The scan limit moves too: the first 883 scans come in clean, the next is warned about.
	run -1 --separate-stderr imgcrop --max-scans 100 src/b.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'src/b.jpg': JPEG of more than 100 scans: over the limit of 100 scans"
	jpegbomb scans 512 512 883 clean.jpg
	run -0 imgcrop --max-scans 883 --size 32x32 clean.jpg out.rgb
	run -1 --separate-stderr imgcrop --max-scans 882 clean.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'clean.jpg': JPEG of more than 882 scans: over the limit of 882 scans"
	# No limit: every scan is taken in, and libjpeg's warning about scan 884 is the verdict.
	jpegbomb scans 512 512 1000 many.jpg
	run -1 --separate-stderr imgcrop --max-scans none many.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'many.jpg': corrupt JPEG: Inconsistent progression sequence for component 0 coefficient 1"
}

@test "peak RSS stays under 200 MB on every bomb, in pack and in the image pipeline" {
	setup_bombs
	for opts in "--jpeg-check" "--jpeg-check -j4" "--jpeg-max-side 64" ""; do
		# shellcheck disable=SC2086
		peak_rss pack -q --on-error=skip $opts -o x.slab bombs.tar
		[ "$rc" -eq 0 ] || fail "pack $opts: exit $rc"
		[ "$rss" -lt "$RSS_MAX_KB" ] || fail "pack $opts: peak RSS $rss KiB"
	done
	for f in a b c; do
		peak_rss imgcrop "src/$f.jpg" out.rgb
		[ "$rc" -eq 1 ] || fail "imgcrop $f.jpg: exit $rc"
		[ "$rss" -lt "$RSS_MAX_KB" ] || fail "imgcrop $f.jpg: peak RSS $rss KiB"
	done
}

@test "--max-pixels: higher lets a large cheap JPEG through, lower refuses an ordinary one, none has no limit" {
	mkdir -p src
	# 16384 x 12000 grey, flat: 196608000 pixels, 750 KiB, cheap to decode.
	jpegbomb flat 16384 12000 src/big.jpg
	(cd src && tar -cf ../big.tar big.jpg)
	run -1 --separate-stderr pack --jpeg-check -o x.slab big.tar
	assert_equal "$stderr" "pack: 'big.tar': sample 'big' field 'jpg': JPEG of 16384x12000 pixels (196608000): over the limit of 178956970 pixels"
	run -0 pack -q --jpeg-check --max-pixels 196608000 -o x.slab big.tar
	run -0 inspect --list x.slab
	[[ "${lines[0]}" == *"	jpg:"*":16384x12000"* ]]
	run -0 inspect x.slab
	assert_line "  max-pixels=196608000"
	run -0 pack -q --jpeg-max-side 1000 --max-pixels none -o y.slab big.tar
	run -0 inspect --list y.slab
	[[ "${lines[0]}" == *"	jpg:"*":1000x732"* ]]
	run -0 inspect y.slab
	assert_line "  max-pixels=none"
	run -1 --separate-stderr imgcrop src/big.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'src/big.jpg': JPEG of 16384x12000 pixels (196608000): over the limit of 178956970 pixels"
	run -0 imgcrop --max-pixels 196608000 --size 32x32 src/big.jpg out.rgb

	mkwds --count 2 --width 64 --height 48 --seed 3 -o n.tar
	run -1 --separate-stderr pack --jpeg-check --max-pixels 3071 -o n.slab n.tar
	assert_equal "$stderr" "pack: 'n.tar': sample 'sample000000' field 'jpg': JPEG of 64x48 pixels (3072): over the limit of 3071 pixels"
	run -1 --separate-stderr pack --max-pixels 3071 -o n.slab n.tar
	assert_equal "$stderr" "pack: 'n.tar': sample 'sample000000' field 'jpg': JPEG of 64x48 pixels (3072): over the limit of 3071 pixels"
	[ ! -e n.slab ]
	run -0 pack -q --jpeg-check --max-pixels 3072 -o n.slab n.tar
	tar -xf n.tar sample000001.jpg
	run -1 --separate-stderr imgcrop --max-pixels 3071 sample000001.jpg out.rgb
	assert_equal "$stderr" "imgcrop: 'sample000001.jpg': JPEG of 64x48 pixels (3072): over the limit of 3071 pixels"
}

@test "--max-pixels takes a count from 1 or none, nothing else" {
	small_tar
	for bad in 0 -1 1K 1e9 '' abc 18446744073709551616; do
		run -2 --separate-stderr pack --max-pixels "$bad" -o x.slab small.tar
		assert_equal "${stderr_lines[0]}" "pack: invalid --max-pixels '$bad' (a number from 1, or none)"
		assert_equal "${stderr_lines[1]}" "Try 'pack --help' for more information."
	done
	[ ! -e x.slab ]
	run -0 pack -q --max-pixels 1 -o x.slab small.tar
	run -0 inspect x.slab
	assert_line "  max-pixels=1"
}

@test "slab.Loader and prefetch frames: each bomb a bad sample (raised, or skipped and counted), peak RSS under 200 MB" {
	need_libslab
	setup_bombs
	pack -q --max-pixels none -o all.slab bombs.tar
	shuffle-plan -q --mode sequential -o all.plan all.slab
	cat > load.py <<'PY'
import slab
with open("loader.out", "w") as out:
    for kw in (dict(on_error="raise"), dict(on_error="skip")):
        kw.setdefault("plan", "all.plan")
        kw.setdefault("batch_size", 4)
        try:
            with slab.Loader(["all.slab"], image="jpg", size=(32, 32), threads=2, **kw) as ld:
                got = [(b.number, len(b)) for b in ld]
                print(got, ld.skipped, file=out)
                print(ld.error, file=out)
        except slab.SlabError as e:
            print(e, file=out)
PY
	PYTHONPATH="$SLAB_ROOT/scripts" peak_rss python3 load.py
	echo "rss $rss"
	[ "$rc" -eq 0 ]
	[ "$rss" -lt "$RSS_MAX_KB" ]
	run cat loader.out
	assert_line --index 0 "'all.slab': sample #0 'a': field 'jpg': $PIXELS_A"
	assert_line --index 1 "[(0, 1)] 3"
	assert_line --index 2 "'all.slab': sample #0 'a': field 'jpg': $PIXELS_A"
	run -1 --separate-stderr prefetch --plan all.plan --emit --emit-format frames --image jpg --size 32x32 all.slab
	assert_equal "$stderr" "prefetch: 'all.slab': sample #0 'a': field 'jpg': $PIXELS_A"
	prefetch --plan all.plan --emit --emit-format frames --image jpg --size 32x32 \
		--on-error skip all.slab > frames.out 2> frames.err
	run cat frames.err
	assert_line --index 0 "prefetch: 'all.slab': sample #0 'a': field 'jpg': $PIXELS_A (skipped)"
}

@test "a JPEG cut short is refused at its first warning: a 13000x13000 header with a few bytes of data costs no memory at full size" {
	# Under the pixel limit (169 million pixels), 166 bytes: libjpeg would go on past the
	# end of the data making grey rows, the whole 676 MB region of a full-size decode
	# (the nearest resize, --exact), before the warning failed it: 669 MB at its peak.
	jpegbomb header 13000 13000 cut.jpg
	[ "$(stat -c %s cut.jpg)" -lt 1000 ]
	for opts in "" "--resize nearest" "--exact"; do
		# shellcheck disable=SC2086
		run -1 --separate-stderr imgcrop $opts cut.jpg out.rgb
		assert_equal "$stderr" "imgcrop: 'cut.jpg': corrupt JPEG: Corrupt JPEG data: premature end of data segment"
		# shellcheck disable=SC2086
		peak_rss imgcrop $opts cut.jpg out.rgb
		[ "$rc" -eq 1 ] || fail "imgcrop $opts: exit $rc"
		# (the bombs' bound: a sanitizer build's own memory takes about 100 MB)
		[ "$rss" -lt "$RSS_MAX_KB" ] || fail "imgcrop $opts: peak RSS $rss KiB"
	done
}
