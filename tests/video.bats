#!/usr/bin/env bats
# The video pipeline from the shell (build/bin/vidclip, scripts/vidclip.c, over
# lib/dataset/video.c) on videos Debian's ffmpeg makes here (tests/test_helper/videos.bash:
# each frame tells its number): what the header says, which frames a clip takes (stride,
# fps by timestamps, centre, random, PAD, LOOP, ERROR), pixels against ffmpeg's own decode,
# determinism, limits, and broken input.
#
# Tolerances: at full size with no crop, the clip is ffmpeg's decode byte for byte (the same
# libavcodec decode and the same libswscale conversion, the frame's colour matrix and range,
# as ffmpeg's auto-inserted scale filter uses them). Cropped and resized, against PIL's
# crop + resize((W, H), BILINEAR, reducing_gap=None) + flip of ffmpeg's frames: the largest
# per-channel mean absolute error of any frame <= 0.25 and no byte more than 2 apart. The
# pixels going in are the same (byte for byte, as above), so what is left is the resize's
# rounding (the image pipeline's 14-bit SIMD weights against PIL's 22-bit ones): measured
# 0.019 at most, no byte more than 1 apart. tests/image.bats holds the image pipeline's full
# decode to 1.0; the bound here is tighter because no decoder differs.

load test_helper/common
load test_helper/videos

setup_file() {
	command -v ffmpeg >/dev/null 2>&1 || return 0
	cd "$BATS_FILE_TMPDIR" || return 1
	# H.264 with B-frames (x264's default), a keyframe every 12; 4:2:0, and 4:4:4 at an odd
	# size (4:2:0 needs even sides); VP9 in WebM and MPEG-4 Part 2 in AVI and MP4 at an odd
	# size; H.264 in MPEG-TS, FLV and Matroska.
	make_video h264.mp4 160x120 30 60 -c:v libx264 -pix_fmt yuv420p -crf 12 -g 12 || true
	# 4:2:0 rows of 100 pixels: libswscale's SIMD converter works 8 pixels at a time, and
	# left the last 4 of a row unconverted where the row had no room for 8 (as Kinetics'
	# 340-pixel rows).
	make_video w100.mp4 100x60 30 30 -c:v libx264 -pix_fmt yuv420p -crf 12 -g 12 || true
	make_video odd444.mp4 321x239 25 40 -c:v libx264 -pix_fmt yuv444p -crf 12 -g 12 || true
	make_video odd.webm 321x239 25 40 -c:v libvpx-vp9 -pix_fmt yuv420p -crf 20 -b:v 0 \
		-g 12 -deadline realtime -cpu-used 8 || true
	make_video odd.avi 321x239 25 40 -c:v mpeg4 -q:v 2 -g 12 || true
	make_video mpeg4.mp4 128x96 25 40 -c:v mpeg4 -q:v 2 -g 12 || true
	make_video h264.ts 96x64 30 40 -c:v libx264 -pix_fmt yuv420p -crf 12 -g 10 || true
	make_video h264.flv 96x64 30 40 -c:v libx264 -pix_fmt yuv420p -crf 12 -g 10 || true
	make_video h264.mkv 96x64 30 40 -c:v libx264 -pix_fmt yuv420p -crf 12 -g 10 || true
	# MPEG-4 Part 2 with B-frames in AVI: its packets carry no presentation times, so
	# frames' times are the decoder's guesses, right only when decoded from the start (and
	# the first frame's a frame after the stream's start). MPEG-2 with B-frames in MPEG-TS:
	# FFmpeg's seek to the stream's start lands at its second keyframe.
	make_video bf.avi 96x64 25 60 -c:v mpeg4 -q:v 2 -bf 2 -g 30 || true
	make_video mpeg2.ts 96x64 25 60 -c:v mpeg2video -q:v 2 -bf 2 -g 15 || true
	# MPEG-2 with B-frames in an MPEG program stream (.mpg), its index none: seeks by bytes.
	make_video mpeg2.mpg 96x64 25 60 -c:v mpeg2video -q:v 2 -bf 2 -g 15 || true
	# Variable frame rate: 30 a second for 20 frames, then 10 a second.
	ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi \
		-i "$(numbered_src 96x64 30),setpts='if(lt(N\,20)\,N/30\,20/30+(N-20)/10)/TB'" \
		-frames:v 40 -fps_mode passthrough -c:v libx264 -pix_fmt yuv420p -crf 12 -g 10 \
		vfr.mp4 || true
}

# v NAME: the file-wide video NAME, skipping when it could not be made.
v() {
	[ -s "$BATS_FILE_TMPDIR/$1" ] || skip "ffmpeg could not make $1"
	echo "$BATS_FILE_TMPDIR/$1"
}

@test "vidclip reports size, frames, rate, duration and codec from the headers, or counted" {
	need_video_tools
	run -0 vidclip --info "$(v h264.mp4)" x
	assert_output "video 160x120 frames 60 duration 2.000 fps 30/1 codec h264"
	run -0 vidclip --info "$(v odd.webm)" x
	assert_output "video 321x239 frames 40 duration 1.600 fps 25/1 codec vp9"
	run -0 vidclip --info "$(v odd.avi)" x
	assert_output "video 321x239 frames 40 duration 1.600 fps 25/1 codec mpeg4"
	run -0 vidclip --info "$(v mpeg4.mp4)" x
	assert_output "video 128x96 frames 40 duration 1.600 fps 25/1 codec mpeg4"
	run -0 vidclip --info "$(v h264.mkv)" x
	assert_output "video 96x64 frames 40 duration 1.333 fps 30/1 codec h264"
	run -0 vidclip --info "$(v h264.flv)" x
	assert_output --regexp "^video 96x64 frames 40 duration 1\.[0-9]+ fps 30/1 codec h264$"
	run -0 vidclip --info "$(v h264.ts)" x
	assert_output --regexp "^video 96x64 frames 40 duration 1\.[0-9]+ fps 30/1 codec h264$"
	run -0 vidclip --info "$(v mpeg2.mpg)" x
	assert_output "video 96x64 frames 60 duration 2.400 fps 25/1 codec mpeg2video"
}

@test "a clip takes every stride-th frame from its start, in every container and codec" {
	need_video_tools
	local f clips=() wants=() i
	for f in h264.mp4 odd444.mp4 odd.webm odd.avi mpeg4.mp4 h264.ts h264.flv h264.mkv bf.avi \
		 mpeg2.ts mpeg2.mpg; do
		local path frames
		path=$(v $f)
		frames=$(vidclip --info "$path" x | sed 's/.* frames \([0-9]*\) .*/\1/')
		for stride in 1 2 3; do
			# centre: (N - span) / 2, span = 5 stride + 1
			local first=$(((frames - (5 * stride + 1)) / 2)) want=""
			for k in 0 1 2 3 4 5; do want="$want${want:+ }$((first + k * stride))"; done
			run -0 vidclip --crop none --size 48x32 --frames 6 --stride $stride \
				--start center "$path" "$f.$stride.raw"
			assert_line --index 1 --regexp "^clip first $first "
			clips+=("$f.$stride.raw")
			wants+=("$want")
		done
	done
	run -0 frame_numbers "${clips[0]}" 48 32 6 "${clips[@]:1}"
	[ "${#lines[@]}" -eq 33 ] || fail "$output"
	for i in "${!clips[@]}"; do
		[ "${lines[i]}" = "${wants[i]}" ] ||
			fail "${clips[i]%.raw} (video.stride): frames ${lines[i]}, not ${wants[i]}"
	done
}

@test "random starts are the frames the clip parameters name, and keyframe seeks decode less" {
	need_video_tools
	local path first want
	path=$(v h264.mp4)
	for index in 0 1 2 3 4 5 6 7; do
		run -0 vidclip --crop none --size 32x24 --frames 4 --stride 2 --start random \
			--seed 11 --index $index "$path" clip.raw
		first=$(echo "${lines[1]}" | sed 's/^clip first \([0-9]*\) .*/\1/')
		[ "$first" -le $((60 - 7)) ]
		want="$first $((first + 2)) $((first + 4)) $((first + 6))"
		run -0 frame_numbers clip.raw 32 24 4
		assert_output "$want"
	done
	# A keyframe every 12 frames: the centred clip of frames 26..32 seeks once, decodes from
	# frame 24 on (9 frames; a demuxer landing a keyframe early would add 12) and converts
	# only its 4 frames.
	run -0 vidclip --crop none --size 32x24 --frames 4 --stride 2 --start center "$path" \
		clip.raw
	assert_line --index 1 --regexp "^clip first 26 "
	run -0 bash -c "echo '${lines[2]}' | awk '{ print (\$2 >= 9 && \$2 <= 20), \$4, \$6 }'"
	assert_output "1 4 1"
}

@test "frames before the clip that nothing refers to are left undecoded; the clip is ffmpeg's frames" {
	need_video_tools
	# One keyframe (frame 0), x264's default B-frames (3, pyramid: 2 of each 3 are not
	# references): the centred clip of frames 56..62 needs the 56 frames before it as
	# references only, and about half of them are none.
	make_video long.mp4 96x64 30 120 -c:v libx264 -pix_fmt yuv420p -crf 12 -g 300 \
		-x264-params scenecut=0 || skip "ffmpeg could not make long.mp4"
	run -0 vidclip --crop none --size 96x64 --frames 4 --stride 2 --start center long.mp4 \
		clip.raw
	assert_line --index 1 --regexp "^clip first 56 "
	local decoded
	decoded=$(echo "${lines[2]}" | awk '{ print $2 }')
	assert_line --index 2 --regexp "^decoded [0-9]+ converted 4 seeks 1$"
	# SLAB_VIDEO_SKIP=0 decodes every frame up to the clip's last: 63, the same pixels
	SLAB_VIDEO_SKIP=0 run -0 vidclip --crop none --size 96x64 --frames 4 --stride 2 \
		--start center long.mp4 every.raw
	assert_line --index 2 "decoded 63 converted 4 seeks 1"
	[ "$decoded" -lt 56 ] || fail "decoded $decoded frames: non-reference frames were not skipped"
	cmp clip.raw every.raw
	ref_frames long.mp4 ref.raw 56 58 60 62
	cmp clip.raw ref.raw
	run -0 frame_numbers clip.raw 96 64 4
	assert_output "56 58 60 62"
}

@test "frames between the sampled ones that nothing refers to are left undecoded: exactly the references and the clip" {
	need_video_tools
	# x264's defaults (crf 23, 3 B-frames, pyramid), one keyframe: a centred clip of 16
	# frames at stride 2 (44, 46, ... 74) needs the reference frames up to its last and its
	# own frames, nothing else. The decoder reads the frames after a target before handing
	# it out (B-frames are decoded after the frame they are shown before): those between
	# two targets are left out too, as a frame before them is already each target's pick.
	make_video mid.mp4 160x120 30 120 -c:v libx264 -pix_fmt yuv420p -g 300 \
		-x264-params scenecut=0 || skip "ffmpeg could not make mid.mp4"
	run -0 vidclip --crop none --size 160x120 --frames 16 --stride 2 --start center mid.mp4 \
		clip.raw
	assert_line --index 1 --regexp "^clip first 44 "
	local decoded
	decoded=$(echo "${lines[2]}" | awk '{ print $2 }')
	# ffmpeg's own count: the references (reference_frames) up to 74, and the clip's frames
	# that are none
	run -0 python3 - $(reference_frames mid.mp4) <<'PY'
import sys
refs = {int(a) for a in sys.argv[1:]}
clip = set(range(44, 75, 2))
print(len({r for r in refs if r <= 74} | clip), len(clip - refs))
PY
	local want=${output% *} nonref=${output#* }
	[ "$nonref" -gt 0 ] || skip "x264 made every frame of the clip a reference"
	[ "$decoded" -eq "$want" ] || fail "decoded $decoded frames, the references and the clip are $want"
	SLAB_VIDEO_SKIP=0 vidclip --crop none --size 160x120 --frames 16 --stride 2 --start center \
		mid.mp4 every.raw > /dev/null
	cmp clip.raw every.raw
	ref_frames mid.mp4 ref.raw $(seq 44 2 74)
	cmp clip.raw ref.raw
}

@test "a last frame nothing refers to, and times that go back: the clip decoding every frame gives" {
	need_video_tools libvpx libx264
	# VP8 in two temporal layers: every other frame is not a reference, the last (49) too.
	# A clip past the end is padded with the last frame, which is never left out: the
	# references and the clip's frames, each once, as for a clip inside the video.
	make_video layers.webm 96x64 25 50 -c:v libvpx -b:v 300k \
		-ts-parameters ts_layering_mode=2:ts_target_bitrate=150,300 ||
		skip "ffmpeg could not make layers.webm"
	local refs
	refs=$(reference_frames layers.webm)
	[[ " $refs " != *" 49 "* ]] || skip "libvpx made the last frame a reference"
	# the clip 0, 12, 24 (references) decodes the references up to 24 and nothing else
	run -0 vidclip --crop none --size 96x64 --frames 3 --stride 12 --start begin layers.webm \
		short.raw
	assert_line --index 2 "decoded $(awk '{ for (i = 1; i <= NF; i++) n += $i <= 24; print n }' <<<"$refs") converted 3 seeks 1"
	local args
	for args in "--frames 3 --stride 25" "--frames 4 --stride 20" "--fps 2.5 --frames 6"; do
		vidclip --crop none --size 96x64 $args --start begin --on-short pad layers.webm \
			clip.raw > /dev/null
		SLAB_VIDEO_SKIP=0 vidclip --crop none --size 96x64 $args --start begin \
			--on-short pad layers.webm every.raw > /dev/null
		cmp clip.raw every.raw || fail "$args: not the frames decoding every frame gives"
	done
	run -0 frame_numbers clip.raw 96 64 6
	assert_output "0 10 20 30 40 49"
	# the clip 0, 25, 49 (49 the pick of the target past the end): the references and 25
	# and 49, one seek (to the start: the frames were counted when the video was opened)
	run -0 vidclip --crop none --size 96x64 --frames 3 --stride 25 --start begin \
		--on-short pad layers.webm clip.raw
	assert_line --index 2 "decoded $(awk '{ for (i = 1; i <= NF; i++) n += $i != 25; print n + 2 }' <<<"$refs") converted 3 seeks 1"

	# H.264 whose frames' times go back (times as a damaged mux leaves them): skipping
	# counts on times in the order frames are shown, so it stops, and a clip is decoded
	# again where frames were left out.
	make_video back.mkv 96x64 25 300 -c:v libx264 -pix_fmt yuv420p -x264-params bframes=3 \
		-vf "setpts='if(lt(mod(N,10),5),N*0.03,N*0.05)/TB'" -fps_mode passthrough ||
		skip "ffmpeg could not make back.mkv"
	run -0 $VPY -c '
import subprocess
t = [float(l.split(",")[1]) for l in subprocess.run(["ffprobe", "-v", "error", "-show_entries",
     "frame=pts_time", "-of", "csv", "back.mkv"], capture_output=True, text=True,
     check=True).stdout.split()]
print(sum(b < a for a, b in zip(t, t[1:])))'
	[ "$output" -gt 0 ] || skip "ffmpeg kept the frames' times in order"
	for args in "--frames 14 --stride 4 --start begin" "--frames 15 --stride 2 --start center" \
		    "--frames 11 --stride 3 --seed 7 --epoch 4 --index 71400" \
		    "--frames 8 --fps 7 --seed 7 --index 3 --clips 4"; do
		vidclip --crop none --size 48x32 $args --on-short pad back.mkv clip.raw > /dev/null
		SLAB_VIDEO_SKIP=0 vidclip --crop none --size 48x32 $args --on-short pad back.mkv \
			every.raw > /dev/null
		cmp clip.raw every.raw || fail "$args: not the frames decoding every frame gives"
	done
}

@test "a clip padded past the end decodes each frame once: its last frame repeats, the video is not decoded again" {
	need_video_tools
	local path=$(v w100.mp4) refs args want counts
	refs=$(reference_frames "$path")
	# 30 frames of H.264 with B-frames: the targets past frame 29 pick it, and the decode
	# ends there. Decoded: the references (which 29 is) and the clip's frames, once each,
	# converted: the clip's frames; before, a frame near the end asked to be left out had
	# the whole clip decoded again (19 frames and 30 more).
	for args in "--frames 4 --stride 10:0 10 20 29" "--frames 4 --stride 20:0 20 29 29" \
		    "--fps 5 --frames 8:0 6 12 18 24 29 29 29"; do
		want=${args#*:}
		counts=$(python3 -c 'import sys; r = set(sys.argv[1].split()); c = set(sys.argv[2].split())
print("decoded %d converted %d" % (len(r | c), len(c)))' "$refs" "$want")
		run -0 vidclip --crop none --size 100x60 ${args%:*} --start begin --on-short pad \
			"$path" clip.raw
		assert_line --index 2 "$counts seeks 0"
		run -0 frame_numbers clip.raw 100 60 $(wc -w <<<"$want")
		assert_output "$want"
		SLAB_VIDEO_SKIP=0 vidclip --crop none --size 100x60 ${args%:*} --start begin \
			"$path" every.raw > /dev/null
		cmp clip.raw every.raw || fail "$args: not the frames decoding every frame gives"
	done
	# MPEG-4 without B-frames, every frame a reference: the 40 frames once, not 80
	run -0 vidclip --crop none --size 128x96 --frames 4 --stride 20 --start begin \
		"$(v mpeg4.mp4)" clip.raw
	assert_line --index 2 "decoded 40 converted 3 seeks 0"
	run -0 frame_numbers clip.raw 128 96 4
	assert_output "0 20 39 39"
}

@test "a looped clip copies the frames of targets it wraps onto: each frame decoded and converted once" {
	need_video_tools
	local path=$(v w100.mp4) refs args want most distinct decoded
	refs=$(reference_frames "$path")
	# 30 frames of H.264 with B-frames. A target wrapped onto one of the clip's first pass
	# over the video takes that target's frame, already made: no seek back to the start,
	# each distinct frame converted once, and decoded: the clip's frames and references,
	# once each, at most all the video's references (those shown after the clip's last
	# frame are decoded before it); before, every target was decoded and converted again
	# after a seek (80 of each for 80 targets).
	for args in "--frames 80:$(seq -s ' ' 0 29) $(seq -s ' ' 0 29) $(seq -s ' ' 0 19)" \
		    "--frames 16 --stride 3:0 3 6 9 12 15 18 21 24 27 0 3 6 9 12 15" \
		    "--frames 12 --fps 5:0 6 12 18 24 0 6 12 18 24 0 6"; do
		want=${args#*:}
		read -r most distinct < <(python3 -c 'import sys; r = set(sys.argv[1].split())
c = set(sys.argv[2].split()); print(len(r | c), len(c))' "$refs" "$want")
		run -0 vidclip --crop none --size 100x60 ${args%:*} --start begin --on-short loop \
			"$path" clip.raw
		assert_line --index 2 --regexp "^decoded [0-9]+ converted $distinct seeks 0$"
		decoded=$(sed -n 's/^decoded \([0-9]*\) .*/\1/p' <<<"$output")
		[ "$decoded" -le "$most" ] || fail "$args: decoded $decoded frames, more than $most"
		run -0 frame_numbers clip.raw 100 60 $(wc -w <<<"$want")
		assert_output "$want"
		SLAB_VIDEO_SKIP=0 vidclip --crop none --size 100x60 ${args%:*} --start begin \
			--on-short loop "$path" every.raw > /dev/null
		cmp clip.raw every.raw || fail "$args: not the frames decoding every frame gives"
		# and as planes: the same frames copied
		vidclip --crop none --size 100x60 ${args%:*} --start begin --on-short loop --chw \
			"$path" chw.raw > /dev/null
		run -0 $VPY -c '
import sys
import numpy as np
t = int(sys.argv[1])
a = np.fromfile("clip.raw", np.uint8).reshape(t, 60, 100, 3)
c = np.fromfile("chw.raw", np.uint8).reshape(3, t, 60, 100)
print((a.transpose(3, 0, 1, 2) == c).all())' $(wc -w <<<"$want")
		assert_output "True"
	done
}

@test "AVI with B-frames (frames numbered from a decode from the start, then keyframe seeks) and MPEG-TS (a seek to the start lands late): ffmpeg's frames" {
	need_video_tools
	local f path first
	for f in bf.avi mpeg2.ts; do
		path=$(v $f)
		# three clips from the start by one decoder: the second and third seek back
		run -0 vidclip --crop none --size 96x64 --frames 4 --stride 2 --start begin --clips 3 \
			"$path" clip.raw
		ref_frames "$path" ref.raw 0 2 4 6
		cat ref.raw ref.raw ref.raw > ref3.raw
		cmp clip.raw ref3.raw || fail "$f: clips from the start are not ffmpeg's frames 0 2 4 6"
		for index in 3 17 40; do
			run -0 vidclip --crop none --size 96x64 --frames 4 --stride 3 --seed 5 \
				--index $index "$path" clip.raw
			first=$(sed -n 's/^clip first \([0-9]*\) .*/\1/p' <<<"$output")
			ref_frames "$path" ref.raw $first $((first + 3)) $((first + 6)) $((first + 9))
			cmp clip.raw ref.raw || fail "$f index $index: not ffmpeg's frames from $first"
		done
	done
	# A clip of the AVI before its second keyframe (frame 30) decodes from its start; one
	# after it decodes its first frames (frame 0 comes out at the second packet), then
	# seeks there: 30 frames left undecoded, ffmpeg's frames all the same.
	run -0 vidclip --crop none --size 96x64 --frames 2 --start center "$(v bf.avi)" clip.raw
	assert_line --index 1 --regexp "^clip first 29 "
	assert_line --index 2 --regexp "^decoded (3[0-9]|[4-9][0-9]) "
	run -0 vidclip --crop none --size 96x64 --frames 4 --stride 2 --start random --index 2 \
		"$(v bf.avi)" clip.raw
	first=$(sed -n 's/^clip first \([0-9]*\) .*/\1/p' <<<"$output")
	[ "$first" -ge 31 ] || fail "index 2 starts at $first: wanted a clip past frame 30"
	assert_line --index 2 --regexp "^decoded [0-9]+ converted 4 "
	local decoded=$(sed -n 's/^decoded \([0-9]*\) .*/\1/p' <<<"$output")
	[ "$decoded" -le $((first - 30 + 7 + 4)) ] ||
		fail "decoded $decoded frames for a clip of frames $first-$((first + 6))"
	ref_frames "$(v bf.avi)" ref.raw $first $((first + 2)) $((first + 4)) $((first + 6))
	cmp clip.raw ref.raw || fail "not ffmpeg's frames from $first"
}

@test "MPEG-TS (no index): a clip seeks once, to the bytes of the keyframe before it, and from the start decodes each frame once" {
	need_video_tools
	local path
	# A keyframe every 10 frames: the clip of frames 33..37 decodes from frame 30 (8 frames
	# at most); a seek by time landed on a packet after keyframe 30, passed on to keyframe
	# 40, and backed off a second, to keyframe 10 (22 frames, 2 seeks).
	path=$(v h264.ts)
	run -0 vidclip --crop none --size 96x64 --frames 5 --stride 1 --start random --index 1 \
		"$path" clip.raw
	assert_line --index 1 --regexp "^clip first 33 "
	assert_line --index 2 --regexp "^decoded [1-8] converted 5 seeks 1$"
	ref_frames "$path" ref.raw 33 34 35 36 37
	cmp clip.raw ref.raw || fail "h264.ts: not ffmpeg's frames 33-37"
	# From the start (the decoder has read the file through to count its frames): one seek,
	# each frame decoded once (a seek by time landed past the first keyframe, and the file
	# was opened again: a frame more and 2 seeks).
	run -0 vidclip --crop none --size 96x64 --frames 40 --start begin "$path" clip.raw
	assert_line --index 2 "decoded 40 converted 40 seeks 1"
	all_frames "$path" ref.raw
	cmp clip.raw ref.raw || fail "h264.ts: not ffmpeg's frames 0-39"
	path=$(v mpeg2.ts)
	run -0 vidclip --crop none --size 96x64 --frames 60 --start begin "$path" clip.raw
	assert_line --index 2 "decoded 60 converted 60 seeks 1"
	all_frames "$path" ref.raw
	cmp clip.raw ref.raw || fail "mpeg2.ts: not ffmpeg's frames 0-59"
}

@test "MPEG-TS of 192-byte packets (M2TS, AVCHD's .MTS) and of 204 (DVB): read as MPEG-TS, ffmpeg's frames" {
	need_video_tools
	make_video a.m2ts 96x64 25 30 -c:v libx264 -pix_fmt yuv420p -crf 12 -g 10 -f mpegts \
		-mpegts_m2ts_mode 1
	# 204: each 188-byte packet followed by 16 bytes (DVB's Reed-Solomon parity)
	$VPY - "$(v h264.ts)" a204.ts <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
assert len(b) % 188 == 0
open(sys.argv[2], "wb").write(b"".join(b[i:i + 188] + bytes(16) for i in range(0, len(b), 188)))
PY
	run -0 vidclip --info a.m2ts x
	assert_output "video 96x64 frames 30 duration 1.200 fps 25/1 codec h264"
	run -0 vidclip --crop none --size 96x64 --frames 5 --stride 3 --start random --index 1 \
		a.m2ts clip.raw
	assert_line --index 1 --regexp "^clip first 16 "
	ref_frames a.m2ts ref.raw 16 19 22 25 28
	cmp clip.raw ref.raw || fail "a.m2ts: not ffmpeg's frames"
	run -0 vidclip --crop none --size 96x64 --frames 40 --start begin a204.ts clip.raw
	all_frames "$(v h264.ts)" ref.raw
	cmp clip.raw ref.raw || fail "a204.ts: not ffmpeg's frames of h264.ts"
	# pack finds them too, and records them
	mkdir -p p
	cp a.m2ts p/k.mts
	tar -C p -cf p.tar k.mts
	run -0 pack -q --image-check -o p.slab p.tar
	run -0 inspect --list p.slab
	assert_output --regexp $'\tmts:[0-9]+:[0-9]+:96x64:h264:30f:1\\.20s:25fps$'
}

@test "Xvid AVI with packed B-frames (UCF101's kind): counted as it decodes, its frames ffmpeg's to the end" {
	need_video_tools libxvid
	make_video xvid.avi 64x48 25 60 -c:v libxvid -q:v 2 -bf 2 -g 30 ||
		skip "ffmpeg could not make an Xvid AVI"
	# The header counts 60 frames, two of them empty chunks (the B-frames the encoder held
	# back); ffmpeg decodes 58.
	run -0 ffprobe -v error -count_frames -select_streams v \
		-show_entries stream=nb_frames,nb_read_frames -of csv=p=0 xvid.avi
	assert_output "60,58"
	run -0 vidclip --info xvid.avi x
	assert_output "video 64x48 frames 58 duration 2.320 fps 25/1 codec mpeg4"
	# counted from the index, or without one (cut off: the packets are read) the same
	avi_without_index xvid.avi noindex.avi
	run -0 vidclip --info noindex.avi x
	assert_output "video 64x48 frames 58 duration 2.320 fps 25/1 codec mpeg4"
	all_frames xvid.avi all.raw
	# every frame; clips that end past the last frame (padded) and wrap (looped) at frame 58
	local args short
	for args in "58 1 pad" "20 3 pad" "25 5 loop" "40 2 loop"; do
		read -r t s short <<<"$args"
		run -0 vidclip --crop none --size 64x48 --frames $t --stride $s --start begin \
			--on-short $short xvid.avi clip.raw
		clip_is_frames clip.raw all.raw 64 48 $t $s $short 0 || fail "$args: not ffmpeg's frames"
	done
	run -1 --separate-stderr vidclip --crop none --size 64x48 --frames 59 --start begin \
		--on-short error xvid.avi clip.raw
	assert_equal "$stderr" "vidclip: 'xvid.avi': video of 58 frames: the clip needs 59"
}

@test "Xvid AVI clips seek to the keyframe its index names before them (without an index: from the start; an index marking every chunk: still exact): ffmpeg's frames" {
	need_video_tools libxvid
	# UCF101's shape of group: a keyframe every 12 frames, 2 B-frames, 100 frames.
	make_video gop.avi 64x48 25 100 -c:v libxvid -q:v 3 -bf 2 -g 12 ||
		skip "ffmpeg could not make an Xvid AVI"
	avi_without_index gop.avi noindex.avi
	# and an index that marks every chunk a keyframe (AVIIF_KEYFRAME), as some muxers do
	$VPY - <<'PY'
import struct
b = bytearray(open("gop.avi", "rb").read())
i = b.rindex(b"idx1")
for e in range(i + 8, i + 8 + struct.unpack_from("<I", b, i + 4)[0], 16):
    struct.pack_into("<I", b, e + 4, struct.unpack_from("<I", b, e + 4)[0] | 0x10)
open("allkey.avi", "wb").write(b)
PY
	all_frames gop.avi all.raw
	local f index first decoded
	for f in gop.avi noindex.avi allkey.avi; do
		for index in 1 2 3 4 5 6 7 8; do
			run -0 vidclip --crop none --size 64x48 --frames 6 --stride 2 --start random \
				--index $index --clips 2 $f clip.raw
			first=$(sed -n 's/^clip first \([0-9]*\) .*/\1/p' <<<"$output" | paste -sd ' ')
			clip_is_frames clip.raw all.raw 64 48 6 2 pad $first ||
				fail "$f index $index: not ffmpeg's frames from $first"
			# the first clip: from the keyframe before it (at most 11 frames before, and
			# the first frames to number them), or, without an index, from the start
			first=${first%% *}
			decoded=$(sed -n 's/^decoded \([0-9]*\) .*/\1/p' <<<"$output" | head -1)
			if [ $f = gop.avi ]; then
				[ "$decoded" -le $((11 + 11 + 2)) ] ||
					fail "index $index: $decoded frames decoded for frames $first-$((first + 10))"
			elif [ $f = noindex.avi ]; then
				[ "$decoded" -ge $((first + 11)) ] ||
					fail "index $index: $decoded frames decoded without an index from $first"
			fi
		done
	done
}

@test "Xvid AVI with an empty chunk among its frames (a frame the encoder dropped): frames as they decode, not by chunk times" {
	need_video_tools libxvid
	# A Game of Life: libxvid drops a frame early on (its chunk left empty, a tick with no
	# frame), so the frames' chunk times run 0 1 2 3 4 6: ffmpeg decodes 58 frames of 60
	# chunks, and frame 5 is the one after frame 4, not a repeat of it.
	ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi \
		-i "life=size=32x24:rate=25:mold=10:ratio=0.3:seed=5,scale=64x48" -frames:v 60 \
		-c:v libxvid -bf 2 -g 12 -q:v 4 life.avi || skip "ffmpeg could not make an Xvid AVI"
	run -0 ffprobe -v error -select_streams v -show_entries packet=dts -of csv=p=0 life.avi
	[ "$(head -8 <<<"$output" | paste -sd ' ')" = "0 1 2 3 4 6 7 8" ] ||
		skip "libxvid left no chunk empty here: $(head -8 <<<"$output" | paste -sd ' ')"
	run -0 vidclip --info life.avi x
	assert_output "video 64x48 frames 58 duration 2.320 fps 25/1 codec mpeg4"
	avi_without_index life.avi noindex.avi
	all_frames life.avi all.raw
	local f index first
	for f in life.avi noindex.avi; do
		run -0 vidclip --crop none --size 64x48 --frames 10 --stride 1 --start begin $f clip.raw
		clip_is_frames clip.raw all.raw 64 48 10 1 pad 0 || fail "$f: frames 0-9 are not ffmpeg's"
		for index in 1 2 3 4 5 6; do
			run -0 vidclip --crop none --size 64x48 --frames 5 --stride 3 --start random \
				--index $index --clips 2 $f clip.raw
			first=$(sed -n 's/^clip first \([0-9]*\) .*/\1/p' <<<"$output" | paste -sd ' ')
			clip_is_frames clip.raw all.raw 64 48 5 3 pad $first ||
				fail "$f index $index: not ffmpeg's frames from $first"
		done
	done
}

@test "videos cut or rewrapped without decoding (an MP4's edit list, H.264 copied into AVI): the frames and rate a decode gives" {
	need_video_tools libx264
	make_video src.mp4 64x48 25 150 -c:v libx264 -pix_fmt yuv420p \
		-x264-params keyint=50:bframes=3 &&
	ffmpeg -nostdin -v error -ss 1.3 -i src.mp4 -t 3 -c copy cut.mp4 &&
	ffmpeg -nostdin -v error -i src.mp4 -c copy copy.avi || skip "ffmpeg could not make the videos"
	# The cut keeps 110 packets from the keyframe before 1.3 s; its edit list shows 77 of
	# them. The AVI has a chunk every half frame (50 a second, every other one empty).
	local f
	for f in cut.mp4 copy.avi; do
		ffprobe -v error -count_frames -select_streams v \
			-show_entries stream=avg_frame_rate,nb_frames,nb_read_frames -of csv=p=0 $f
	done > probed
	assert_equal "$(cat probed)" "25/1,110,77
50/1,300,150"
	run -0 vidclip --info cut.mp4 x
	assert_output "video 64x48 frames 77 duration 3.220 fps 25/1 codec h264"
	run -0 vidclip --info copy.avi x
	assert_output "video 64x48 frames 150 duration 6.000 fps 25/1 codec h264"
	# the cut's first frame is the source's frame 33 (1.32 s)
	run -0 vidclip --crop none --size 64x48 --frames 1 --start begin cut.mp4 clip.raw
	run -0 frame_numbers clip.raw 64 48 1
	assert_output "33"
	local n first firsts
	for f in cut.mp4 copy.avi; do
		all_frames $f all.raw
		n=$(($(stat -c %s all.raw) / (64 * 48 * 3)))
		# random clips all start where 8 frames at stride 3 fit, and are ffmpeg's frames
		run -0 vidclip --crop none --size 64x48 --frames 8 --stride 3 --start random \
			--clips 12 $f clip.raw
		firsts=$(sed -n 's/^clip first \([0-9]*\) .*/\1/p' <<<"$output")
		for first in $firsts; do
			[ $((first + 21)) -lt $n ] || fail "$f: a clip from frame $first of $n"
		done
		clip_is_frames clip.raw all.raw 64 48 8 3 pad $firsts || fail "$f: not ffmpeg's frames"
		run -0 vidclip --crop none --size 64x48 --frames 30 --stride 7 --start begin \
			--on-short loop $f clip.raw
		clip_is_frames clip.raw all.raw 64 48 30 7 loop 0 || fail "$f: looped: not ffmpeg's frames"
	done
}

# A stream whose first packets are not keyframes (a capture cut mid-group, rewrapped into MP4
# with those packets and no edit list): the demuxer has no keyframe at or before an early
# clip's start, and the seek there fails. Such clips failed as "operation not permitted",
# by where the random start fell; now they decode from the start, as a seek to it would.
@test "a clip before a stream's first keyframe (an MP4 of a capture cut mid-group) decodes from the start" {
	need_video_tools libx264
	make_video long.ts 64x48 25 100 -c:v libx264 -pix_fmt yuv420p -g 25 -bf 2 &&
	n=$(stat -c %s long.ts) &&
	tail -c +$(((n / 3) / 188 * 188 + 1)) long.ts >midgop.ts &&
	ffmpeg -nostdin -v error -i midgop.ts -c copy -copyinkf midgop.mp4 ||
		skip "ffmpeg could not make the videos"
	for i in $(seq 0 11); do
		run -0 --separate-stderr vidclip --size 64x48 --frames 4 --start random --index "$i" midgop.mp4 o.raw
		[ "$(stat -c %s o.raw)" -eq $((4 * 64 * 48 * 3)) ]
	done
}

# Packets before a stream's first keyframe (a capture cut mid-group: `-ss` after `-i` with
# -copyinkf keeps them) are no frames: a decode shows none of them. They were counted as
# frames (30 more here than the 72 ffmpeg decodes) and the frames' times started at
# the first of them, so an early clip repeated the first frame that decodes.
@test "packets before a stream's first keyframe are no frames: the count, times and clips of ffmpeg's decode" {
	need_video_tools libx264 libvpx-vp9
	make_video src.mp4 96x64 30 120 -c:v libx264 -pix_fmt yuv420p -crf 12 -g 48 \
		-x264-params scenecut=0 &&
	make_video src.webm 96x64 30 120 -c:v libvpx-vp9 -crf 20 -b:v 0 -g 48 \
		-deadline realtime -cpu-used 8 || skip "ffmpeg could not make the videos"
	local f n first firsts
	for f in cut.ts cut.mkv cut.mp4 cut.flv; do
		ffmpeg -nostdin -v error -y -i src.mp4 -ss 0.6 -c copy -copyinkf $f
	done
	ffmpeg -nostdin -v error -y -i src.webm -ss 0.6 -c copy -copyinkf cut.webm
	for f in cut.ts cut.mkv cut.mp4 cut.flv cut.webm; do
		# the first keyframe is the source's frame 48: 72 frames decode
		run -0 --separate-stderr ffprobe -v quiet -count_frames -select_streams v \
			-show_entries stream=nb_read_frames -of csv=p=0 $f
		assert_line --index 0 "72"
		run -0 vidclip --info $f x
		assert_output --regexp "^video 96x64 frames 72 duration 2\.400 fps 30/1 codec (h264|vp9)\$"
		run -0 vidclip --crop none --size 96x64 --frames 4 --stride 10 --start begin $f clip.raw
		run -0 frame_numbers clip.raw 96 64 4
		assert_output "48 58 68 78"
		all_frames $f all.raw
		n=$(($(stat -c %s all.raw) / (96 * 64 * 3)))
		[ "$n" -eq 72 ]
		run -0 vidclip --crop none --size 96x64 --frames 5 --stride 3 --start random \
			--clips 10 $f clip.raw
		firsts=$(sed -n 's/^clip first \([0-9]*\) .*/\1/p' <<<"$output")
		clip_is_frames clip.raw all.raw 96 64 5 3 pad $firsts || fail "$f: not ffmpeg's frames"
		run -0 vidclip --crop none --size 96x64 --frames 30 --stride 3 --start begin \
			--on-short loop $f clip.raw
		clip_is_frames clip.raw all.raw 96 64 30 3 loop 0 || fail "$f: looped: not ffmpeg's frames"
		run -0 vidclip --crop none --size 96x64 --frames 8 --stride 11 --start begin \
			--on-short pad $f clip.raw
		clip_is_frames clip.raw all.raw 96 64 8 11 pad 0 || fail "$f: padded: not ffmpeg's frames"
		run -1 --separate-stderr vidclip --frames 8 --stride 11 --start begin \
			--on-short error $f clip.raw
		assert_equal "$stderr" "vidclip: '$f': video of 72 frames: the clip needs 78"
	done
}

# A frame size that changes part way (streams put end to end, a resolution switch): each frame
# is converted to the clip's size, the crop scaled to it (the same part of the picture, a
# fractional box; the nearest resize, the nearest box of whole pixels). Such a clip failed
# ("a frame of 64x48 in a video of 96x64").
@test "a frame size that changes part way: every frame to the clip's size, the crop scaled to it" {
	need_video_tools libx264 libvpx-vp9
	local e f
	for e in ts webm; do
		local opts=(-c:v libx264 -pix_fmt yuv420p -crf 12 -g 15)
		[ $e = webm ] && opts=(-c:v libvpx-vp9 -crf 20 -b:v 0 -g 15 -deadline realtime -cpu-used 8)
		# frames 0..29 at 96x64, then 30..59 at 64x48
		make_video a.$e 96x64 30 30 "${opts[@]}" &&
		ffmpeg -nostdin -v error -y -f lavfi \
			-i "$(numbered_src 64x48 30),trim=start_frame=30,setpts=PTS-STARTPTS" \
			-frames:v 30 "${opts[@]}" b.$e &&
		printf "file a.%s\nfile b.%s\n" $e $e > list &&
		ffmpeg -nostdin -v error -y -f concat -safe 0 -i list -c copy ab.$e ||
			skip "ffmpeg could not make the videos"
	done
	for f in ab.ts ab.webm; do
		e=${f#ab.}
		run -0 --separate-stderr ffprobe -v error -select_streams v \
			-show_entries frame=width,height -of csv=p=0 $f
		assert_equal "$(grep -c '^96,64' <<<"$output") $(grep -c '^64,48' <<<"$output")" "30 30"
		run -0 vidclip --info $f x
		assert_output --regexp "^video 96x64 frames 60 duration 2\.000 fps 30/1 codec "
		all_frames a.$e a.raw
		all_frames b.$e b.raw
		local args
		for args in "32 32 --crop center" "48 32 --crop none" "96 64 --crop none" \
			    "40 40 --crop random-resized --flip --seed 4"; do
			local w h
			read -r w h args <<<"$args"
			run -0 vidclip $args --size ${w}x$h --frames 6 --stride 10 --start begin $f \
				clip.raw
			run -0 $VPY - $w $h "${lines[1]}" <<'PY'
import re, sys
import numpy as np
from PIL import Image
w, h, line = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
cw, ch, cx, cy, flip = map(int, re.search(r"crop (\d+)x(\d+)\+(\d+)\+(\d+) flip (\d)", line).groups())
a = np.fromfile("a.raw", np.uint8).reshape(-1, 64, 96, 3)
b = np.fromfile("b.raw", np.uint8).reshape(-1, 48, 64, 3)
clip = np.fromfile("clip.raw", np.uint8).reshape(6, h, w, 3).astype(int)
refs = [a[0], a[10], a[20], b[0], b[10], b[20]]
worst_mae, worst_max = 0.0, 0
for k, fr in enumerate(refs):
    im = Image.fromarray(fr)
    sx, sy = fr.shape[1] / 96, fr.shape[0] / 64
    if (sx, sy) == (1, 1):
        im = im.crop((cx, cy, cx + cw, cy + ch)).resize((w, h), Image.BILINEAR, reducing_gap=None)
    else:
        box = (cx * sx, cy * sy, (cx + cw) * sx, (cy + ch) * sy)
        im = im.resize((w, h), Image.BILINEAR, box=box, reducing_gap=None)
    if flip:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
    d = np.abs(clip[k] - np.asarray(im).astype(int))
    worst_mae = max(worst_mae, max(d[:, :, c].mean() for c in range(3)))
    worst_max = max(worst_max, int(d.max()))
print("%.4f %d" % (worst_mae, worst_max))
PY
			awk -v o="$output" 'BEGIN { split(o, a, " "); exit !(a[1] <= 0.25 && a[2] <= 2) }' ||
				fail "$f $args: MAE and largest difference $output"
		done
		# nearest: exact, against crop(the nearest box of whole pixels).resize(NEAREST)
		for args in "--seed 9" "--seed 5 --flip"; do
			run -0 vidclip --crop random-resized $args --resize nearest --size 40x40 \
				--frames 6 --stride 10 --start begin $f clip.raw
			run -0 $VPY - "${lines[1]}" <<'PY'
import re, sys
import numpy as np
from PIL import Image
cw, ch, cx, cy, flip = map(int, re.search(r"crop (\d+)x(\d+)\+(\d+)\+(\d+) flip (\d)", sys.argv[1]).groups())
a = np.fromfile("a.raw", np.uint8).reshape(-1, 64, 96, 3)
b = np.fromfile("b.raw", np.uint8).reshape(-1, 48, 64, 3)
clip = np.fromfile("clip.raw", np.uint8).reshape(6, 40, 40, 3)
for k, fr in enumerate([a[0], a[10], a[20], b[0], b[10], b[20]]):
    sx, sy = fr.shape[1] / 96, fr.shape[0] / 64
    x0, y0 = int(cx * sx + 0.5), int(cy * sy + 0.5)
    x1, y1 = max(int((cx + cw) * sx + 0.5), x0 + 1), max(int((cy + ch) * sy + 0.5), y0 + 1)
    im = Image.fromarray(fr).crop((x0, y0, x1, y1)).resize((40, 40), Image.NEAREST)
    if flip:
        im = im.transpose(Image.FLIP_LEFT_RIGHT)
    assert (clip[k] == np.asarray(im)).all(), k
PY
		done
		# the frames are the right ones, at every start
		run -0 vidclip --crop none --size 48x32 --frames 12 --stride 5 --start begin \
			--clips 2 $f clip.raw
		run -0 frame_numbers clip.raw 48 32 24
		assert_output "$(seq -s ' ' 0 5 55) $(seq -s ' ' 0 5 55)"
	done
}

@test "animated GIF (delays that vary, transparency, frames drawn over the last): frames by their times, as ffmpeg composes them" {
	need_video_tools
	# 37 frames of 61x47 by PIL: delays of 0 to 150 ms (0 is shown as 100 ms, as browsers
	# do), frames optimised to the rectangle that changed, and a one-frame GIF
	$VPY - <<'PY'
from PIL import Image, ImageDraw
frames = []
for i in range(37):
    im = Image.new("RGB", (61, 47), (20, 30, 40))
    d = ImageDraw.Draw(im)
    d.rectangle([i, 5, i + 12, 20], fill=(200, 50 + i * 5, 30))
    d.text((3, 28), str(i), fill=(255, 255, 255))
    frames.append(im.convert("P", palette=Image.ADAPTIVE, colors=32))
delays = [40, 0, 0, 40, 70, 0, 100, 150, 0, 20, 0, 20, 100, 70, 0, 40, 40, 150, 100, 0, 0,
          100, 100, 150, 40, 40, 150, 40, 0, 100, 150, 20, 150, 20, 40, 0, 20]
frames[0].save("v.gif", save_all=True, append_images=frames[1:], duration=delays, loop=0,
               optimize=True, transparency=0, disposal=1)
frames[5].save("one.gif")
PY
	run -0 vidclip --info v.gif x
	assert_output "video 61x47 frames 37 duration 3.060 fps 12000/1001 codec gif"
	all_frames v.gif all.raw
	ffprobe -v error -select_streams v -show_entries frame=best_effort_timestamp_time \
		-of default=nw=1:nk=1 v.gif > times.txt
	[ "$(wc -l < times.txt)" -eq 37 ]
	local args t0 step want
	for args in "--fps 5 --frames 9 --start begin" "--fps 12 --frames 20 --start center" \
		    "--fps 3 --frames 6 --start random --index 4"; do
		run -0 vidclip --crop none --size 61x47 $args --on-short pad v.gif clip.raw
		t0=$(awk 'NR == 2 { print $5 }' <<<"$output")
		step=$(awk 'NR == 2 { print $7 }' <<<"$output")
		want=$(expected_by_time times.txt "$t0" "$step" "$(awk '{ print $4 }' <<<"$args")" \
			"$(awk 'BEGIN { print 12000 / 1001 }')")
		frames_are clip.raw all.raw 61 47 $want || fail "$args: not ffmpeg's frames $want"
	done
	# one frame: a video of one frame, the clip padded with it
	run -0 vidclip --crop none --size 61x47 --frames 3 --stride 2 one.gif clip.raw
	assert_line --index 0 "video 61x47 frames 1 duration 0.100 fps 10/1 codec gif"
	all_frames one.gif all.raw
	frames_are clip.raw all.raw 61 47 0 0 0 || fail "one.gif: not its frame three times"
}

@test "10-bit video (H.264 High 10, VP9 profile 2): the right frames, rounded from ffmpeg's 16-bit RGB without bias" {
	need_video_tools libx264 libvpx-vp9
	make_video h10.mp4 64x48 25 30 -c:v libx264 -pix_fmt yuv420p10le -crf 12 -g 10 &&
	make_video v10.webm 64x48 25 30 -c:v libvpx-vp9 -pix_fmt yuv420p10le -crf 20 -b:v 0 \
		-deadline realtime -cpu-used 8 || skip "ffmpeg could not make 10-bit videos"
	local f
	for f in h10.mp4 v10.webm; do
		run -0 vidclip --crop none --size 64x48 --frames 30 --start begin $f clip.raw
		run -0 frame_numbers clip.raw 64 48 30
		assert_output "$(seq -s ' ' 0 29)"
		ffmpeg -nostdin -v error -y -i $f -fps_mode passthrough -pix_fmt rgb48le -f rawvideo ref.raw
		# 8 bits of the 16 are v / 257: each byte within 3 of it, 0.7 on average, and no
		# bias (a truncation would be 0.5 low, as ffmpeg's own rgb24 path is here)
		run -0 $VPY - <<'PY'
import numpy as np
got = np.fromfile("clip.raw", np.uint8).astype(float)
ref = np.fromfile("ref.raw", "<u2").astype(float) / 257
d = got - ref
print("%.2f %.3f %.3f" % (abs(d).max(), abs(d).mean(), d.mean()))
assert abs(d).max() <= 3.5 and abs(d).mean() <= 0.7 and abs(d.mean()) <= 0.15
PY
	done
}

@test "RGB video (FFV1's planar RGB of 10 and 16 bits, 16-bit PNG): ffmpeg's colours, not shifted through YUV" {
	need_video_tools
	local fmt codec
	for fmt in ffv1:gbrp16le ffv1:gbrp10le png:rgb48be libx264rgb:bgr24; do
		codec=${fmt%%:*}
		ffmpeg -hide_banner -encoders 2>/dev/null | grep -q " $codec " || continue
		make_video rgb.mkv 64x48 25 6 -c:v "$codec" -pix_fmt "${fmt#*:}" ||
			fail "ffmpeg could not make $fmt"
		run -0 vidclip --crop none --size 64x48 --frames 3 --stride 2 --start begin rgb.mkv clip.raw
		ref_frames rgb.mkv ref.raw 0 2 4
		# (libswscale goes through YUV from 16-bit planar RGB: the same matrix both ways,
		# full range, gives the RGB back; BT.601 one way and BT.709 the other shifted
		# colours by up to 40 levels)
		cmp clip.raw ref.raw || fail "$fmt: not ffmpeg's frames"
	done
}

@test "full-size frames are ffmpeg's decode byte for byte: H.264 4:2:0 and 4:4:4, VP9, MPEG-4, MPEG-2" {
	need_video_tools
	local f path w h frames
	for f in h264.mp4 odd444.mp4 odd.webm odd.avi mpeg4.mp4 w100.mp4 bf.avi mpeg2.ts \
		 mpeg2.mpg; do
		path=$(v $f)
		read -r w h frames < <(vidclip --info "$path" x |
			sed 's/^video \([0-9]*\)x\([0-9]*\) frames \([0-9]*\) .*/\1 \2 \3/')
		local first=$(((frames - 16) / 2))
		ref_frames "$path" ref.raw $first $((first + 3)) $((first + 6)) $((first + 9)) \
			$((first + 12)) $((first + 15))
		# Memory handed out filled with a pattern (glibc's MALLOC_PERTURB_): a pixel
		# left unconverted shows.
		for perturb in 0 165; do
			run -0 env MALLOC_PERTURB_=$perturb vidclip --crop none --size ${w}x$h \
				--frames 6 --stride 3 --start center "$path" clip.raw
			cmp clip.raw ref.raw || fail "$f (MALLOC_PERTURB_=$perturb): not ffmpeg's frames"
		done
	done
}

@test "crops, flips and resizes match PIL on ffmpeg's frames (MAE <= 0.25), rows-only = whole frame" {
	need_video_tools
	local f path w h frames line
	for f in h264.mp4 odd444.mp4 odd.webm odd.avi; do
		path=$(v $f)
		read -r w h frames < <(vidclip --info "$path" x |
			sed 's/^video \([0-9]*\)x\([0-9]*\) frames \([0-9]*\) .*/\1 \2 \3/')
		# every frame of ffmpeg's decode, once; each clip's against its frames first, +4, +8
		ref_frames "$path" all.raw $(seq 0 $((frames - 1)))
		for index in 0 1 2 3; do
			run -0 vidclip --crop random-resized --flip --size 45x37 --frames 3 --stride 4 \
				--start random --seed 5 --index $index "$path" clip$index.raw
			echo "${lines[1]}" > line$index
			# The rows the crop needs converted, or the whole frame: the same bytes.
			vidclip --crop random-resized --flip --size 45x37 --frames 3 --stride 4 \
				--start random --seed 5 --index $index --exact "$path" exact.raw >/dev/null
			cmp clip$index.raw exact.raw
			vidclip --crop random-resized --flip --size 45x37 --frames 3 --stride 4 \
				--start random --seed 5 --index $index --resize nearest "$path" n.raw >/dev/null
			vidclip --crop random-resized --flip --size 45x37 --frames 3 --stride 4 \
				--start random --seed 5 --index $index --resize nearest --exact "$path" \
				nx.raw >/dev/null
			cmp n.raw nx.raw
		done
		run -0 clips_vs_ref 45 37 3 4 all.raw $w $h $frames 0 1 2 3
		[ "${#lines[@]}" -eq 4 ] || fail "$f: $output"
		for index in 0 1 2 3; do
			awk -v m="${lines[index]% *}" -v x="${lines[index]#* }" 'BEGIN { exit !(m <= 0.25 && x <= 2) }' ||
				fail "$f index $index: MAE, largest difference ${lines[index]}: over 0.25, 2 ($(cat line$index))"
		done
	done
}

@test "--chw is the clip's planes C x T x H x W" {
	need_video_tools
	vidclip --crop random-resized --flip --size 20x14 --frames 5 --stride 2 --index 3 \
		"$(v odd.webm)" hwc.raw >/dev/null
	vidclip --crop random-resized --flip --size 20x14 --frames 5 --stride 2 --index 3 --chw \
		"$(v odd.webm)" chw.raw >/dev/null
	run -0 $VPY -c '
import numpy as np
a = np.fromfile("hwc.raw", np.uint8).reshape(5, 14, 20, 3)
c = np.fromfile("chw.raw", np.uint8).reshape(3, 5, 14, 20)
print((a.transpose(3, 0, 1, 2) == c).all())'
	assert_output "True"
}

@test "by fps: targets by timestamps, frames repeated above the video's rate, and a variable rate" {
	need_video_tools
	# 60 a second in a video of 30: each frame twice; ties go to the earlier frame.
	run -0 vidclip --crop none --size 32x24 --frames 10 --fps 60 --start center "$(v h264.mp4)" \
		clip.raw
	assert_line --index 1 --regexp "^clip first 27 "
	assert_line --index 2 --regexp " converted 5 "
	run -0 frame_numbers clip.raw 32 24 10
	assert_output "27 27 28 28 29 29 30 30 31 31"
	# 7.5 a second: every 4th frame.
	run -0 vidclip --crop none --size 32x24 --frames 5 --fps 7.5 --start begin "$(v h264.mp4)" \
		clip.raw
	run -0 frame_numbers clip.raw 32 24 5
	assert_output "0 4 8 12 16"
	# Variable-rate files: the frames nearest to the targets, from ffprobe's timestamps
	# (vfr.mp4: 30 a second, then 10; gap.mp4: 30 a second with a pause of 2 s in the
	# middle, where the nearest frame is the one before the pause, then the one after).
	ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi \
		-i "$(numbered_src 96x64 30),setpts='if(lt(N\,30)\,N/30\,3+(N-30)/30)/TB'" \
		-frames:v 60 -fps_mode passthrough -c:v libx264 -pix_fmt yuv420p -crf 12 -g 10 \
		gap.mp4
	# (the same in Matroska and MPEG-TS, which do not index every frame: counted)
	ffmpeg -nostdin -hide_banner -loglevel error -y -i gap.mp4 -c copy gap.mkv
	ffmpeg -nostdin -hide_banner -loglevel error -y -i gap.mp4 -c copy gap.ts
	local path n t0 step fps want args skip
	for path in "$(v vfr.mp4)" gap.mp4 gap.mkv gap.ts; do
		ffprobe -v error -select_streams v -show_entries frame=best_effort_timestamp_time \
			-of default=nw=1:nk=1 "$path" | grep -E '^[0-9.]+$' > times.txt
		n=$(wc -l < times.txt)
		[ "$n" -eq 40 ] || [ "$n" -eq 60 ]
		for args in "--fps 5" "--fps 2" "--fps 7" "--stride 1" "--stride 3"; do
			for start in begin center; do
				for skip in 1 0; do
					run -0 env SLAB_VIDEO_SKIP=$skip vidclip --crop none --size 32x24 \
						--frames 9 $args --start $start "$path" clip.raw
					t0=$(echo "${lines[1]}" | awk '{ print $5 }')
					step=$(echo "${lines[1]}" | awk '{ print $7 }')
					fps=$(echo "${lines[0]}" | awk '{ split($8, r, "/"); print r[1] / r[2] }')
					want=$(expected_by_time times.txt "$t0" "$step" 9 "$fps")
					run -0 frame_numbers clip.raw 32 24 9
					[ "$output" = "$want" ] || fail "$path $args --start $start: $output, not $want"
				done
			done
		done
	done
	# the pause, by its numbers: targets 0, 0.5, ..., 3 s
	run -0 vidclip --crop none --size 32x24 --frames 7 --fps 2 --start begin gap.mp4 clip.raw
	run -0 frame_numbers clip.raw 32 24 7
	assert_output "0 15 29 29 30 30 30"
}

@test "a video shorter than the clip: padded with its last frame, looped, or refused" {
	need_video_tools
	local path
	path=$(v h264.mp4)
	# 25 frames at stride 3 span 73 of 60.
	run -0 vidclip --crop none --size 32x24 --frames 25 --stride 3 --start random \
		--on-short pad "$path" clip.raw
	assert_line --index 1 --regexp "^clip first 0 "
	assert_line --index 2 --regexp " converted 21 "
	run -0 frame_numbers clip.raw 32 24 25
	assert_output "0 3 6 9 12 15 18 21 24 27 30 33 36 39 42 45 48 51 54 57 59 59 59 59 59"
	run -0 vidclip --crop none --size 32x24 --frames 25 --stride 3 --start center \
		--on-short loop "$path" clip.raw
	assert_line --index 1 --regexp "^clip first 0 "
	run -0 frame_numbers clip.raw 32 24 25
	assert_output "0 3 6 9 12 15 18 21 24 27 30 33 36 39 42 45 48 51 54 57 0 3 6 9 12"
	run -1 --separate-stderr vidclip --crop none --size 32x24 --frames 25 --stride 3 \
		--on-short error "$path" clip.raw
	assert_equal "$stderr" "vidclip: '$path': video of 60 frames: the clip needs 73"
	# By fps: 40 frames at 5 a second span 7.8 s of a 2 s video; looped by time.
	run -0 vidclip --crop none --size 32x24 --frames 12 --fps 5 --on-short loop "$path" clip.raw
	run -0 frame_numbers clip.raw 32 24 12
	assert_output "0 6 12 18 24 30 36 42 48 54 0 6"
}

@test "the same clip twice, from two decoders taking turns, and with codec threads" {
	need_video_tools
	local a b
	a=$(v odd444.mp4)
	b=$(v odd.webm)
	vidclip --crop random-resized --flip --size 40x30 --frames 4 --stride 2 --start random \
		--seed 3 --clips 5 "$a" one.raw >/dev/null
	vidclip --crop random-resized --flip --size 40x30 --frames 4 --stride 2 --start random \
		--seed 3 --clips 5 "$a" two.raw >/dev/null
	cmp one.raw two.raw
	vidclip --crop random-resized --flip --size 40x30 --frames 4 --stride 2 --start random \
		--seed 3 --clips 5 "$b" bone.raw >/dev/null
	vidclip --crop random-resized --flip --size 40x30 --frames 4 --stride 2 --start random \
		--seed 3 --clips 5 --second "$b" btwo.raw "$a" atwo.raw >/dev/null
	cmp one.raw atwo.raw
	cmp bone.raw btwo.raw
	vidclip --crop random-resized --flip --size 40x30 --frames 4 --stride 2 --start random \
		--seed 3 --clips 5 --threads 2 "$a" threads.raw >/dev/null
	cmp one.raw threads.raw
	# Another seed, another clip.
	vidclip --crop random-resized --flip --size 40x30 --frames 4 --stride 2 --start random \
		--seed 4 --clips 5 "$a" other.raw >/dev/null
	! cmp -s one.raw other.raw
}

@test "random clips in eight codecs and containers are ffmpeg's frames, frames left out or not (SLAB_TEST_SWEEP=1: more)" {
	need_video_tools libx264 libx265 libvpx libvpx-vp9 mpeg4 mpeg2video mpeg1video
	# Open and closed groups, B-frame pyramids, packets without presentation times (AVI),
	# a seek to the start that lands late (MPEG-2 TS), frames nothing refers to (VP8 in
	# two temporal layers), seeks by bytes (MPEG-1 in a program stream, no index), seeks
	# that land between keyframes where the decoder does not wait for one (HEVC in TS):
	# every clip must be the frames first + k stride of ffmpeg's decode (the last one past
	# the end with pad, from the first again with loop).
	local mk="64x48 25 120"
	make_video a.mp4 $mk -c:v libx264 -pix_fmt yuv420p -x264-params keyint=40:bframes=3:b-pyramid=strict &&
	make_video b.ts $mk -c:v libx264 -pix_fmt yuv420p -x264-params keyint=30:open-gop=1:bframes=2 &&
	make_video c.avi $mk -c:v mpeg4 -q:v 3 -bf 2 -g 30 &&
	make_video d.ts $mk -c:v mpeg2video -q:v 3 -bf 2 -g 15 &&
	make_video e.webm $mk -c:v libvpx -b:v 200k -ts-parameters ts_layering_mode=2:ts_target_bitrate=100,200 &&
	make_video f.webm $mk -c:v libvpx-vp9 -crf 30 -b:v 0 -g 50 -deadline realtime -cpu-used 8 &&
	make_video g.mpg $mk -c:v mpeg1video -q:v 3 -bf 2 -g 18 &&
	make_video h.ts $mk -c:v libx265 -pix_fmt yuv420p \
		-x265-params log-level=none:keyint=30:bframes=4:open-gop=1 ||
		skip "ffmpeg could not make the videos"
	run $VPY - "${SLAB_TEST_SWEEP:-0}" <<'PY'
import os, random, subprocess, sys
fs, n, rng = 64 * 48 * 3, 0, random.Random(7)
runs = 40 if sys.argv[1] == "1" else 5
for f in ["a.mp4", "b.ts", "c.avi", "d.ts", "e.webm", "f.webm", "g.mpg", "h.ts"]:
    ref = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", f, "-fps_mode", "passthrough",
                          "-pix_fmt", "rgb24", "-f", "rawvideo", "-"], capture_output=True,
                         check=True).stdout
    nf = len(ref) // fs
    for _ in range(runs):
        t, s = rng.randint(1, 10), rng.randint(1, 5)
        start, short = rng.choice(["random", "center", "begin"]), rng.choice(["pad", "loop"])
        args = ["--crop", "none", "--size", "64x48", "--frames", str(t), "--stride", str(s),
                "--start", start, "--on-short", short, "--index", str(rng.randint(0, 999)),
                "--clips", "2", f, "clip.raw"]
        for skip in ["1", "0"]:
            r = subprocess.run(["vidclip"] + args, capture_output=True, text=True,
                               env=dict(os.environ, SLAB_VIDEO_SKIP=skip))
            assert r.returncode == 0, (f, args, r.stderr)
            assert f" frames {nf} " in r.stdout.split("\n")[0], (f, nf, r.stdout)
            firsts = [int(l.split()[2]) for l in r.stdout.split("\n") if l.startswith("clip first")]
            want = b""
            for first in firsts:
                for k in range(t):
                    i = first + k * s
                    i = min(i, nf - 1) if short == "pad" else i % nf
                    want += ref[i * fs:(i + 1) * fs]
            got = open("clip.raw", "rb").read()
            if got != want:
                sys.exit(f"{f} {' '.join(args[:-2])} SLAB_VIDEO_SKIP={skip}: not ffmpeg's frames {firsts}")
            n += 1
print(n, "clips")
PY
	[ "$status" -eq 0 ] || fail "$output"
	[ "$output" = "$((8 * (SLAB_TEST_SWEEP == 1 ? 40 : 5) * 2)) clips" ] || fail "$output"
}

@test "limits: a frame over the pixel limit and a stream over the frame limit are refused" {
	need_video_tools
	# An AVI whose headers say 8000x8000 (its stream is 321x239).
	$VPY - "$(v odd.avi)" big.avi <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.index(b"avih") + 8
b[i + 32:i + 40] = struct.pack("<II", 8000, 8000)
i = b.index(b"strf") + 8
b[i + 4:i + 12] = struct.pack("<ii", 8000, 8000)
open(sys.argv[2], "wb").write(b)
PY
	run -1 --separate-stderr vidclip --max-pixels 1000000 big.avi x
	assert_equal "$stderr" "vidclip: 'big.avi': video of 8000x8000 pixels (64000000): over the limit of 1000000 pixels"
	run -1 --separate-stderr vidclip --max-pixels 76718 "$(v odd.avi)" x
	assert_equal "$stderr" "vidclip: '$(v odd.avi)': video of 321x239 pixels (76719): over the limit of 76718 pixels"
	run -0 vidclip --max-pixels 76719 --info "$(v odd.avi)" x
	run -1 --separate-stderr vidclip --max-frames 59 "$(v h264.mp4)" x
	assert_equal "$stderr" "vidclip: '$(v h264.mp4)': video of 60 frames: over the limit of 59 frames"
	# Matroska does not say: counted, and refused as the count passes the limit.
	run -1 --separate-stderr vidclip --max-frames 39 "$(v h264.mkv)" x
	assert_equal "$stderr" "vidclip: '$(v h264.mkv)': video of more than 39 frames: over the limit of 39 frames"
	run -0 vidclip --max-frames 40 --info "$(v h264.mkv)" x
}

@test "broken input: no bytes, random bytes, no video stream, truncated: clean errors" {
	need_video_tools
	: > empty.mp4
	run -1 --separate-stderr vidclip empty.mp4 x
	assert_equal "$stderr" "vidclip: 'empty.mp4': corrupt video: no bytes"
	printf '\x12\x34\x56\x78' > random.bin
	head -c 4000 /dev/urandom >> random.bin
	run -1 --separate-stderr vidclip random.bin x
	assert_equal "$stderr" "vidclip: 'random.bin': corrupt video: not MP4/MOV, Matroska/WebM, AVI, MPEG-TS, MPEG-PS, FLV or GIF: starts with 0x12 0x34 0x56 0x78"
	ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i sine=frequency=440:duration=1 \
		-c:a aac audio.mp4
	run -1 --separate-stderr vidclip audio.mp4 x
	assert_equal "$stderr" "vidclip: 'audio.mp4': corrupt video: no video stream"
	ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i sine=frequency=440:duration=1 \
		-c:a libopus audio.webm
	run -1 --separate-stderr vidclip audio.webm x
	assert_equal "$stderr" "vidclip: 'audio.webm': corrupt video: no video stream"
	# The index (moov) at the end, cut off: FFmpeg's reason.
	local path size
	path=$(v h264.mp4)
	size=$(stat -c %s "$path")
	head -c $((size / 2)) "$path" > half.mp4
	run -1 --separate-stderr vidclip half.mp4 x
	assert_equal "$stderr" "vidclip: 'half.mp4': corrupt video: invalid data found when processing input (moov atom not found)"
	# The index first (faststart), the frames cut, in a packet or between two (where the
	# demuxer sees a clean end): the index places frames past the bytes, refused at the
	# open, before a clip would be padded with the last frame there is.
	ffmpeg -nostdin -hide_banner -loglevel error -y -i "$path" -c copy -movflags +faststart \
		fast.mp4
	size=$(stat -c %s fast.mp4)
	head -c $((size / 2)) fast.mp4 > cut.mp4
	local at
	at=$(ffprobe -v error -select_streams v -show_entries packet=pos -of csv=p=0 fast.mp4 | sed -n 31p)
	head -c "$at" fast.mp4 > cutb.mp4
	[ "$(ffprobe -v error -count_frames -select_streams v -show_entries stream=nb_frames,nb_read_frames -of csv=p=0 cutb.mp4)" = "60,30" ]
	for f in cut.mp4 cutb.mp4; do
		run -1 --separate-stderr vidclip --info $f x
		assert_regex "$stderr" "^vidclip: '$f': corrupt video: cut short: its index places frames up to byte [0-9]+, past its $(stat -c %s $f) bytes\$"
		run -1 --separate-stderr vidclip --crop none --size 32x24 --frames 4 --start begin $f clip.raw
		assert_regex "$stderr" "^vidclip: '$f': corrupt video: cut short: "
	done
	# pack: unchecked, kept as bytes (no video record); checked, a bad sample
	mkdir -p p
	cp cutb.mp4 p/k.mp4
	tar -C p -cf p.tar k.mp4
	run -0 pack -q -o p.slab p.tar
	run -0 inspect --list p.slab
	assert_output --regexp $'\tmp4:[0-9]+:[0-9]+$'
	run -1 --separate-stderr pack --image-check -o q.slab p.tar
	assert_regex "$stderr" "^pack: 'p.tar': sample 'k' field 'mp4': corrupt video: cut short: "
	# An AVI cut at a chunk, its index (at the end) gone with the rest: its header counts
	# 40 frames, it holds 30; they are its frames (a clip past them is short, not padded
	# with the last one as if it were there).
	local apath
	apath=$(v odd.avi)
	at=$(ffprobe -v error -select_streams v -show_entries packet=pos -of csv=p=0 "$apath" | sed -n 31p)
	head -c "$at" "$apath" > cuta.avi
	run -0 vidclip --info cuta.avi x
	assert_output "video 321x239 frames 30 duration 1.200 fps 25/1 codec mpeg4"
	run -0 vidclip --crop none --size 32x24 --frames 3 --stride 14 --start begin --on-short error cuta.avi clip.raw
	run -0 frame_numbers clip.raw 32 24 3
	assert_output "0 14 28"
	run -1 --separate-stderr vidclip --frames 4 --stride 10 --start begin --on-short error cuta.avi clip.raw
	assert_equal "$stderr" "vidclip: 'cuta.avi': video of 30 frames: the clip needs 31"
	# The AVI cut in its last frame: that frame does not decode whole.
	size=$(stat -c %s "$(v odd.avi)")
	head -c $((size - 3000)) "$(v odd.avi)" > cut.avi
	run -1 --separate-stderr vidclip --frames 40 --start begin cut.avi clip.raw
	assert_regex "$stderr" "^vidclip: 'cut.avi': corrupt video: "
	# Every cut of a small file: an error or a clip, never a crash (the exit status 1 or 0).
	local cut
	for cut in 100 1000 3000 10000 20000 40000 60000; do
		head -c $cut "$path" > c.mp4
		head -c $cut "$(v odd.webm)" > c.webm
		run vidclip --frames 8 --start center c.mp4 clip.raw
		[ "$status" -le 1 ]
		run vidclip --frames 8 --start center c.webm clip.raw
		[ "$status" -le 1 ]
	done
}
