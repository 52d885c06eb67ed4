# videos.bash: test videos for tests/video.bats, made at test time with Debian's ffmpeg (never
# kept in git), whose frames tell their numbers; ffmpeg's own decode of chosen frames as the
# reference; and the Python (/usr/bin/python3: numpy, PIL) that reads numbers and compares.
#
# Each frame is lavfi's testsrc2 with its top quarter painted one flat colour that encodes the
# frame number n: red 4 + 8 (n % 32), green 4 + 8 floor(n / 32), blue 128. Through YUV 4:2:0 and
# a lossy codec the band's mean comes back within a level or two, far inside the 8-level
# step, so any output that keeps the top eighth of the picture tells which frame it was.

VPY=/usr/bin/python3

# Skip unless ffmpeg and /usr/bin/python3 with numpy and PIL are here, and ffmpeg has the
# encoders named.
need_video_tools() {
	command -v ffmpeg >/dev/null 2>&1 || skip "no ffmpeg (Debian package ffmpeg)"
	command -v ffprobe >/dev/null 2>&1 || skip "no ffprobe (Debian package ffmpeg)"
	$VPY -c 'import numpy, PIL' 2>/dev/null || skip "no numpy and PIL for $VPY"
	local enc
	for enc in "$@"; do
		ffmpeg -hide_banner -encoders 2>/dev/null | grep -q " $enc " ||
			skip "ffmpeg has no $enc encoder"
	done
}

# numbered_src WxH RATE: the lavfi source of numbered frames.
numbered_src() {
	local band='lt(Y\,H/4)'
	printf '%s' "testsrc2=size=$1:rate=$2,format=gbrp,geq=r='if($band\,4+8*mod(N\,32)\,r(X\,Y))':g='if($band\,4+8*floor(N/32)\,g(X\,Y))':b='if($band\,128\,b(X\,Y))'"
}

# make_video OUT WxH RATE FRAMES [ffmpeg output options...]: a numbered video.
make_video() {
	local out=$1 size=$2 rate=$3 frames=$4
	shift 4
	ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i "$(numbered_src "$size" "$rate")" \
		-frames:v "$frames" "$@" "$out"
}

# ref_frames VIDEO OUT.raw N...: ffmpeg's decode of frames N... (in presentation order, as
# its decoder hands them out), RGB, full size, in the order given (each once, ascending).
ref_frames() {
	local video=$1 out=$2 expr="" n
	shift 2
	for n in "$@"; do
		expr="$expr${expr:++}eq(n\\,$n)"
	done
	ffmpeg -nostdin -hide_banner -loglevel error -y -i "$video" -vf "select='$expr'" \
		-fps_mode passthrough -pix_fmt rgb24 -f rawvideo "$out"
}

# all_frames VIDEO OUT.raw: ffmpeg's decode of every frame, in presentation order, RGB, full
# size.
all_frames() {
	ffmpeg -nostdin -hide_banner -loglevel error -y -i "$1" -fps_mode passthrough \
		-pix_fmt rgb24 -f rawvideo "$2"
}

# avi_without_index AVI OUT: AVI with its index (the idx1 chunk at its end) cut off.
avi_without_index() {
	$VPY -c 'import sys; b = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(b[:b.rindex(b"idx1")])' \
		"$1" "$2"
}

# reference_frames VIDEO: the numbers of the frames ffmpeg's decoder gives with -skip_frame
# noref (those some other frame refers to, and any it cannot leave out), on one line.
reference_frames() {
	ffmpeg -nostdin -v error -skip_frame noref -i "$1" -f framemd5 - |
		awk -F, '/^[0-9]/ { printf "%s%d", n++ ? " " : "", $3 }'
	echo
}

# frame_numbers RAW W H T [RAW...]: the numbers the T frames of W x H RGB (HWC) tell, on one
# line; a line for each further RAW of the same shape.
frame_numbers() {
	$VPY - "$@" <<'PY'
import sys
import numpy as np
w, h, t = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
for path in sys.argv[1:2] + sys.argv[5:]:
    a = np.fromfile(path, np.uint8).reshape(t, h, w, 3).astype(float)
    band = a[:, : max(1, h // 8)].reshape(t, -1, 3).mean(axis=1)
    print(" ".join(str(int(round((r - 4) / 8)) + 32 * int(round((g - 4) / 8))) for r, g, _ in band))
PY
}

# clips_vs_ref W H T STRIDE ALL RW RH N INDEX...: for each INDEX, the clip clipINDEX.raw
# (T x H x W x 3; vidclip's "clip first F ... crop WxH+X+Y flip F" line in lineINDEX) against
# PIL's crop + BILINEAR resize (reducing_gap None) + flip of its reference frames: the
# clip's first and every STRIDE-th after it, from ALL (every frame of the video, N of RW x RH
# x 3, as ref_frames writes them). One line a clip: the largest per-channel mean absolute
# error of any frame and the largest difference of any byte.
clips_vs_ref() {
	$VPY - "$@" <<'PY'
import re, sys
import numpy as np
from PIL import Image
w, h, t, stride = map(int, sys.argv[1:5])
everything = sys.argv[5]
rw, rh, n = map(int, sys.argv[6:9])
frames = np.fromfile(everything, np.uint8).reshape(n, rh, rw, 3)
for index in sys.argv[9:]:
    line = open("line%s" % index).read()
    first = int(re.search(r"clip first (\d+) ", line).group(1))
    m = re.search(r"crop (\d+)x(\d+)\+(\d+)\+(\d+) flip (\d)", line)
    cw, ch, cx, cy, flip = map(int, m.groups())
    a = np.fromfile("clip%s.raw" % index, np.uint8).reshape(t, h, w, 3).astype(int)
    worst_mae, worst_max = 0.0, 0
    for k in range(t):
        im = Image.fromarray(frames[first + k * stride]).crop((cx, cy, cx + cw, cy + ch))
        im = im.resize((w, h), Image.BILINEAR, reducing_gap=None)
        if flip:
            im = im.transpose(Image.FLIP_LEFT_RIGHT)
        b = np.asarray(im).astype(int)
        worst_mae = max(worst_mae, max(np.abs(a[k, :, :, c] - b[:, :, c]).mean() for c in range(3)))
        worst_max = max(worst_max, int(np.abs(a[k] - b).max()))
    print("%.4f %d" % (worst_mae, worst_max))
PY
}

# expected_by_time TIMES FIRST_T STEP T FPS: the frames the fps rule picks, from the frames'
# times (one per line, presentation order; counted from the first): for each target t = FIRST_T + k STEP, the frame
# nearest to t, the earlier of two as near (where frames are 1 / FPS apart, the first frame
# whose time is at or after t less half a frame), past the last frame the last.
expected_by_time() {
	$VPY - "$@" <<'PY'
import sys
times = [float(x) for x in open(sys.argv[1]).read().split()]
times = [x - times[0] for x in times]   # from the first frame's, as slab counts them
t0, step, t, fps = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
out = []
# (FIRST_T and STEP as printed, to 6 decimals: ties within what that rounding adds up to)
tol = 1e-6 * (t + 1)
for k in range(t):
    target = t0 + k * step
    after = next((i for i, x in enumerate(times) if x >= target - tol), len(times) - 1)
    if after > 0 and target - times[after - 1] <= times[after] - target + 2 * tol:
        after -= 1
    out.append(after)
print(" ".join(map(str, out)))
PY
}

# frames_are CLIP ALL W H I...: succeeds when CLIP (frames of W x H RGB) is, byte for byte,
# the frames I... of ALL (every frame of ffmpeg's decode, in order).
frames_are() {
	$VPY - "$@" <<'PY'
import sys
clip, every, w, h = sys.argv[1:5]
fs = int(w) * int(h) * 3
ref = open(every, "rb").read()
sys.exit(open(clip, "rb").read() != b"".join(ref[i * fs:(i + 1) * fs] for i in map(int, sys.argv[5:])))
PY
}

# clip_is_frames CLIP ALL W H T STRIDE SHORT FIRST...: frames_are for clips of T frames, one
# a FIRST: the frames FIRST + k STRIDE, past the last one the last (SHORT pad) or from the
# first again (SHORT loop).
clip_is_frames() {
	local clip=$1 all=$2 w=$3 h=$4 t=$5 s=$6 short=$7 first k i n idx=()
	shift 7
	n=$(($(stat -c %s "$all") / (w * h * 3)))
	for first in "$@"; do
		for ((k = 0; k < t; k++)); do
			i=$((first + k * s))
			if [ "$short" = pad ]; then
				((i < n)) || i=$((n - 1))
			else
				i=$((i % n))
			fi
			idx+=("$i")
		done
	done
	frames_are "$clip" "$all" "$w" "$h" "${idx[@]}"
}
