#!/usr/bin/env bats
# slab.Loader (scripts/slab.py over libslab's loader through ctypes): every sample of a plan
# once and in order, the bytes the pure reader gives, images equal to imgcrop's for the same
# sample, the same batches with any thread count and on resume, the error policy, the ring's
# bound, and memory that outlives close() without dangling. The loader itself is tested in C
# (tests/unit/test_loader.c, also under ASan, UBSan and TSan); here the Python face.

load test_helper/common

# two.slab + one.slab: 30 and 17 samples of mkwds JPEGs (jpg, cls, json), small pages so a
# plan crosses many; a.plan: a quasi-random plan over both, in that order.
setup_data() {
	mkwds --count 30 --seed 21 --prefix a -o a.tar
	mkwds --count 17 --seed 22 --prefix b -o b.tar
	pack -q --page-size 64K -o one.slab a.tar
	pack -q --page-size 64K -o two.slab b.tar
	shuffle-plan -q --mode quasi --window 2 --seed 5 --epoch 3 -o a.plan one.slab two.slab
}

# A pack whose sample a000002 has a JPEG cut in half (pack reads only its header).
setup_cut() {
	mkwds --count 6 --seed 4 --prefix a -o x.tar
	mkdir x && (cd x && tar -xf ../x.tar && f=a000002.jpg &&
		head -c $(($(stat -c %s $f) / 2)) $f > t && mv t $f &&
		tar --format=pax -cf ../cut.tar $(tar -tf ../x.tar))
	pack -q -o cut.slab cut.tar
}

@test "Loader, raw: every plan entry once, in plan order, with the pure reader's bytes" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import slab
ds = slab.Dataset(["one.slab", "two.slab"])
plan = slab.read_plan("a.plan", ds)
seen = []
with slab.Loader(["one.slab", "two.slab"], plan="a.plan", batch_size=7, threads=3) as ld:
    assert len(ld) == 7 and ld.fields == ["cls", "jpg", "json"], (len(ld), ld.fields)
    assert (ld.seed, ld.epoch) == (5, 3)
    for k, b in enumerate(ld):
        assert b.number == k and b.skipped == 0 and b.images is None
        assert len(b) == (7 if k < 6 else 5)
        assert b.positions == list(range(7 * k, 7 * k + len(b)))
        for j, (f, i) in enumerate(b.samples):
            s = ds.sample(f, i)
            assert b.keys[j] == s.key
            for name in ld.fields:
                v = b.fields[name][j]
                assert isinstance(v, memoryview) and v.readonly
                assert bytes(v) == bytes(s[name]), (f, i, name)
        seen += b.samples
    st = ld.stats()
assert seen == plan, "not the plan's order"
assert st["batches"] == 7 and st["samples"] == 47 and st["images"] == 0
print("ok", len(seen))
PY
	assert_output "ok 47"
}

@test "Loader, raw: fields chosen, drop_last, a plan made in memory as shuffle-plan makes it" {
	need_libslab
	setup_data
	shuffle-plan -q --mode random --seed 9 --epoch 1 -o r.plan one.slab two.slab
	run -0 pyslab - <<'PY'
import slab
paths = ["one.slab", "two.slab"]
ds = slab.Dataset(paths)
with slab.Loader(paths, order="random", seed=9, epoch=1, batch_size=10, drop_last=True,
                 fields=["cls"]) as ld:
    assert len(ld) == 4 and ld.fields == ["cls"]
    got = [s for b in ld for s in b.samples]
assert got == slab.read_plan("r.plan", ds)[:40]
with slab.Loader(paths, fields=["cls"], batch_size=100) as ld:
    b = next(iter(ld))
    assert list(b.fields) == ["cls"] and b.samples == [(0, i) for i in range(30)] + [(1, i) for i in range(17)]
print("ok")
PY
	assert_output "ok"
}

@test "Loader, image: each image is imgcrop's for its sample, byte for byte, HWC and CHW" {
	need_libslab
	setup_data
	tar -xf a.tar
	tar -xf b.tar
	run -0 pyslab - <<'PY'
import subprocess, slab
paths = ["one.slab", "two.slab"]
n = 0
for chw in (False, True):
    with slab.Loader(paths, plan="a.plan", batch_size=8, threads=2, image="jpg", size=(24, 40),
                     crop="random-resized", flip=True, chw=chw, fields=["cls"]) as ld:
        assert ld.fields == ["jpg", "cls"]
        for b in ld:
            im = b.images
            shape = (len(b), 3, 24, 40) if chw else (len(b), 24, 40, 3)
            assert im.shape == shape and im.format == "B" and not im.readonly, (im.shape, im.format)
            for j, (f, i) in enumerate(b.samples):
                g = i + (30 if f == 1 else 0)
                args = ["imgcrop", "--size", "40x24", "--crop", "random-resized", "--flip",
                        "--seed", "5", "--epoch", "3", "--index", str(g)]
                subprocess.run(args + (["--chw"] if chw else []) + [b.keys[j] + ".jpg", "o.rgb"],
                               check=True, stdout=subprocess.DEVNULL)
                assert b.image(j).tobytes() == open("o.rgb", "rb").read(), (b.keys[j], chw)
                n += 1
        st = ld.stats()
        assert st["images"] == 47 and sum(st["scales"].values()) == 47, st
        assert st["scaled"] == 47 - st["scales"][1]
print("ok", n)
PY
	assert_output "ok 94"
}

@test "Loader, image: the same bytes with 1 and 4 threads, and a resumed plan gives the tail" {
	need_libslab
	setup_data
	shuffle-plan -q --mode quasi --window 2 --seed 5 --epoch 3 --start 19 -o tail.plan one.slab two.slab
	run -0 pyslab - <<'PY'
import slab
paths = ["one.slab", "two.slab"]
def run(plan, threads, batch):
    out = []
    with slab.Loader(paths, plan=plan, batch_size=batch, threads=threads, image="jpg",
                     size=(32, 32), flip=True) as ld:
        for b in ld:
            for j in range(len(b)):
                out.append((b.positions[j], b.samples[j], b.image(j).tobytes()))
    return out
one = run("a.plan", 1, 5)
assert one == run("a.plan", 4, 5) == run("a.plan", 2, 16)
tail = run("tail.plan", 2, 6)
assert [t[0] for t in tail] == list(range(19, 47)) and tail == one[19:]
print("ok", len(one), len(tail))
PY
	assert_output "ok 47 28"
}

@test "Loader: numpy and torch wrap the images without a copy" {
	need_libslab
	/usr/bin/python3 -c 'import numpy' 2>/dev/null || skip "no numpy for /usr/bin/python3 (python3-numpy)"
	setup_data
	run -0 env PYTHONPATH="$SLAB_ROOT/scripts" /usr/bin/python3 - <<'PY'
import numpy, slab
with slab.Loader(["one.slab"], batch_size=8, image="jpg", size=(16, 20), crop="center") as ld:
    b = next(iter(ld))
    a = numpy.asarray(b.images)
    assert a.shape == (8, 16, 20, 3) and a.dtype == numpy.uint8 and a.flags["C_CONTIGUOUS"]
    a[0, 0, 0, 0] ^= 0xFF                      # the same memory, not a copy
    assert b.images[0, 0, 0, 0] == a[0, 0, 0, 0]
    try:
        import torch
    except ImportError:
        print("ok numpy")
    else:
        t = torch.from_numpy(a)
        assert t.shape == (8, 16, 20, 3) and t.dtype == torch.uint8
        assert t.data_ptr() == a.ctypes.data
        print("ok numpy torch")
PY
	assert_output --regexp '^ok numpy( torch)?$'
}

@test "Loader: a corrupt JPEG raises SlabError naming it, or is skipped and counted" {
	need_libslab
	setup_cut
	run -0 pyslab - <<'PY'
import slab
try:
    with slab.Loader(["cut.slab"], batch_size=4, image="jpg", size=(8, 8)) as ld:
        for b in ld:
            pass
except slab.SlabError as e:
    print(e)
with slab.Loader(["cut.slab"], batch_size=4, image="jpg", size=(8, 8), on_error="skip") as ld:
    got = [(len(b), b.skipped, b.keys) for b in ld]
    print(got, ld.skipped)
    print(ld.error)
    st = ld.stats()
# the run's counts stay readable once the with block has closed the loader
print(ld.skipped, ld.error == "", ld.stats() == st, st["samples"], st["skipped"])
ld.stats()["scales"][1] = -1
print(ld.stats()["scales"][1] != -1)
PY
	assert_line --index 0 "'cut.slab': sample #2 'a000002': field 'jpg': corrupt JPEG: Premature end of JPEG file"
	assert_line --index 1 "[(3, 1, ['a000000', 'a000001', 'a000003']), (2, 0, ['a000004', 'a000005'])] 1"
	assert_line --index 2 "'cut.slab': sample #2 'a000002': field 'jpg': corrupt JPEG: Premature end of JPEG file"
	assert_line --index 3 "1 False True 5 1"
	assert_line --index 4 "True"
}

@test "Loader: bad arguments, files and plans are clear errors" {
	need_libslab
	setup_data
	printf 'not a slab' > junk.slab
	run -0 pyslab - <<'PY'
import slab
def err(**kw):
    paths = kw.pop("paths", ["one.slab"])
    try:
        slab.Loader(paths, **kw)
    except (slab.SlabError, ValueError) as e:
        print(type(e).__name__ + ": " + str(e))
    else:
        print("no error", kw)
err(paths=["nosuch.slab"])
err(paths=["junk.slab"])
err(plan="a.plan")
err(plan="nosuch.plan")
err(fields=["nosuch"])
err(image="jpg", crop="middle")
err(on_error="ignore")
err(order="sorted")
err(batch_size=0)
err(paths=[])
err(image="nosuch")
err(image="nosuch", fields=["cls"])
PY
	assert_line --index 0 "SlabError: 'nosuch.slab': No such file or directory"
	assert_line --index 1 --partial "SlabError: 'junk.slab': "
	assert_line --index 2 --partial "SlabError: 'a.plan': "
	assert_line --index 3 "SlabError: 'nosuch.plan': No such file or directory"
	assert_line --index 4 "SlabError: no file has a field 'nosuch' (fields: cls, jpg, json)"
	assert_line --index 5 "ValueError: crop must be 'random-resized', 'center' or None, not 'middle'"
	assert_line --index 6 "ValueError: on_error must be 'raise' or 'skip', not 'ignore'"
	assert_line --index 7 "ValueError: order must be 'sequential', 'random' or 'quasi', not 'sorted'"
	assert_line --index 8 "ValueError: batch_size must be at least 1, not 0"
	assert_line --index 9 "ValueError: slab.Loader: no files"
	assert_line --index 10 "SlabError: no file has a field 'nosuch' (fields: cls, jpg, json)"
	assert_line --index 11 "SlabError: no file has a field 'nosuch' (fields: cls, jpg, json)"
	[ "${#lines[@]}" -eq 12 ]
}

@test "Loader: the ring bounds what is held; views outlive close() without dangling" {
	need_libslab
	setup_data
	run -0 pyslab - <<'PY'
import gc, slab
ld = slab.Loader(["one.slab"], batch_size=4, ring=2, image="jpg", size=(8, 8))
a, b = ld.next_batch(), ld.next_batch()
try:
    ld.next_batch()
except slab.SlabError as e:
    print(e)
a.release()
try:
    a.fields
except slab.SlabError as e:
    print(e)
c = ld.next_batch()
assert c.number == 2
keep_img, keep_jpg = c.images, c.fields["jpg"][0]
want_img, want_jpg = keep_img.tobytes(), bytes(keep_jpg)
ld.close()
del ld, a, b, c
gc.collect()
# The ring and the mappings are still there for the views: same bytes, no crash.
assert keep_img.tobytes() == want_img and bytes(keep_jpg) == want_jpg
print("ok")
PY
	assert_line --index 0 "all 2 batches of the ring are held: release one first"
	assert_line --index 1 "batch 0 was released"
	assert_line --index 2 "ok"
}

@test "Loader needs libslab, and says so when it is not loaded" {
	small_slab
	SLAB_LIBRARY=none run -0 pyslab - <<'PY'
import slab
try:
    slab.Loader(["small.slab"])
except slab.SlabError as e:
    print(e)
PY
	assert_output "slab.Loader needs libslab.so, which was not loaded (SLAB_LIBRARY=none)"
}

@test "without libslab, a URL's password and signature are masked in the message that it cannot be read" {
	SLAB_LIBRARY=none run -0 pyslab - <<'PY'
import slab
for u in ["http://user:hunter2@127.0.0.1:9/d.slab?X-Amz-Signature=c0ffee&v=1#top",
          "s3://AKID:SECRET@bucket/a?b.slab", "https://127.0.0.1:9/x.slab"]:
    try:
        slab.Dataset(u)
    except slab.SlabError as e:
        print(e)
PY
	assert_line --index 0 "http://***@127.0.0.1:9/d.slab?***#top: a URL is read through libslab.so, which was not loaded (SLAB_LIBRARY=none)"
	assert_line --index 1 "s3://***@bucket/a?b.slab: a URL is read through libslab.so, which was not loaded (SLAB_LIBRARY=none)"
	assert_line --index 2 "https://127.0.0.1:9/x.slab: a URL is read through libslab.so, which was not loaded (SLAB_LIBRARY=none)"
	refute_output --partial hunter2
	refute_output --partial c0ffee
	refute_output --partial SECRET
}

@test "Loader: the ring's batches are placed on the caller's NUMA node (a preference)" {
	need_libslab
	[ -r /proc/self/numa_maps ] || skip "no /proc/self/numa_maps (a kernel without NUMA)"
	setup_data
	run -0 pyslab - <<'PY'
import re, slab
with slab.Loader(["one.slab"], batch_size=64, threads=3, image="jpg", size=(224, 224)) as ld:
    b = next(ld)
    maps = open("/proc/self/numa_maps").read().splitlines()
    cpu = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[36])
node = [int(n[4:]) for n in __import__("os").listdir("/sys/devices/system/cpu/cpu%d" % cpu)
        if re.fullmatch(r"node\d+", n)] or [0]
prefer = [m.split()[1] for m in maps if " prefer:" in m]
print(len(prefer), sorted(set(prefer)) == ["prefer:%d" % node[0]])
PY
	# ring: 2 x threads slots, each a mapping of its own
	assert_output "6 True"
}

@test "Loader: a cache budget over this epoch and the next ones changes nothing it hands out" {
	need_libslab
	setup_data
	for e in 4 5; do
		shuffle-plan -q --mode quasi --window 2 --seed 5 --epoch $e -o n$e.plan one.slab two.slab
	done
	run -0 pyslab - <<'PY'
import slab
paths = ["one.slab", "two.slab"]
def run(**kw):
    with slab.Loader(paths, plan="a.plan", batch_size=6, threads=2, ahead=2, **kw) as ld:
        return [(b.samples, [bytes(v) for v in b.fields["jpg"]]) for b in ld]
want = run()
for pol in ("belady", "fixed"):
    for mem in (1, "100K", 10 ** 9):
        assert run(memory=mem, next_plans=["n4.plan", "n5.plan"], cache_policy=pol) == want
assert run(memory="64K") == want
for bad in (dict(memory="lots"), dict(memory=1, cache_policy="lru")):
    try:
        run(**bad)
    except ValueError as e:
        print(e)
try:
    run(memory="1M", next_plans=["nosuch.plan"])
except slab.SlabError as e:
    print(e)
# the option named as given; a size past a float's range; names that are not str (a bare
# str of fields was taken letter by letter: "no file has a field 'j'"); a flip of "no"
for bad in (dict(disk="xx"), dict(memory="1" * 400 + ".5G"), dict(fields="jpg"),
            dict(fields=[b"jpg"]), dict(image=b"jpg"), dict(labels=3), dict(flip="no"),
            dict(window=8)):
    try:
        run(**bad)
    except (TypeError, ValueError) as e:
        print(type(e).__name__, str(e)[:60])
    else:
        print("accepted", bad)
PY
	assert_line --index 0 "memory must be a byte count such as 4G, not 'lots'"
	assert_line --index 1 "cache_policy must be 'belady' or 'fixed', not 'lru'"
	assert_line --index 2 "'nosuch.plan': No such file or directory"
	assert_line --index 3 "ValueError disk must be a byte count such as 4G, not 'xx'"
	assert_line --index 4 --regexp "^ValueError memory must be a byte count such as 4G, not '1+\$"
	assert_line --index 5 "TypeError fields must be a list of field names, not a str"
	assert_line --index 6 "TypeError fields must name a field (a str), not b'jpg'"
	assert_line --index 7 "TypeError image must name a field (a str), not b'jpg'"
	assert_line --index 8 "ValueError labels must be a field name such as 'cls', not 3"
	assert_line --index 9 "TypeError flip must be True or False, not 'no'"
	assert_line --index 10 "ValueError window applies to order='quasi' alone (a plan made here)"
}
