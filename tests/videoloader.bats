#!/usr/bin/env bats
# Video fields through the tools and slab.Loader: pack records what a video holds (format
# 1.3's video records), inspect --list and --json show it, both readers read it back and check
# the records; slab.Loader's clips (shape, layout, the same bytes with any thread count and on
# resume, other clips in another epoch, short videos under each policy, corrupt videos under
# on_error); prefetch's frames stream version 3, whose records are the Loader's clips. The
# videos are made here with ffmpeg (a dependency of the tests: scripts/install-deps).

load test_helper/common

# One video: video NAME CODEC WxH RATE SECONDS [ffmpeg output options...]
video() {
	local name=$1 codec=$2 size=$3 rate=$4 secs=$5
	shift 5
	ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=$size:rate=$rate" -t "$secs" \
		-c:v "$codec" "$@" "$name"
}

# v.tar: k0 an H.264 MP4 (160x120, 24 fps, 2 s: 48 frames), k1 a VP9 WebM (96x64, 25 fps,
# 1 s), k2 an MPEG-4 part 2 MP4 (64x48, 10 fps, 0.5 s: 5 frames); each with a .cls.
setup_kinds() {
	mkdir v
	video v/k0.mp4 libx264 160x120 24 2 -pix_fmt yuv420p
	video v/k1.webm libvpx-vp9 96x64 25 1
	video v/k2.mp4 mpeg4 64x48 10 0.5
	for k in 0 1 2; do echo "$k" > "v/k$k.cls"; done
	(cd v && tar --format=gnu -cf ../v.tar k0.cls k0.mp4 k1.cls k1.webm k2.cls k2.mp4)
	pack -q -o v.slab v.tar
}

# m.slab: five samples with an mp4 field (and cls): m0, m1, m3 H.264 of 48, 24 and 36
# frames, m2 the 5 frames of MPEG-4 (short for most clips here), m4 H.264 (20 frames);
# small pages. q.plan: a quasi plan of it, seed 7, epoch 2.
setup_clips() {
	mkdir m
	video m/m0.mp4 libx264 160x120 24 2 -pix_fmt yuv420p
	video m/m1.mp4 libx264 80x60 24 1 -pix_fmt yuv420p
	video m/m2.mp4 mpeg4 64x48 10 0.5
	video m/m3.mp4 libx264 120x90 12 3 -pix_fmt yuv420p
	video m/m4.mp4 libx264 72x72 20 1 -pix_fmt yuv420p
	for k in 0 1 2 3 4; do echo "$((k * 10))" > "m/m$k.cls"; done
	(cd m && tar --format=gnu -cf ../m.tar m0.cls m0.mp4 m1.cls m1.mp4 m2.cls m2.mp4 \
		m3.cls m3.mp4 m4.cls m4.mp4)
	pack -q --page-size 16K -o m.slab m.tar
	shuffle-plan -q --mode quasi --window 2 --seed 7 --epoch 2 -o q.plan m.slab
}

# t.slab: t0 and t2 whole H.264 videos, t1 the first half of one whose index comes first
# (-movflags +faststart), so that its headers read and its frames do not.
setup_cut() {
	mkdir t
	video t/t0.mp4 libx264 80x60 24 1 -pix_fmt yuv420p
	video full.mp4 libx264 80x60 24 1 -pix_fmt yuv420p -movflags +faststart
	head -c $(($(stat -c %s full.mp4) / 2)) full.mp4 > t/t1.mp4
	cp full.mp4 t/t2.mp4
	for k in 0 1 2; do echo "$k" > "t/t$k.cls"; done
	(cd t && tar --format=gnu -cf ../t.tar t0.cls t0.mp4 t1.cls t1.mp4 t2.cls t2.mp4)
	pack -q -o t.slab t.tar
}

@test "pack records each video's size, codec, frames, duration and rate; inspect --list shows them" {
	setup_kinds
	run -0 inspect --list v.slab
	assert_line --index 0 --regexp $'^0\tk0\t0\tcls:4096:2\tmp4:4098:[0-9]+:160x120:h264:48f:2\\.00s:24fps$'
	assert_line --index 1 --regexp $'^1\tk1\t0\tcls:[0-9]+:2\twebm:[0-9]+:[0-9]+:96x64:vp9:25f:1\\.00s:25fps$'
	assert_line --index 2 --regexp $'^2\tk2\t0\tcls:[0-9]+:2\tmp4:[0-9]+:[0-9]+:64x48:mpeg4:5f:0\\.50s:10fps$'
	run -0 inspect v.slab
	assert_line "format:       slab 1.3"
	assert_line --regexp '^  mp4 +2 .*  video 64x48\.\.160x120$'
	assert_line --regexp '^  webm +1 .*  video 96x64\.\.96x64$'
	run -0 inspect --list --json v.slab
	python3 - "$output" <<'PY'
import json, sys
d = json.loads(sys.argv[1])
got = [{k: v for k, v in f.items() if k not in ("offset", "size", "crc32c")}
       for s in d for f in s["fields"] if f["name"] != "cls"]
assert got == [
    dict(name="mp4", format="video", width=160, height=120, codec="h264", frames=48,
         duration=2, fps_num=24, fps_den=1),
    dict(name="webm", format="video", width=96, height=64, codec="vp9", frames=25,
         duration=1, fps_num=25, fps_den=1),
    dict(name="mp4", format="video", width=64, height=48, codec="mpeg4", frames=5,
         duration=0.5, fps_num=10, fps_den=1)], got
PY
	run -0 inspect --verify v.slab
}

@test "slab.py reads the video records, with libslab and without, and verifies the file" {
	setup_kinds
	for lib in "" none; do
		SLAB_LIBRARY=$lib run -0 pyslab - <<'PY'
import slab
f = slab.SlabFile("v.slab", check_table=True)
assert f.version == (1, 3)
want = [("mp4", slab.VideoInfo(160, 120, 48, 2.0, 24, 1, "h264")),
        ("webm", slab.VideoInfo(96, 64, 25, 1.0, 25, 1, "vp9")),
        ("mp4", slab.VideoInfo(64, 48, 5, 0.5, 10, 1, "mpeg4"))]
for i, (name, info) in enumerate(want):
    fl = f.sample(i).field(name)
    assert fl.format == "video" and fl.flags & slab.FIELD_VIDEO, fl.flags
    assert fl.video == info and f.video(i, name) == info, (i, fl.video)
    assert f.sample(i).field("cls").video is None and f.video(i, "cls") is None
    del fl
assert f.video(0, "webm") is None and f.video(0, "nope") is None
f.verify()
print("ok", slab.backend.split()[0])
PY
		assert_output --regexp '^ok (libslab|python)$'
	done
}

@test "a file without videos has no video records; a 1.2 file reads and verifies as before" {
	mkdir p && echo 1 > p/a.cls && echo hello > p/a.txt && echo 2 > p/b.cls
	(cd p && tar --format=gnu -cf ../p.tar a.cls a.txt b.cls)
	pack -q -o p.slab p.tar
	# the table header's bytes 96 to 127 stay zero; then the same file marked 1.2
	PYTHONPATH="$HELPERS" python3 - <<'PY'
import struct
from crafted import Craft
c = Craft(open("p.slab", "rb").read())
assert struct.unpack_from("<HH", c.b, 8) == (1, 3)
assert bytes(c.b[c.tb + 96:c.tb + 128]) == bytes(32)
open("old.slab", "wb").write(c.header(10, "H", 2).fix().bytes())
PY
	run -0 inspect old.slab
	assert_line "format:       slab 1.2"
	run -0 inspect --verify old.slab
	run -0 inspect --list old.slab
	assert_output $'0\ta\t0\tcls:4096:2\ttxt:4098:6\n1\tb\t0\tcls:4104:2'
	for lib in "" none; do
		SLAB_LIBRARY=$lib run -0 pyslab -c 'import slab; f = slab.SlabFile("old.slab", check_table=True); f.verify(); print(f.version, len(f))'
		assert_output "(1, 2) 2"
	done
}

@test "damaged video records: an index past them, out of order, a count the fields do not use" {
	setup_kinds
	PYTHONPATH="$HELPERS" python3 - <<'PY'
import struct
from crafted import Craft
base = open("v.slab", "rb").read()
c = Craft(base)
# fields: cls (0), mp4 (1), webm (2); the records: k0's mp4 0, k1's webm 1, k2's mp4 2;
# count.slab: 4 records, from 32 bytes before the first
open("past.slab", "wb").write(Craft(base).field(0, 1, 28, "I", 7).fix().bytes())
open("swap.slab", "wb").write(Craft(base).field(0, 1, 28, "I", 2).field(2, 1, 28, "I", 0).fix().bytes())
voff = struct.unpack_from("<Q", c.b, c.tb + 96)[0]
open("count.slab", "wb").write(Craft(base).table(96, "QQ", voff - 32, 4).fix().bytes())
open("outside.slab", "wb").write(Craft(base).table(96, "Q", 1 << 40).fix().bytes())
open("reserved.slab", "wb").write(Craft(base).field(0, 0, 28, "I", 1).fix().bytes())
PY
	run -1 --separate-stderr inspect --list past.slab
	assert_equal "$stderr" "inspect: 'past.slab': sample #0 field 'mp4': video record 7, past the 3 records"
	run -1 --separate-stderr inspect --verify past.slab
	assert_equal "$stderr" "inspect: 'past.slab': sample #0 field 'mp4': video record 7, past the 3 records"
	run -1 --separate-stderr inspect --verify swap.slab
	assert_equal "$stderr" "inspect: 'swap.slab': sample #0 'k0' field 'mp4': video record 2, expected 0"
	run -1 --separate-stderr inspect --verify count.slab
	assert_equal "$stderr" "inspect: 'count.slab': table has 4 video records, the fields use 3"
	run -1 --separate-stderr inspect outside.slab
	assert_equal "$stderr" "inspect: 'outside.slab': video records outside the table"
	run -1 --separate-stderr inspect --verify reserved.slab
	assert_equal "$stderr" "inspect: 'reserved.slab': sample #0 'k0' field 'cls': reserved record bytes are not zero"
	SLAB_LIBRARY=none run -0 pyslab - <<'PY'
import slab
def err(path, verify):
    try:
        f = slab.SlabFile(path, check_table=True)
        if verify:
            f.verify()
        else:
            f.sample(0)
    except slab.SlabError as e:
        return str(e)
print(err("past.slab", False))
print(err("past.slab", True))
print(err("swap.slab", True))
print(err("count.slab", True))
print(err("outside.slab", False))
print(err("reserved.slab", True))
PY
	assert_output "past.slab: sample 0 field mp4: video record 7, past the 3 records
past.slab: sample 0 field mp4: video record 7, past the 3 records
swap.slab: sample 0 'k0' field mp4: video record 2, expected 0
count.slab: table has 4 video records, the fields use 3
outside.slab: video records outside the table (3 records)
reserved.slab: sample 0 'k0' field cls: reserved record bytes are not zero"
}

@test "pack --image-check: a truncated video is a bad sample; without, it is kept as bytes, unrecorded" {
	setup_cut
	run -0 inspect --list t.slab
	assert_line --index 1 --regexp $'^1\tt1\t0\tcls:[0-9]+:2\tmp4:[0-9]+:[0-9]+$'
	assert_line --index 2 --regexp $'^2\tt2\t0\tcls:[0-9]+:2\tmp4:[0-9]+:[0-9]+:80x60:h264:24f:1\\.00s:24fps$'
	run -1 --separate-stderr pack -q --image-check -o c.slab t.tar
	assert_regex "$stderr" "^pack: 't.tar': sample 't1' field 'mp4': corrupt video: .+$"
	[ ! -e c.slab ]
	run -0 --separate-stderr pack -q --image-check --on-error=skip -o c.slab t.tar
	assert_regex "$stderr" "^pack: 't.tar': skipping: sample 't1' field 'mp4': corrupt video: .+$"
	run -0 inspect --list c.slab
	assert_equal "${#lines[@]}" 2
	assert_line --index 1 --regexp $'^1\tt2\t'
}

@test "pack --image-check: a damaged frame that no clip at the video's average rate picks is a bad sample" {
	# 30 frames a second for 20 frames, then 10 a second: at the average rate (15.4) the
	# check's clip passes over every other frame of the start; frame 3 (0.1 s) damaged.
	mkdir d
	ffmpeg -nostdin -v error -f lavfi -i "testsrc2=size=96x64:rate=30,setpts='if(lt(N\,20)\,N/30\,20/30+(N-20)/10)/TB'" \
		-frames:v 40 -fps_mode passthrough -c:v mpeg4 -g 100 -bf 0 -q:v 2 vfr.mp4
	local pos size
	IFS=, read -r pos size < <(ffprobe -v error -select_streams v -show_entries packet=pos,size \
		-of csv=p=0 vfr.mp4 | sed -n 4p | awk -F, '{ print $2 "," $1 }')
	python3 - vfr.mp4 d/k.mp4 "$pos" "$size" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
pos, size = int(sys.argv[3]), int(sys.argv[4])
b[pos + size // 4:pos + size] = b"\xff" * (size - size // 4)
open(sys.argv[2], "wb").write(b)
PY
	(cd d && tar --format=gnu -cf ../d.tar k.mp4)
	run -1 --separate-stderr pack -q --image-check -o d.slab d.tar
	assert_equal "$stderr" "pack: 'd.tar': sample 'k' field 'mp4': corrupt video: the frame at 0.100 s does not decode whole"
	[ ! -e d.slab ]
	# the undamaged video passes
	cp vfr.mp4 d/k.mp4
	(cd d && tar --format=gnu -cf ../d.tar k.mp4)
	run -0 pack -q --image-check -o d.slab d.tar
}

@test "pack --image-check: a frame size that changes part way, and packets before the first keyframe, are no bad samples" {
	# r0: 1 s at 96x64 then 1 s at 64x48 (VP9 streams put end to end), recorded at the size
	# of its start; r1: H.264 cut mid-group (-ss after -i, -copyinkf), recorded with the
	# 36 frames from its first keyframe (1.2 s of the source's 2 s), not its 60 packets.
	mkdir r
	video a.webm libvpx-vp9 96x64 30 1 -g 15 -deadline realtime -cpu-used 8
	video b.webm libvpx-vp9 64x48 30 1 -g 15 -deadline realtime -cpu-used 8
	printf "file a.webm\nfile b.webm\n" > list
	ffmpeg -nostdin -v error -f concat -safe 0 -i list -c copy r/r0.webm
	video src.mp4 libx264 96x64 30 2 -pix_fmt yuv420p -g 24 -x264-params scenecut=0
	ffmpeg -nostdin -v error -i src.mp4 -ss 0.3 -c copy -copyinkf r/r1.ts
	(cd r && tar --format=gnu -cf ../r.tar r0.webm r1.ts)
	run -0 pack -q --image-check -o r.slab r.tar
	run -0 inspect --list r.slab
	assert_line --index 0 --regexp $'^0\tr0\t0\twebm:[0-9]+:[0-9]+:96x64:vp9:60f:2\\.00s:30fps$'
	assert_line --index 1 --regexp $'^1\tr1\t0\tts:[0-9]+:[0-9]+:96x64:h264:36f:1\\.20s:30fps$'
}

@test "Loader(video=): clips of shape (n, T, H, W, 3) or (n, 3, T, H, W), uint8, labels, stats" {
	need_libslab
	setup_clips
	run -0 pyslab - <<'PY'
import slab
common = dict(plan="q.plan", batch_size=2, threads=2, video="mp4", frames=4, stride=2,
              size=(12, 16), crop="center", labels="cls")
with slab.Loader(["m.slab"], **common) as ld:
    hwc = []
    for b in ld:
        assert b.images.shape == (len(b), 4, 12, 16, 3) and b.images.format == "B", b.images.shape
        assert b.clips is b.images
        assert [x // 10 for x in b.labels.tolist()] == [int(k[1]) for k in b.keys]
        hwc += [bytes(b.image(j)) for j in range(len(b))]
    st = ld.stats()
assert st["clips"] == 5 and st["images"] == 0 and st["samples"] == 5, st
assert st["video_converted"] == 4 * 4 + 3, st       # m2: frames 0, 2, 4, then the pad
assert st["video_decoded"] >= st["video_converted"], st
with slab.Loader(["m.slab"], chw=True, **common) as ld:
    chw = []
    for b in ld:
        assert b.images.shape == (len(b), 3, 4, 12, 16), b.images.shape
        chw += [bytes(b.image(j)) for j in range(len(b))]
T, H, W = 4, 12, 16
for a, p in zip(hwc, chw):
    assert all(p[((c * T + t) * H + y) * W + x] == a[((t * H + y) * W + x) * 3 + c]
               for c in range(3) for t in range(T) for y in range(H) for x in range(W))
print("ok", len(hwc))
PY
	assert_output "ok 5"
}

@test "Loader(video=): the same clips with 1 or 2 threads and on resume; another epoch, other clips" {
	need_libslab
	setup_clips
	run -0 pyslab - <<'PY'
import slab
def clips(**kw):
    args = dict(batch_size=2, video="mp4", frames=3, stride=3, size=(8, 10), flip=True,
                on_short="loop", order="random", seed=3, epoch=1)
    args.update(kw)
    with slab.Loader(["m.slab"], **args) as ld:
        return [(k, bytes(b.image(j))) for b in ld for j, k in enumerate(b.keys)]
one = clips(threads=1)
two = clips(threads=2, ring=5)
assert one == two
assert clips(threads=2, start=2) == one[2:]
other = clips(threads=2, epoch=2)
assert sorted(k for k, _ in other) == sorted(k for k, _ in one)
assert dict(other) != dict(one)
# random starts and crops change with the epoch; a centred clip of the whole frame does not
same = dict(clip_start="center", crop=None, flip=False)
assert dict(clips(epoch=1, **same)) == dict(clips(epoch=2, **same))
print("ok", len(one))
PY
	assert_output "ok 5"
}

@test "Loader(video=): a video shorter than the clip is padded, looped, or a bad sample" {
	need_libslab
	setup_clips
	run -0 pyslab - <<'PY'
import slab
F = 8 * 8 * 3
def clip(key, **kw):
    args = dict(batch_size=5, video="mp4", size=(8, 8), crop=None, clip_start="begin")
    args.update(kw)
    with slab.Loader(["m.slab"], **args) as ld:
        for b in ld:
            for j, k in enumerate(b.keys):
                if k == key:
                    c = bytes(b.image(j))
                    return [c[t * F:(t + 1) * F] for t in range(len(c) // F)]
every = clip("m2", frames=5)                         # the 5 frames of m2
pad = clip("m2", frames=4, stride=2)
loop = clip("m2", frames=4, stride=2, on_short="loop")
assert pad == [every[0], every[2], every[4], every[4]]
assert loop == [every[0], every[2], every[4], every[1]]
assert len(set(every)) == 5
try:
    clip("m2", frames=4, stride=2, on_short="error")
except slab.SlabError as e:
    print(e)
with slab.Loader(["m.slab"], batch_size=5, video="mp4", frames=4, stride=2, size=(8, 8),
                 on_short="error", on_error="skip") as ld:
    print([b.keys for b in ld], ld.skipped)
PY
	assert_output "'m.slab': sample #2 'm2': field 'mp4': video of 5 frames: the clip needs 7
[['m0', 'm1', 'm3', 'm4']] 1"
}

@test "Loader(video=): a truncated video fails its batch, or is skipped and counted" {
	need_libslab
	setup_cut
	run -0 pyslab - <<'PY'
import slab
args = dict(batch_size=2, video="mp4", frames=4, size=(16, 16))
try:
    for b in slab.Loader(["t.slab"], **args):
        pass
except slab.SlabError as e:
    print(e)
with slab.Loader(["t.slab"], on_error="skip", **args) as ld:
    print([(b.keys, b.skipped) for b in ld], ld.skipped)
    print(ld.error)
PY
	assert_line --index 0 --regexp "^'t.slab': sample #1 't1': field 'mp4': corrupt video: .+$"
	assert_line --index 1 "[(['t0'], 1), (['t2'], 0)] 1"
	assert_line --index 2 --regexp "^'t.slab': sample #1 't1': field 'mp4': corrupt video: .+$"
}

@test "without FFmpeg's libraries: pack keeps videos as plain bytes, the Loader says why at once, the rest works" {
	need_libslab
	setup_clips
	# A libavutil that does not load stands for a machine without FFmpeg: libslab loads
	# FFmpeg's libraries itself when a video is first read (nothing links them).
	mkdir nolib
	: > "nolib/libavutil.so.$(pkg-config --modversion libavutil | cut -d. -f1)"
	run -0 ldd "$(command -v pack)"
	refute_output --partial libav
	LD_LIBRARY_PATH=$PWD/nolib pack -q --page-size 16K -o plain.slab m.tar
	run -0 inspect --list plain.slab
	assert_line --index 0 --regexp $'^0\tm0\t0\tcls:[0-9]+:2\tmp4:[0-9]+:[0-9]+$'
	run -0 inspect --tar plain.slab
	cmp <(inspect --tar plain.slab) <(inspect --tar m.slab)
	LD_LIBRARY_PATH=$PWD/nolib run -0 pyslab - <<'PY'
import slab
try:
    slab.Loader(["m.slab"], batch_size=2, video="mp4", frames=4, size=(16, 16))
except slab.SlabError as e:
    print(e)
with slab.Loader(["m.slab"], batch_size=5, fields=["cls"]) as ld:
    print([bytes(c).strip() for b in ld for c in b.fields["cls"]])
PY
	assert_line --index 0 --regexp "^video needs FFmpeg's libraries: .*/nolib/libavutil\.so\.[0-9]+: file too short$"
	assert_line --index 1 "[b'0', b'10', b'20', b'30', b'40']"
}

@test "Loader(video=): arguments checked" {
	need_libslab
	setup_clips
	run -0 pyslab - <<'PY'
import slab
for kw in (dict(video="mp4", image="mp4"), dict(video="mp4", channels=1),
           dict(video="mp4", alpha="drop"), dict(video="mp4", frames=0),
           dict(video="mp4", frames=65536), dict(video="mp4", stride=2, fps=5),
           dict(video="mp4", fps=0), dict(video="mp4", fps=1e-310), dict(video="mp4", fps="5"),
           dict(video="mp4", clip_start="end"), dict(video="mp4", on_short="skip"),
           dict(video=""), dict(video="mp4", max_frames=0), dict(image="mp4", frames=8),
           dict(frames=8), dict(image="mp4", stride=2), dict(image="mp4", fps=5),
           dict(image="mp4", clip_start="center"), dict(on_short="loop")):
    try:
        slab.Loader(["m.slab"], **kw)
    except (ValueError, TypeError) as e:
        print(type(e).__name__, e)
try:
    for b in slab.Loader(["m.slab"], video="cls", frames=2):
        pass
except slab.SlabError as e:
    print(e)
PY
	assert_output "ValueError image and video exclude each other: give one
ValueError video clips are RGB: channels, alpha and background go with image=
ValueError video clips are RGB: channels, alpha and background go with image=
ValueError frames must be at least 1, not 0
ValueError frames must be at most 65535, not 65536
ValueError stride and fps exclude each other: give one
ValueError fps must be a number with 0.000001 <= fps <= 1000000, not 0.0
ValueError fps must be a number with 0.000001 <= fps <= 1000000, not 1e-310
ValueError fps must be a number of frames a second, not '5'
ValueError clip_start must be 'random', 'center' or 'begin', not 'end'
ValueError on_short must be 'pad', 'loop' or 'error', not 'skip'
ValueError video must be a field name such as 'mp4', not ''
ValueError max_frames must be at least 1, not 0
ValueError frames goes with video= (clips), not 8 without it
ValueError frames goes with video= (clips), not 8 without it
ValueError stride goes with video= (clips), not 2 without it
ValueError fps goes with video= (clips), not 5 without it
ValueError clip_start goes with video= (clips), not 'center' without it
ValueError on_short goes with video= (clips), not 'loop' without it
'm.slab': sample #0 'm0': field 'cls': corrupt video: not MP4/MOV, Matroska/WebM, AVI, MPEG-TS, MPEG-PS, FLV or GIF: starts with 0x30 0x0a"
}

# frames_v3 FILE: the stream's header as "key=value" lines, then per record "file index pos
# key bytes", the clip bytes in FILE.clips; strict about what prefetch(1) documents.
frames_v3() {
	python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
magic, version, hsize, count, w, h, c, layout, ib, blk, seed, epoch, crop, flip, nf, t = \
    struct.unpack_from("<8sIIQIIIIQQQQIIII", data, 0)
assert magic == b"SLABFRMS" and hsize % 8 == 0
names, at = [], 88
for _ in range(nf):
    (n,) = struct.unpack_from("<H", data, at)
    names.append(data[at + 2:at + 2 + n].decode())
    at += 2 + n
assert data[at:hsize] == bytes(hsize - at)
print("version=%d count=%d size=%dx%d channels=%d layout=%d frames=%d image_bytes=%d "
      "image_block=%d seed=%d epoch=%d crop=%d flip=%d fields=%s"
      % (version, count, w, h, c, layout, t, ib, blk, seed, epoch, crop, flip, ",".join(names)))
assert ib == t * w * h * c and blk == (ib + 7) // 8 * 8
at, clips = hsize, open(sys.argv[1] + ".clips", "wb")
while data[at:at + 4] == b"FRAM":
    _, file, index, pos, tail, klen, _ = struct.unpack_from("<4sIQQQII", data, at)
    clip = data[at + 40:at + 40 + ib]
    assert data[at + 40 + ib:at + 40 + blk] == bytes(blk - ib)
    key = data[at + 40 + blk:at + 40 + blk + klen].decode()
    print(file, index, pos, key, len(clip))
    clips.write(clip)
    at += 40 + blk + tail
assert data[at:at + 4] == b"DONE" and at + 40 == len(data)
print("end", *struct.unpack_from("<QQ", data, at + 8))
PY
}

@test "prefetch --emit-format frames --video: stream version 3, records the Loader's clips" {
	need_libslab
	setup_clips
	prefetch -q --plan q.plan --emit --emit-format frames --video mp4 --frames 3 --stride 2 \
		--size 10x6 --flip --on-short loop -j 2 m.slab > q.frames
	run -0 frames_v3 q.frames
	assert_line --index 0 "version=3 count=5 size=10x6 channels=3 layout=0 frames=3 image_bytes=540 image_block=544 seed=7 epoch=2 crop=2 flip=1 fields=cls"
	assert_equal "${#lines[@]}" 7
	assert_line --index 6 "end 5 0"
	run -0 pyslab - <<'PY'
import slab
with slab.Loader(["m.slab"], plan="q.plan", batch_size=2, video="mp4", frames=3, stride=2,
                 size=(6, 10), flip=True, on_short="loop") as ld:
    want = b"".join(bytes(b.image(j)) for b in ld for j in range(len(b)))
assert open("q.frames.clips", "rb").read() == want
print("ok", len(want))
PY
	assert_output "ok 2700"
	prefetch -q --plan q.plan --emit --emit-format frames --video mp4 --frames 2 --fps 6 \
		--clip-start center --crop none --chw --size 4x4 --fields cls m.slab > c.frames
	run -0 frames_v3 c.frames
	assert_line --index 0 "version=3 count=5 size=4x4 channels=3 layout=1 frames=2 image_bytes=96 image_block=96 seed=7 epoch=2 crop=0 flip=0 fields=cls"
	run -0 pyslab - <<'PY'
import slab
with slab.Loader(["m.slab"], plan="q.plan", batch_size=3, video="mp4", frames=2, fps=6,
                 clip_start="center", crop=None, chw=True, size=(4, 4)) as ld:
    want = b"".join(bytes(b.image(j)) for b in ld for j in range(len(b)))
assert open("c.frames.clips", "rb").read() == want
print("ok")
PY
	assert_output "ok"
}

@test "prefetch --video: a truncated video stops the stream, or is skipped and counted" {
	setup_cut
	shuffle-plan -q --mode sequential -o t.plan t.slab
	run -1 --separate-stderr prefetch -q --plan t.plan --emit --emit-format frames --video mp4 \
		--size 8x8 --frames 2 t.slab
	assert_regex "$stderr" "^prefetch: 't.slab': sample #1 't1': field 'mp4': corrupt video: .+$"
	prefetch -q --plan t.plan --emit --emit-format frames --video mp4 --size 8x8 --frames 2 \
		--on-error skip t.slab > s.frames 2> s.err
	assert_regex "$(cat s.err)" "^prefetch: 't.slab': sample #1 't1': field 'mp4': corrupt video: .+ \(skipped\)$"
	run -0 frames_v3 s.frames
	assert_line --index 1 "0 0 0 t0 384"
	assert_line --index 2 "0 2 2 t2 384"
	assert_line --index 3 "end 2 1"
}

@test "prefetch --video: usage errors" {
	touch x.slab x.plan
	for args in "--video mp4 --image jpg|--image and --video exclude each other" \
		"--image jpg --frames 4|--frames goes with --video" \
		"--image jpg --on-short pad|--on-short goes with --video" \
		"--video mp4 --channels 1|--channels goes with --image (clips are RGB)" \
		"--video mp4 --background 1,2,3|--background goes with --image (clips are RGB)" \
		"--video mp4 --stride 2 --fps 5|--stride and --fps exclude each other" \
		"--video mp4 --frames 0|invalid --frames '0' (a number from 1 to 65535)" \
		"--video mp4 --stride 65536|invalid --stride '65536' (a number from 1 to 65535)" \
		"--video mp4 --fps 0|invalid --fps '0' (a number, 0.000001 <= F <= 1000000)" \
		"--video mp4 --fps 0x10|invalid --fps '0x10' (a number, 0.000001 <= F <= 1000000)" \
		"--video mp4 --fps 1e3|invalid --fps '1e3' (a number, 0.000001 <= F <= 1000000)" \
		"--video mp4 --fps 0.0000009|invalid --fps '0.0000009' (a number, 0.000001 <= F <= 1000000)" \
		"--video mp4 --fps 2.5.1|invalid --fps '2.5.1' (a number, 0.000001 <= F <= 1000000)" \
		"--video mp4 --clip-start end|invalid --clip-start 'end' (random, center or begin)" \
		"--video mp4 --on-short skip|invalid --on-short 'skip' (pad, loop or error)" \
		"--video ''|invalid --video '' (the name of a video field, such as mp4)"; do
		eval "set -- ${args%%|*}"
		run -2 --separate-stderr prefetch --plan x.plan --emit --emit-format frames "$@" x.slab
		assert_equal "${stderr_lines[0]}" "prefetch: ${args#*|}"
	done
	run -2 --separate-stderr prefetch --plan x.plan --emit --frames 4 x.slab
	assert_equal "${stderr_lines[0]}" "prefetch: --frames goes with --emit-format frames"
}
