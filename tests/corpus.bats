#!/usr/bin/env bats
# Real inputs nobody here wrote (../shared/corpus): pack either gives exactly the samples the
# WebDataset rule gives, or fails with a clear message; never a crash.

load test_helper/common

# expect_pack FILE SAMPLES FIELDS SKIPPED [WARNING]: pack succeeds with these counts (and that
# warning before the summary, or none), verifies, and round-trips every member the
# WebDataset rule keeps.
expect_pack() {
	need_corpus
	local f="$CORPUS/$1" summary samples=samples fields=fields
	[ -f "$f" ] || skip "corpus file $1 missing"
	[ "$2" != 1 ] || samples=sample
	[ "$3" != 1 ] || fields=field
	run -0 --separate-stderr pack -o c.slab "$f"
	summary=${stderr_lines[-1]}
	if [ -n "${5:-}" ]; then
		[ "${#stderr_lines[@]}" -eq 2 ] && [ "${stderr_lines[0]}" = "pack: warning: '$f': $5" ] ||
			{ echo "$stderr"; return 1; }
	else
		[ "${#stderr_lines[@]}" -eq 1 ] || { echo "$stderr"; return 1; }
	fi
	[[ "$summary" == "pack: 'c.slab': $2 $samples, $3 $fields, "* ]] || { echo "$stderr"; return 1; }
	if [ -n "$4" ]; then
		[[ "$summary" == *"; skipped $4" ]] || { echo "$stderr"; return 1; }
	else
		[[ "$summary" != *"skipped"* ]] || { echo "$stderr"; return 1; }
	fi
	run -0 inspect -q --verify c.slab
	inspect --tar c.slab > back.tar
	run -0 tarcmp --wds "$f" back.tar
}

# expect_fail FILE MESSAGE: exit 1, that exact message, no output file.
expect_fail() {
	need_corpus
	local f="$CORPUS/$1"
	[ -f "$f" ] || skip "corpus file $1 missing"
	run -1 --separate-stderr pack -o c.slab "$f"
	assert_equal "$stderr" "pack: '$f': $2"
	[ ! -e c.slab ]
}

@test "corpus wds/sample.tgz: 90 samples of cls + png" {
	expect_pack wds/sample.tgz 90 2 ""
	run -0 inspect --json c.slab
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert [(f["name"], f["samples"]) for f in d["fields"]] == [("cls", 90), ("png", 90)]' "$output"
}

@test "corpus wds/testgz.tar: 1000 samples, field txt.gz" {
	expect_pack wds/testgz.tar 1000 1 ""
	run -0 inspect --json c.slab
	python3 -c 'import json,sys; d=json.loads(sys.argv[1]); assert [f["name"] for f in d["fields"]] == ["txt.gz"]' "$output"
}

@test "corpus wds/compressed.tar: keys with a directory part, the directory entry skipped" {
	expect_pack wds/compressed.tar 3 1 "1 non-file member"
	run -0 inspect --list c.slab
	[[ "${lines[0]}" == "0	compressed/0001	0	txt.gz:"* ]]
	[[ "${lines[2]}" == "2	compressed/0003	0	txt.gz:"* ]]
}

@test "corpus wds/mpdata.tar: 100 samples of mp" {
	expect_pack wds/mpdata.tar 100 1 ""
}

@test "corpus tar/compat_gtar_1.tar: long name without extension, long symlink: skipped" {
	expect_pack tar/compat_gtar_1.tar 0 0 "1 non-file member, 1 name without extension"
}

@test "corpus tar/compat_gtar_2.tar: base-256 uid/gid read, name without extension" {
	expect_pack tar/compat_gtar_2.tar 0 0 "1 name without extension"
}

@test "corpus tar/compat_tar_hardlink_1.tar: the hard link is skipped as a non-file; no end blocks, a warning" {
	expect_pack tar/compat_tar_hardlink_1.tar 0 0 "1 non-file member, 1 name without extension" \
		"no end-of-archive blocks after its last member: the input may have been cut short there"
}

@test "corpus tar/read_format_gtar_sparse_1_13.tar: GNU sparse members read whole" {
	expect_pack tar/read_format_gtar_sparse_1_13.tar 0 0 "3 names without extension"
}

@test "corpus tar/read_format_gtar_sparse_1_17_posix10.tar: pax sparse members read whole" {
	expect_pack tar/read_format_gtar_sparse_1_17_posix10.tar 0 0 "3 names without extension"
}

@test "corpus tar/read_format_tar_concatenated.tar: both archives are read" {
	expect_pack tar/read_format_tar_concatenated.tar 0 0 "2 names without extension"
}

@test "corpus tar/read_format_tar_empty_filename.tar: the nameless directory is skipped" {
	expect_pack tar/read_format_tar_empty_filename.tar 0 0 "1 non-file member"
}

@test "corpus tar/read_format_tar_empty_with_gnulabel.tar: a volume label only" {
	expect_pack tar/read_format_tar_empty_with_gnulabel.tar 0 0 ""
}

@test "corpus tar/read_format_tar_pax_timestamps.tar: an empty file without extension" {
	expect_pack tar/read_format_tar_pax_timestamps.tar 0 0 "1 name without extension"
}

@test "corpus tar/read_format_tar_V_negative_size.tar: read as an empty archive" {
	# libarchive takes its first block for the end-of-archive marker: nothing to pack.
	# (Python's tarfile cannot even read it, so no round-trip comparison here.)
	need_corpus
	run -0 --separate-stderr pack -o c.slab "$CORPUS/tar/read_format_tar_V_negative_size.tar"
	[[ "$stderr" == "pack: 'c.slab': 0 samples, 0 fields, "* ]]
	[[ "$stderr" != *skipped* ]]
	run -0 inspect -q --verify c.slab
}

@test "corpus tar/read_format_tar_invalid_pax_size.tar: negative pax size is an error" {
	expect_fail tar/read_format_tar_invalid_pax_size.tar \
		"truncated or corrupt archive: Tar size attribute is negative (no good member before it)"
}

@test "corpus tar/read_format_tar_pax_g_large.tar: oversized pax global header is an error" {
	expect_fail tar/read_format_tar_pax_g_large.tar \
		"truncated or corrupt archive: Special header too large (no good member before it)"
}

@test "corpus sparse members with extensions: holes come back as zeros" {
	need_corpus
	# The corpus names have no extension; the same sparse members renamed by GNU tar's
	# --transform keep their sparse encoding only when re-archived sparse, so read the
	# expected bytes through GNU tar and compare with what pack stored.
	f="$CORPUS/tar/read_format_gtar_sparse_1_13.tar"
	[ -f "$f" ] || skip "corpus file missing"
	mkdir x && tar xf "$f" -C x
	(cd x && tar --sparse --format=gnu --transform 's/$/.bin/' -cf ../renamed.tar sparse non-sparse)
	pack -q -o s.slab renamed.tar
	inspect --get sparse --field bin s.slab | cmp - x/sparse
	run -0 inspect --get non-sparse --field bin s.slab
	assert_output ""
}

@test "corpus jpeg/*: not tars, refused with a clear message" {
	need_corpus
	for j in testorig testimgint testimgari monkey12; do
		f="$CORPUS/jpeg/$j.jpg"
		run -1 --separate-stderr pack -o c.slab "$f"
		assert_equal "$stderr" "pack: '$f': not a tar archive: Unrecognized archive format"
	done
}

# A WebDataset of the corpus JPEGs, made here (the corpus files are only read).
jpeg_tar() {
	need_corpus
	[ -f "$CORPUS/jpeg/testorig.jpg" ] || skip "corpus jpeg files missing"
	mkdir -p j
	for n in testorig testimgint testimgari monkey12; do
		cp "$CORPUS/jpeg/$n.jpg" "j/$n.jpg"
		printf '%s' "${#n}" > "j/$n.cls"
	done
	(cd j && tar --sort=name -cf ../jpegs.tar testorig.* testimgint.* testimgari.* monkey12.*)
}

@test "corpus jpeg/*: dimensions recorded; unreadable ones kept as plain bytes" {
	jpeg_tar
	run -0 pack -q -o j.slab jpegs.tar
	run -0 inspect --list j.slab
	assert_line --regexp '^[0-9]	testorig	0	cls:[0-9]+:1	jpg:[0-9]+:[0-9]+:227x149:jpeg$'
	assert_line --regexp '^[0-9]	testimgint	0	cls:[0-9]+:2	jpg:[0-9]+:[0-9]+:227x149:jpeg$'
	assert_line --regexp '^[0-9]	testimgari	0	cls:[0-9]+:2	jpg:[0-9]+:[0-9]+:227x149:jpeg$'
	# 12-bit: TurboJPEG cannot read its header, so no dimensions, but the bytes are kept
	assert_line --regexp '^[0-9]	monkey12	0	cls:[0-9]+:1	jpg:[0-9]+:[0-9]+$'
	inspect --tar j.slab > back.tar
	run -0 tarcmp jpegs.tar back.tar
}

@test "corpus jpeg/monkey12.jpg: --jpeg-check refuses the 12-bit JPEG, naming the key" {
	jpeg_tar
	run -1 --separate-stderr pack -o j.slab --jpeg-check jpegs.tar
	[[ "$stderr" == "pack: 'jpegs.tar': sample 'monkey12' field 'jpg': "* ]]
	[ ! -e j.slab ]
	run -0 --separate-stderr pack -o j.slab --jpeg-check --on-error=skip jpegs.tar
	[[ "${stderr_lines[0]}" == "pack: 'jpegs.tar': skipping: sample 'monkey12' field 'jpg': "* ]]
	run -1 inspect --get monkey12 --field jpg j.slab
	run -0 inspect --get testorig --field jpg j.slab
}

@test "corpus jpeg/monkey12.jpg: the image pipeline says a 12-bit JPEG is unsupported; arithmetic coding decodes" {
	need_corpus
	run -1 --separate-stderr imgcrop "$CORPUS/jpeg/monkey12.jpg" out.rgb
	assert_equal "$stderr" "imgcrop: '$CORPUS/jpeg/monkey12.jpg': unsupported JPEG: 12-bit samples, only 8-bit JPEGs can be decoded"
	run -0 imgcrop --size 32x32 "$CORPUS/jpeg/testimgari.jpg" ari.rgb
	run -0 imgcrop --size 32x32 "$CORPUS/jpeg/testimgint.jpg" int.rgb
	# the same picture, arithmetic-coded and Huffman-coded: the same pixels
	[ "$(stat -c %s ari.rgb)" -eq $((32 * 32 * 3)) ]
	cmp ari.rgb int.rgb
}
