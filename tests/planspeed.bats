#!/usr/bin/env bats
# planspeed: shuffle-plan still writes, byte for byte, the plans it wrote before the quasi mode
# was made faster (slab-plan(5) is a contract: a plan depends only on the files' contents and
# the options). The references are the SHA-256 of plans made by shuffle-plan as of commit
# 4e04c5c (the code before), for every mode, several seeds and epochs, ranks of several world
# sizes, --drop-last and --pad, --start, --window and --memory, --subset (indexes and keys),
# one file and several, the binary and the text format, a file and a pipe, over datasets this
# file makes itself: with mkwds + pack (JPEG samples, some larger than a page, pages of 4 to
# 64 KiB, an empty file, a file of one page) and with mktiny (one-byte samples, units of 4096,
# 65536 and 131072 samples).
#
# The datasets must be the bytes the references were made on. Their headers are normalized
# (normalize: the format version and pack's version are recorded there), so mktiny's depend
# only on the layout of slab(5); the JPEGs of mkwds come from the system's libjpeg-turbo, and
# pack lays them out: when those bytes differ, the tests over packed files skip (saying so)
# and those over mktiny's still run. To make the references again, with a build of the code
# before in OLD: for each line below, OLD/shuffle-plan -q -o plan.bin ARGS (the pipe groups:
# -o - ARGS | cat > plan.bin) in a folder holding what datasets() makes; sha256sum plan.bin.

load test_helper/common

# normalize FILE...: a .slab's header as when the references were made: format version 1.1,
# options text "tool=planspeed" (the header CRC and its copy in the trailer made again). A
# plan depends on the header through the files' identity, and the writer records its version
# (format and pack's) there; the layout, which the plan depends on too, is the writer's.
normalize() {
	PYTHONPATH="$HELPERS" python3 - "$@" <<'EOF'
import sys
from crafted import Craft
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        c = Craft(f.read())
    c.header(10, "H", 1)
    c.header(64, "%ds" % (4096 - 64), b"tool=planspeed\n")
    c.fix(table=False)
    with open(path, "wb") as f:
        f.write(c.bytes())
EOF
}

# datasets: the files and subset lists, made once per file of tests, linked into the test's
# folder.
datasets() {
	local d="$BATS_FILE_TMPDIR/ds" f
	if [ ! -e "$d/ready" ]; then
		local t
		t=$(mktemp -d "$BATS_FILE_TMPDIR/ds.XXXXXX")
		(
			set -e
			cd "$t"
			mkwds --count 300 --seed 5 --width 16 --height 16 --prefix a -o a.tar
			mkwds --count 120 --seed 6 --jpeg-bytes 2K:12K --prefix b -o b.tar
			mkwds --count 40 --seed 7 --jpeg-bytes 1K:40K --prefix c -o c.tar
			mkwds --count 0 -o e.tar
			mkwds --count 5 --seed 8 --width 16 --height 16 --prefix s -o s.tar
			pack -q --page-size 4K -o a.slab a.tar
			pack -q --page-size 8K -o b.slab b.tar
			pack -q --page-size 16K -o c.slab c.tar
			pack -q -o e.slab e.tar
			pack -q --page-size 64K -o s.slab s.tar
			mktiny --count 100000 --page-size 4K -o t.slab
			mktiny --count 300000 --page-size 4K -o u.slab
			mktiny --count 300000 --page-size 128K -o v.slab
			mktiny --count 200000 --page-size 64K -o w.slab
			rm -f ./*.tar
			normalize ./*.slab
			seq 0 3 459 > sub1
			seq 459 -7 0 > sub2
			printf 'key:b000005\n17\nkey:c000039\n300\nkey:a000000\n458\nkey:b000119\n299\n420\nkey:c000001\n' > keys
			: > empty
			seq 5 11 99999 > subt
			: > ready
		) || return 1
		mv -T "$t" "$d" 2>/dev/null || rm -rf "$t"
	fi
	for f in "$d"/*; do
		ln -sf "$f" .
	done
}

# The datasets the references were made on.
datasets_sha256() {
	cat <<'EOF'
a10b66990d24fbe7671edd534be055393e4f0cbc1246be179424ddb09c0d41be  a.slab
c6de4c7ff9edebf281e12b5928690e4c1728f97a7d0ca6a3adbcb3f4110e7ce8  b.slab
d53a9f52a6cb3adbc20e89f4a53a5e10dd612c4648c832dd005da483b0fb447a  c.slab
b8ce205c82c82fc8f8f7f2eb89f6305ecb43e2e45d154213031fc3346be65977  e.slab
94360f630ebddc0e5a57cef4a9260415e12d0202b754c78fd79f2dc3c7f45af0  s.slab
f1b6d5f1393268a86e3d1a9867e6386a79aad3a71c63c24773cfafc88cb99cba  t.slab
d828703ebf606317ed88bde1b333e20f7fbb67e19bcd5285d557738c396528e1  u.slab
5145db64a7d651e3a8b84d1e72345c79b7fcf47c9196109f4964ec891a97274b  v.slab
437dc771f3bec929d20c9825fce2f7f83111a529705bd6e0e2fb19cc375f4418  w.slab
EOF
}

# need_packed: the datasets, and skip when pack's files are not those of the references.
need_packed() {
	datasets
	datasets_sha256 | grep ' [abces]\.slab$' | sha256sum --quiet -c - >/dev/null 2>&1 ||
		skip "mkwds + pack make other bytes than when the references were made (other JPEGs from libjpeg-turbo, or another layout): the references do not apply"
}

# need_tiny: the datasets; mktiny's must be those of the references.
need_tiny() {
	datasets
	datasets_sha256 | grep ' [tuvw]\.slab$' | sha256sum -c -
}

# references: "GROUP SHA256 ARGS" per line: the plan `shuffle-plan -q -o PLAN ARGS` made as
# of commit 4e04c5c.
references() {
	cat <<'EOF'
sequential ac8ed84c4815988834741bae7785516bdeb9af48a9780b4822cec0ded6f950bb --mode sequential --seed 0 a.slab
sequential d45a7bc23a71ddbdcabd6ef0579ebd5198c3f0c5f2b5b5ae342f2d5c29fbb017 --mode sequential --seed 1 --epoch 3 a.slab
sequential 27ebbf6f70fb051b4d5754fc876082486f592f0ac8a4b54b7db59d77493f5c9e --mode sequential --seed 18446744073709551615 --epoch 18446744073709551615 a.slab
sequential d624e334e4df1225a05deb0fe524b1167831939807f4cfcea32a3cbd5f1612fd --mode sequential --seed 2 --world-size 3 --rank 0 a.slab
sequential 84060e0c7371619599f529ca1e92d550bf526472410a8787750a0223beceaeac --mode sequential --seed 2 --world-size 3 --rank 1 a.slab
sequential 5c69b8b287ac83d491b8a7e7a20d1d9ce3e957ac7d21aa56b30ff54a6ceebd16 --mode sequential --seed 2 --world-size 3 --rank 2 a.slab
sequential a3b683bc5eb833abc1fa853428963a9b69959df6c9b4e38e90866675d69a1681 --mode sequential --seed 2 --world-size 3 --rank 2 --pad a.slab
sequential 9b01e0d603372522b0181177040e0d06220c8e6240835609d5e2917422ec62fa --mode sequential --epoch 1 --world-size 7 --rank 6 --pad a.slab
sequential 247b565806806be2583cebbec9f111dbb48aba7b5ac25d10a2009128ac15db27 --mode sequential --epoch 1 --world-size 7 --rank 3 --drop-last a.slab
sequential 691a1871931ec9e943620b557baeceeee7313190e46c0d11d9b1e1d9895b1eb0 --mode sequential --seed 4 --world-size 2 --rank 1 --start 17 a.slab
sequential 29bc4573e13cbe9a27d9b9afd7f939b2472b50f4a067aff262783a3423d04f45 --mode sequential --world-size 500 --rank 3 a.slab
sequential 336bf7ff0fc5bdd112a2b5278575b7eb74766f1dd6345358ec2d590cf21f29c2 --mode sequential --world-size 1000 --rank 999 --pad --seed 9 a.slab
sequential 3c3dfdd624a7fadbb351932dd17f97f7d6e201f9d5336ff2589b50d77d7b51c7 --mode sequential --seed 0 a.slab b.slab c.slab
sequential 8b985a543da3e570afec823d20320393f25d8b9088e719a7a011a58113cb1597 --mode sequential --seed 1 --epoch 3 a.slab b.slab c.slab
sequential 86cf489f1c00e7b1ab789f78c749e3aafac1ad0a309d3a7a8e5574b8e1998d53 --mode sequential --seed 18446744073709551615 --epoch 18446744073709551615 a.slab b.slab c.slab
sequential d54b029f0b8f26f7e6d642d454dcfde644a9e919c04e1e0e527b4599298472c7 --mode sequential --seed 2 --world-size 3 --rank 0 a.slab b.slab c.slab
sequential a8722772f2501fb56039c41f3e3778bcecc0965b2c6b7af5988ce577fd4bff3c --mode sequential --seed 2 --world-size 3 --rank 1 a.slab b.slab c.slab
sequential ba42615435d77e50d340ad07275ad3845c15d0e35e1f430213c4669e4210deb8 --mode sequential --seed 2 --world-size 3 --rank 2 a.slab b.slab c.slab
sequential 1527d69422b2e750f0def0b322964498f69697504aaf94f409fef4a8273bded1 --mode sequential --seed 2 --world-size 3 --rank 2 --pad a.slab b.slab c.slab
sequential 37562b8ea3f18141548f989a983100c8dfde2cf1156e076622d68027cf16ce2c --mode sequential --epoch 1 --world-size 7 --rank 6 --pad a.slab b.slab c.slab
sequential 79bcd7a1780ffee41a752f7150529f1305326aa98a28d72cb897c876f3ec5241 --mode sequential --epoch 1 --world-size 7 --rank 3 --drop-last a.slab b.slab c.slab
sequential 60115c551381ad6d1e20fb7b18d645fe77c9603af764e145c81840057fba55cf --mode sequential --seed 4 --world-size 2 --rank 1 --start 17 a.slab b.slab c.slab
sequential 93829071bd892fba966932d683e4b731a5ece55acc8a18055cc941fff3ee85e4 --mode sequential --world-size 500 --rank 3 a.slab b.slab c.slab
sequential 644b2729725609a59cd535677691c8dd5ccd1f412542ae22796dcda02053fd1c --mode sequential --world-size 1000 --rank 999 --pad --seed 9 a.slab b.slab c.slab
sequential 715e7e14123075accee5b18460bd94e9f39359b413b2aa5fc5e377f50f76e4e1 --mode sequential --seed 0 c.slab a.slab
sequential a8204a6d083413f6022f19b8e8b3899b4b07490941abe5afb674004376792a36 --mode sequential --seed 1 --epoch 3 c.slab a.slab
sequential ab8948c94134c637a86d5b8be7a62d9aa40b1880b4441f8d182b9c097b06035c --mode sequential --seed 18446744073709551615 --epoch 18446744073709551615 c.slab a.slab
sequential eb467f55492cee795f25a91701f9b2d45280afeaaee3d59de66968922a302806 --mode sequential --seed 2 --world-size 3 --rank 0 c.slab a.slab
sequential 9c6d2e6a0f5e399e5300607ae8c56a0e2c5acfdc48d5e9263d7849dbf83b73a0 --mode sequential --seed 2 --world-size 3 --rank 1 c.slab a.slab
sequential 2b5a89bfbbf479ed3de2cc34d75666c4bd04a12530e9ab76ad8036de4d576a50 --mode sequential --seed 2 --world-size 3 --rank 2 c.slab a.slab
sequential 3eb2f372ac7af313ac2e281dc5af699a39a95b456d50f24f2dd7f2d3244ec71a --mode sequential --seed 2 --world-size 3 --rank 2 --pad c.slab a.slab
sequential f5929e9b200e75e230fa26212962e794d4866752d97125d29b1c51f311ce2e3c --mode sequential --epoch 1 --world-size 7 --rank 6 --pad c.slab a.slab
sequential 6aec81e6380fe3e011e54bd57468bdc083e052586b5ced4c78da6c372d1afe2c --mode sequential --epoch 1 --world-size 7 --rank 3 --drop-last c.slab a.slab
sequential fbb2aee1734a2e3b0f9e4289b574d0cbbc7cb3417f4638af9bbcd487d4402ec4 --mode sequential --seed 4 --world-size 2 --rank 1 --start 17 c.slab a.slab
sequential ac066c9dd1072117d06259dbfb0f07d98fdae05aba19826daac0513f0784c152 --mode sequential --world-size 500 --rank 3 c.slab a.slab
sequential 007f90cb97f7cccc89619c24ceeeb67a01ed46a2b6d489bc83c67f32541c9b6b --mode sequential --world-size 1000 --rank 999 --pad --seed 9 c.slab a.slab
sequential 33c4017ccc1c14057ddd0887650c8ec07d7f9390bceb496edc05e6e48641b5c6 --mode sequential --seed 0 b.slab e.slab c.slab
sequential 4980ac4f442de3090ec84eccac73fbb960e127bb23f523350eef9d3bcde8c372 --mode sequential --seed 1 --epoch 3 b.slab e.slab c.slab
sequential 5102d4b94b88b3818acc794b7501f86965b9fd96ef18011be9d95ae106f5b548 --mode sequential --seed 18446744073709551615 --epoch 18446744073709551615 b.slab e.slab c.slab
sequential 247e1d31148032a2b9ccddfd81f0be7e680a00f6af7ed7e279a9aaff889fe1a2 --mode sequential --seed 2 --world-size 3 --rank 0 b.slab e.slab c.slab
sequential 3014b343234ddc957140c562341d72dd3e6d804af14d09c243c69fb93cde507c --mode sequential --seed 2 --world-size 3 --rank 1 b.slab e.slab c.slab
sequential 4a90d01ed1afc390138a49d2209bfb59b58b73b360e582d3b89171569d813870 --mode sequential --seed 2 --world-size 3 --rank 2 b.slab e.slab c.slab
sequential 7e4d9b0ab98eee5381707cd2b544e773a61a13c2abe2f26b5ac0f43f7154a16f --mode sequential --seed 2 --world-size 3 --rank 2 --pad b.slab e.slab c.slab
sequential 525c781c3cc0a9f3d27b89c876d5c3e19034914deae06998364cf2d0cfb48dab --mode sequential --epoch 1 --world-size 7 --rank 6 --pad b.slab e.slab c.slab
sequential abc59a26d942b477ab80c9612f2635676549b01e9c499d3c28bd20763c80bba5 --mode sequential --epoch 1 --world-size 7 --rank 3 --drop-last b.slab e.slab c.slab
sequential d92ee672eca1d9f0ccc890ec7dd5fbc5a93eef069e9b85ec1acfb0027fae780e --mode sequential --seed 4 --world-size 2 --rank 1 --start 17 b.slab e.slab c.slab
sequential 7801cebe5b014c7beb4e9b7ffa82f303d7910f025c12fe0169ee9fe7788094e6 --mode sequential --world-size 500 --rank 3 b.slab e.slab c.slab
sequential 24ee7d2209ed2acebacd776b0263c908b690b51b0a4b0a3775da4fe511a08e3f --mode sequential --world-size 1000 --rank 999 --pad --seed 9 b.slab e.slab c.slab
tiny-sequential a443638963830305692ac98a0d6a9abcffebd9e3f5b5c00d2def9b8a4a71184e --mode sequential --seed 0 t.slab
tiny-sequential 95a03f290c5396354c5d4a5428ea4a33953023c14c7faa931a7deafddd7651b6 --mode sequential --seed 1 --epoch 3 t.slab
tiny-sequential 270cc33be5a301e7d0667866dd53f3c955de3548b87929236c61a0b10317f8d5 --mode sequential --seed 18446744073709551615 --epoch 18446744073709551615 t.slab
tiny-sequential 6f9c13f7bd17e26483b286f82e2c7aa1adff287646c6f641b74d3f293e86e2a7 --mode sequential --seed 2 --world-size 3 --rank 0 t.slab
tiny-sequential f5ecc67d35da03c41be938c10bd23e3ece43267c6c502b1b326b567628e93b5e --mode sequential --seed 2 --world-size 3 --rank 1 t.slab
tiny-sequential 644305ae38aa5b03ad65b0ac485fb882a5bd3bafe155111ed172b2b0fb168471 --mode sequential --seed 2 --world-size 3 --rank 2 t.slab
tiny-sequential 6139568af3552f4b5b296b113fc40ad2f6cbaee5fa8f32091e55ac3fb9856a93 --mode sequential --seed 2 --world-size 3 --rank 2 --pad t.slab
tiny-sequential c22548055a9369572c5a612c24da96a73181a2e776fad4affe06f913aa65be70 --mode sequential --epoch 1 --world-size 7 --rank 6 --pad t.slab
tiny-sequential ad8d5941aa2b0f179aa8403251e2ba55b1183857b30961129ec66b55732f8071 --mode sequential --epoch 1 --world-size 7 --rank 3 --drop-last t.slab
tiny-sequential bfd24efe45936d0244b18860bfcf9c00394e6f16704134b9e36f6bfa40cccf81 --mode sequential --seed 4 --world-size 2 --rank 1 --start 17 t.slab
tiny-sequential ce533b612283e7308ae0654874eb93c641461d7da3a02f5700cb6ad54f1fe117 --mode sequential --world-size 500 --rank 3 t.slab
tiny-sequential 4627ef1d21c850c6ad4c88e35e980c33a34b7dd8675afa677749d1ebcbd63e3a --mode sequential --world-size 1000 --rank 999 --pad --seed 9 t.slab
sequential d82794ca9e86ae60a988ba9ba7c7657563733d5b80dde61a26d4be17fdb7fd5e --mode sequential --seed 3 t.slab a.slab
empty c23a22806351ededd3ea500259a13ebcdd83b1b4bb2b0e3ab31a95c4615510ee --mode sequential e.slab
empty 5d7e381db9c29b0d38f5b7326eca8d86c64df3df9d7f3b6b9c5777fd2a62541f --mode sequential --pad --world-size 3 --rank 2 e.slab
subset 86a664df8dfe4340e8a71608232fb2a683059ff17b97fb2f8520add2190d7a83 --mode sequential --subset sub1 a.slab b.slab c.slab
subset 210b024616d1e7893a78696ddfe6da04b4b54764362e7e18fee45c4191ae9407 --mode sequential --subset sub1 --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset d4eb7afa04c358fadaee8b08cb7982071a4a1e11d4113237db6faab4c0811b29 --mode sequential --subset sub2 a.slab b.slab c.slab
subset 2a240e893716256a7dc0fd17c421c27223bd12538f5110baf96afd4768080b0e --mode sequential --subset sub2 --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset 83bd48dab0c6f64d2c18b42b6bafd2a13eba6502f7844f360aa39deb4d504ea9 --mode sequential --subset keys a.slab b.slab c.slab
subset 3bf435e9be29ea0c968759aa67d5db0557a85b1f2b7c9d782004511ad825f379 --mode sequential --subset keys --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset 3e162d79c7af0dd3063d02fb1f39eaeaa144f9fd2138d612e147d249194ed5b1 --mode sequential --subset empty a.slab b.slab c.slab
subset b88d0015ecc0571b818255af8ccae210b7cdd5fd27722b54ee93f75b26170528 --mode sequential --subset empty --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
tiny-subset 5c0f82652aaf973f044f1169ddcbf3bc3a1da32286d673bd169aa2f07071ac1d --mode sequential --subset subt t.slab
tiny-subset 732726bbc2aee182ba494a160bfc9ad3be83dc51abbf9d348e5d3609264fd3d8 --mode sequential --subset subt --world-size 3 --rank 2 --epoch 5 t.slab
random 749fdaddb4569fff476a823e2efd57b60891f53a1c36f7e8fb95d994f745eb86 --mode random --seed 0 a.slab
random f5590055e962be96b778638947aec60ba9eb33ada3b0720224418a914f847c14 --mode random --seed 1 --epoch 3 a.slab
random 9ec978900d9adefd81845c02850a1784f78f15518253fd61dae6d9746faffa94 --mode random --seed 18446744073709551615 --epoch 18446744073709551615 a.slab
random 9635c7528ca221e75b2e25d4844a572f9c9cdfc9ecfc9bf0b6d10cf0b7758a75 --mode random --seed 2 --world-size 3 --rank 0 a.slab
random d5ff510fad56db9ae8c80133b20b5b3773043c8e622a9f29bbb33e4d9f240abb --mode random --seed 2 --world-size 3 --rank 1 a.slab
random b62bd8bf946ae5da52639b4f6f06dcd386a4f07f10ee1f08e78f39c5011827d7 --mode random --seed 2 --world-size 3 --rank 2 a.slab
random 5adbabd39a257adfb2915741dc64cbb0420396a4f20af4d00cb35525f29ded53 --mode random --seed 2 --world-size 3 --rank 2 --pad a.slab
random 7524e26d6d5252c92029369c367d6d878d8da91c67701945037434e9d3451ebc --mode random --epoch 1 --world-size 7 --rank 6 --pad a.slab
random 03483e34dd3d8939ee4836d3ffdbbb6175b7de720255cf9eea5d69258f19d95c --mode random --epoch 1 --world-size 7 --rank 3 --drop-last a.slab
random b57c70085095678597c1df1a419227c748c4506d14d3255785ed3040a801c9b0 --mode random --seed 4 --world-size 2 --rank 1 --start 17 a.slab
random 9ee58d57d696e66ca783bd0e24f8b53c8c76b249e497ae9264cc506694be465e --mode random --world-size 500 --rank 3 a.slab
random adbf5ab4accc8b5ed29eade4a0f00e6699d3f67e103d136cfc08501c6e4e7ac6 --mode random --world-size 1000 --rank 999 --pad --seed 9 a.slab
random 8c58ca9db4407bb79649a0836c97cadce0c5e8b112e072c4a0c4ed935301ad2b --mode random --seed 0 a.slab b.slab c.slab
random 1b741341a1d15333d8ea3bccdfe17ff9e80ccf1bf4753bccf653c19a9fc0246f --mode random --seed 1 --epoch 3 a.slab b.slab c.slab
random c2f94396d2f7c71d6df68f7be0450f38ac75622c8a4678ac748713631bea8df8 --mode random --seed 18446744073709551615 --epoch 18446744073709551615 a.slab b.slab c.slab
random d9aeb515d7fcd3f43fa9753a7baa530b3e52ca78618be64901e0b2242ab3aa18 --mode random --seed 2 --world-size 3 --rank 0 a.slab b.slab c.slab
random 13cf954f1b71874f3ced2d583585f3433e2323640a63753289767ef59d4a8381 --mode random --seed 2 --world-size 3 --rank 1 a.slab b.slab c.slab
random 011d6f35af51a6ae1c7af0bcab7cee9070bdfcc4cbb4a70a43d1a73d3ab1d2c1 --mode random --seed 2 --world-size 3 --rank 2 a.slab b.slab c.slab
random 3dbf5687f55d34e02501410e91253c181823b45b344259215345c06cd7e0ff73 --mode random --seed 2 --world-size 3 --rank 2 --pad a.slab b.slab c.slab
random 4aa2bcdfe3bef890715a3f8ac7a541ce467282f684159ec51f96bddb36c548f3 --mode random --epoch 1 --world-size 7 --rank 6 --pad a.slab b.slab c.slab
random 8b157346f17bf425badf0ddf23af12d0a29d21078616bab3a6e5d40abd07334c --mode random --epoch 1 --world-size 7 --rank 3 --drop-last a.slab b.slab c.slab
random 8d943057b7dcb0725da4d3b21cb8f9a7c1953fd766b59455e9609ccc524c620b --mode random --seed 4 --world-size 2 --rank 1 --start 17 a.slab b.slab c.slab
random aee82d8c871658b7d393b68b67b3646d4bdb156d3790c6ba8741a2c8f783f319 --mode random --world-size 500 --rank 3 a.slab b.slab c.slab
random deba5ebf1e3fcfccfe4f3729fd5472bf9d1e53ec57b64e3d30ef2cab31eb5c83 --mode random --world-size 1000 --rank 999 --pad --seed 9 a.slab b.slab c.slab
random 88891039d743a9ed395c14a4c295e848c48f7190aefb342505ac91d9d0ee1cfd --mode random --seed 0 c.slab a.slab
random 14d769a1ae468e1de78cf94a1b15eaa52742c8c7fceb384ccdab67a68daa12a2 --mode random --seed 1 --epoch 3 c.slab a.slab
random 034ba69842263afdb1b50352bb5f041759b54119efbf5560e022f4c7adac9843 --mode random --seed 18446744073709551615 --epoch 18446744073709551615 c.slab a.slab
random 76852ec53692d5665a12b6557119a71afd57e73e1b224cbea66f35c24fb0237c --mode random --seed 2 --world-size 3 --rank 0 c.slab a.slab
random 001552399c6e01b1cad41108cab40df8b9b83a372742d17cb7d1c18a05d97311 --mode random --seed 2 --world-size 3 --rank 1 c.slab a.slab
random 062d2bac0142caa34bdd47cfe335d44823ce27650e5935460a39c16f632f91e6 --mode random --seed 2 --world-size 3 --rank 2 c.slab a.slab
random 5df9a9e14ec82baa12356929a26b09035872fd2b22132870b1d63991d496426c --mode random --seed 2 --world-size 3 --rank 2 --pad c.slab a.slab
random 2b1f52aab06ac1ce886594b3c146108fb8b3c9991f9c24c513ab0e70eb1984a1 --mode random --epoch 1 --world-size 7 --rank 6 --pad c.slab a.slab
random 058056544cf764a39d44eb971419c8e2a9e03544b27c7393ebeecc564e325a01 --mode random --epoch 1 --world-size 7 --rank 3 --drop-last c.slab a.slab
random 8a9567a47cce3478bbc1123f035440c7f243442ce25a853f67bf4c7e77d38380 --mode random --seed 4 --world-size 2 --rank 1 --start 17 c.slab a.slab
random e7b64800bef9d3677b12294d319790c5ca19a3fa3b211d5963f14381036015d4 --mode random --world-size 500 --rank 3 c.slab a.slab
random 8498681ed6f31a5b05e58f52422658f51482c0a4c97af9317caf9efb9da3300b --mode random --world-size 1000 --rank 999 --pad --seed 9 c.slab a.slab
random 547b3213603a9f04749b23d658b60065b11131647fc382b23e2c6804be469bae --mode random --seed 0 b.slab e.slab c.slab
random 17495759120f66eea2daa6bb0cbd5672de9e1a83b29e4a61677b12db5da497b1 --mode random --seed 1 --epoch 3 b.slab e.slab c.slab
random ffd4a70a15753c86ded334ba6e276af383371e067e1f27d1e0b72cbf7e962f51 --mode random --seed 18446744073709551615 --epoch 18446744073709551615 b.slab e.slab c.slab
random 400eea0d7372db97c9ae8b595f2cfec7cf76e7bb33548bc7cead8f0f8cd4982a --mode random --seed 2 --world-size 3 --rank 0 b.slab e.slab c.slab
random cb6d3d32872aff437f3ae06e72ee4e194a8bc04af845784b648383dcbf176f98 --mode random --seed 2 --world-size 3 --rank 1 b.slab e.slab c.slab
random 84757be84610e5330087a2a7e038d18ae6ff1e561b08f24e5fdfb3092879410d --mode random --seed 2 --world-size 3 --rank 2 b.slab e.slab c.slab
random 87acfc78ea527d024b88122775a6e670e8d4155909d7c51bb64ed53042a0771a --mode random --seed 2 --world-size 3 --rank 2 --pad b.slab e.slab c.slab
random b684a0ff42a033d11f607825a99cbec1d546db39b91dcc60d06575347a50274e --mode random --epoch 1 --world-size 7 --rank 6 --pad b.slab e.slab c.slab
random 3adcd7930f1baed52a9f95c8d9fca9a4112ce1c4d56ccbcd55c47ce8c61881b0 --mode random --epoch 1 --world-size 7 --rank 3 --drop-last b.slab e.slab c.slab
random 9f22b4206d44db95824f9db3534ce4b52203dc19e14d488c63d92fc016f861fc --mode random --seed 4 --world-size 2 --rank 1 --start 17 b.slab e.slab c.slab
random 0abdb78140f64b60fb8812088acafea5961d77d646372cb40e155d3771440e6d --mode random --world-size 500 --rank 3 b.slab e.slab c.slab
random d4a19fe2c61b691d275f212fd704d240277c925b54dae164db700bd342ac2e73 --mode random --world-size 1000 --rank 999 --pad --seed 9 b.slab e.slab c.slab
tiny-random d8424e115781c63f56bbbf84aac6ac6e62109da7093d2738b7598ef362ad94cc --mode random --seed 0 t.slab
tiny-random 108266521889e4c0d233e754880d7ffadbe9f09172374370e20cea83ea5bf47b --mode random --seed 1 --epoch 3 t.slab
tiny-random a55346c4ab7023a36d611fcc51ab41ffd436f126fbdb5822d1ca190a16e4fece --mode random --seed 18446744073709551615 --epoch 18446744073709551615 t.slab
tiny-random 3c5693befbe0662c12731871fc3107a5de945a2f2de6c35a383e747843326bf6 --mode random --seed 2 --world-size 3 --rank 0 t.slab
tiny-random ebaad0755a9d36a1c32ba4b947fbfb18999a0d31c13da4c5e70640f39aadaeb7 --mode random --seed 2 --world-size 3 --rank 1 t.slab
tiny-random 82fbfaf20223d1f88596f49ff10d8491ae61a67207f358bea0e3a9a62b5b692b --mode random --seed 2 --world-size 3 --rank 2 t.slab
tiny-random e9a92af693e1553b8eecc7f66e6456bc88699711860c33f756601a46488eb841 --mode random --seed 2 --world-size 3 --rank 2 --pad t.slab
tiny-random 1d3424fd1fc5a4b3bb9e09460b92a6ebc82679558a926e93a66d201c732c10b6 --mode random --epoch 1 --world-size 7 --rank 6 --pad t.slab
tiny-random 9545ce8ba291af6c4bedc9f7081c83e4898223b0f4d4d117cf208a7fbaf4d024 --mode random --epoch 1 --world-size 7 --rank 3 --drop-last t.slab
tiny-random d97c7636f3b4155e0bbed40cb321974d6f4e7b77c49f53c9c9b3f42c5397e0cb --mode random --seed 4 --world-size 2 --rank 1 --start 17 t.slab
tiny-random 3fa0ab5d1f16f038432c5793ba7dadf519d821a19402fc7ddf45e81400f951d2 --mode random --world-size 500 --rank 3 t.slab
tiny-random 149eb80392ce42168a6da0ac95e05fefa04f4b8e77e87776b0556e1536b0725f --mode random --world-size 1000 --rank 999 --pad --seed 9 t.slab
random 3ccd40c1e6e04f9b99c358a7464c763b58f880949bf129de469c2e2cdb498c0f --mode random --seed 3 t.slab a.slab
empty 563e411174ed939a8d0e44a9aa95ef68355baf86376d8741694a79da22e79327 --mode random e.slab
empty 64bf8bba271c59be9cae330c33a5e01ccbe4d1e51748044b8bcf2964406a892a --mode random --pad --world-size 3 --rank 2 e.slab
subset 722a163aa95decd26e634d19087e95f071f10f6aa9c349a31a3c48ef2500f6d7 --mode random --subset sub1 a.slab b.slab c.slab
subset 666a4b9f980406d81ef064a6e8e5469154d5714b39ef2c79fb16619b6024ffd6 --mode random --subset sub1 --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset a9dc065ec69f4901d1bb504ad85718850a2d03f115cd6d86b31fb565f62ed58f --mode random --subset sub2 a.slab b.slab c.slab
subset b9d9cfa419d0ef135e5a418e66acc0f236c0fcf1aeda4ffdb127747049fcb300 --mode random --subset sub2 --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset 4fad09737fa87e799a8814b6b35b86ffea6d283677c42eeb9e2fb7e91897754b --mode random --subset keys a.slab b.slab c.slab
subset a7a8cee23123b0f1662a89c8e7bf48a712857280236e9c76d5fd53c8c8ab19f1 --mode random --subset keys --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset 1a40057b590f0b6d6abfddab8efcfb6df79fbe1cadc42c92cd11c83d9f806579 --mode random --subset empty a.slab b.slab c.slab
subset c9f1adc7b2f7a0d778f3df8f7187276b794b24aa732a772b76d4844bc6090122 --mode random --subset empty --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
tiny-subset 62275fe5909f4e4b81ec0837d7f5555c742eaec766af7d9c5bcf3129617f4241 --mode random --subset subt t.slab
tiny-subset dd3be26d1706182383e0d5040d77f9b49b134dc05011ded4c202d895ad91b9e9 --mode random --subset subt --world-size 3 --rank 2 --epoch 5 t.slab
quasi d5c59b92e9990cea28910ca25de5594f144322d27f41e883d264b1bceb3d41bb --mode quasi --seed 0 a.slab
quasi 8d9ff1ed41328c6db1090d2fb918601f587edd4d613cda3db7df315ffe95cc7a --mode quasi --seed 1 --epoch 3 a.slab
quasi b307adeef702287cbb32a7dfc7020b475abaf408b11375a8e3ac6c598aa158c7 --mode quasi --seed 18446744073709551615 --epoch 18446744073709551615 a.slab
quasi 22f2d94898d5f19a574a8e8941fb24b1dc381f6279574ba034ebcec61514e29a --mode quasi --seed 2 --world-size 3 --rank 0 a.slab
quasi ba25e783288951051586149a1505d573ab15153cfa19a946624bd633f86c72fe --mode quasi --seed 2 --world-size 3 --rank 1 a.slab
quasi 52bf435f98f217dc330666df54a564c2301f2024bb7bd6bdaf889dc03406680b --mode quasi --seed 2 --world-size 3 --rank 2 a.slab
quasi 8d496c997bd7641a837021125389c0175c3343d0f2baed7493fe01c361d9737a --mode quasi --seed 2 --world-size 3 --rank 2 --pad a.slab
quasi c278f9fcba79e1d30f7e461602b192e32d8dd20fd715a8a56fdb8feea9c908df --mode quasi --epoch 1 --world-size 7 --rank 6 --pad a.slab
quasi 27b6291c3b4dc97f6df012a8825e49bccdd2195309a7f1b6512061b0ffb0eb33 --mode quasi --epoch 1 --world-size 7 --rank 3 --drop-last a.slab
quasi 412ea9cc1bf26d0227e94190b182c4225ff262f0933029f5e4acd584affb9642 --mode quasi --seed 4 --world-size 2 --rank 1 --start 17 a.slab
quasi 52efe10730efada1e0459928e87f7680c12febfbf66390c9af532bb5a52d1038 --mode quasi --world-size 500 --rank 3 a.slab
quasi 56ec34f2f01cae5fc8dce6757abf287c577e4da3f755a02e3e03feaf51563347 --mode quasi --world-size 1000 --rank 999 --pad --seed 9 a.slab
quasi 65b2c4099e7d6357be27db18cb000eb58cba4c19fef57db705bac8772528a650 --mode quasi --seed 0 a.slab b.slab c.slab
quasi 0d868b8e8074a744d1dbc1e91590f04490592884fbb9cc250d95d5d411bfa0e5 --mode quasi --seed 1 --epoch 3 a.slab b.slab c.slab
quasi 2c3e82714bdc5746ba52c180d3797507ebfcd226573dbaef950bb9171ce79143 --mode quasi --seed 18446744073709551615 --epoch 18446744073709551615 a.slab b.slab c.slab
quasi b5805f97e3d1db9f2e661c5ed0bd25b9413d681dffde20da005dcc17eb2703f6 --mode quasi --seed 2 --world-size 3 --rank 0 a.slab b.slab c.slab
quasi b5e87ff0b35efa8db175eef4725f1d9ce5a3ba13444f5ac80adc481b3c8bf573 --mode quasi --seed 2 --world-size 3 --rank 1 a.slab b.slab c.slab
quasi 1292cf2864fd9e448c55f4d78f1e9366183c65bd0311e12e705b063638986c03 --mode quasi --seed 2 --world-size 3 --rank 2 a.slab b.slab c.slab
quasi 98d4696036f494499b4f07493cd084d89d65cb88aed6a1eaaf3a14037b9179e0 --mode quasi --seed 2 --world-size 3 --rank 2 --pad a.slab b.slab c.slab
quasi 8c03259f1fd150ecce3d8736b9077ce27c46b101a72ec4510a07e74775e65980 --mode quasi --epoch 1 --world-size 7 --rank 6 --pad a.slab b.slab c.slab
quasi a1c4759ec7660fe1645e21460cb1be0b119e11aef94cd6fd5f58bd2833cad63c --mode quasi --epoch 1 --world-size 7 --rank 3 --drop-last a.slab b.slab c.slab
quasi c37e4a56b40ed6d32669fb7cef9eb1bee8f45441783c24a4ed6a5f462c03f18d --mode quasi --seed 4 --world-size 2 --rank 1 --start 17 a.slab b.slab c.slab
quasi 1ab65c9e52abab9d8a1fbeeb17997d64d043f2a40f3eddc1575a0ec0d0ac7f18 --mode quasi --world-size 500 --rank 3 a.slab b.slab c.slab
quasi 8b91db46ffceea9827cd0a25fba7bfc148f8fff757fb48eeb059e482eebec9be --mode quasi --world-size 1000 --rank 999 --pad --seed 9 a.slab b.slab c.slab
quasi d1ed7281f647b642dff5f7602d8d0845bf0f4879497d3c338edefe100da194fe --mode quasi --seed 0 c.slab a.slab
quasi fdc5fa3b45e106bf87138d834a5eee0dbf1d1c9eb43df1f8468e601a23eb18b8 --mode quasi --seed 1 --epoch 3 c.slab a.slab
quasi f422ff8ffe4e6af0ee3f8ec33000b4d236b79d5ae386fbf8725d00e58b0c0f06 --mode quasi --seed 18446744073709551615 --epoch 18446744073709551615 c.slab a.slab
quasi e9ebfb813c96ea9b1256473f08ef6fbafd6f5260b735e1292815cb225ddcc1b5 --mode quasi --seed 2 --world-size 3 --rank 0 c.slab a.slab
quasi 9e8810044a2364ac26e403f4e2091ebe8a5eec7aaae97fdf097afa093bb688f0 --mode quasi --seed 2 --world-size 3 --rank 1 c.slab a.slab
quasi fba0e9a8139cc459248b75a0b793e112110e01b34ebfd07e2e7eceb4b5e94876 --mode quasi --seed 2 --world-size 3 --rank 2 c.slab a.slab
quasi b8824d85cb16fad9866ae328b257e3316b7cba53220b966a95ca52000a7366e0 --mode quasi --seed 2 --world-size 3 --rank 2 --pad c.slab a.slab
quasi ae5723dca59325ca300d16b5799788b4154baf75ad456eb31c775e0752de3721 --mode quasi --epoch 1 --world-size 7 --rank 6 --pad c.slab a.slab
quasi ecca4baacba68d3da3363bcbb54c005db731c43f20a54992fb722a38e5d8e908 --mode quasi --epoch 1 --world-size 7 --rank 3 --drop-last c.slab a.slab
quasi b8a4c8b2914c2653734b36180e94f17cf04c040536fd3ae1b56fd1224fde959a --mode quasi --seed 4 --world-size 2 --rank 1 --start 17 c.slab a.slab
quasi f52f5725d36c6ba5e60539559542b93624a46321cbf0a4f1e8d638568e2c2392 --mode quasi --world-size 500 --rank 3 c.slab a.slab
quasi a362ee531080c2a3610502f0e61d06e8076b17fefa926b4e69b3ed164b0a44ac --mode quasi --world-size 1000 --rank 999 --pad --seed 9 c.slab a.slab
quasi c9950b04353df53c788b1a032992e5f0800439dc08a7ef88d5accfc25ab43fc8 --mode quasi --seed 0 b.slab e.slab c.slab
quasi cbadc8c7318e8ec183ff6905aac769d5556be8b63ae562566e9f7cbbb38c366d --mode quasi --seed 1 --epoch 3 b.slab e.slab c.slab
quasi 47497929acd9d2ae2a1e4a5ffdd8e5acda44ee259c53cf5170ca6fd777b82171 --mode quasi --seed 18446744073709551615 --epoch 18446744073709551615 b.slab e.slab c.slab
quasi 29adf3bc389e1c2552847dde4b26bd68acff3c08e14d0a902f57de686cbf8d33 --mode quasi --seed 2 --world-size 3 --rank 0 b.slab e.slab c.slab
quasi 49fc4a4d3f628275a3ea4b635edb85c551a7c7877da89bacf98e76afa1a17aea --mode quasi --seed 2 --world-size 3 --rank 1 b.slab e.slab c.slab
quasi 51639632a1a2b29e9e06a7d61b61fe75f08492ec0233f1f9229594792d364ecc --mode quasi --seed 2 --world-size 3 --rank 2 b.slab e.slab c.slab
quasi bb1f35dbf7ebe94cecc4298f22fc66b0fdcf8f2253670b92f7f893a41ce5e80c --mode quasi --seed 2 --world-size 3 --rank 2 --pad b.slab e.slab c.slab
quasi df90cd4dccaa84a27871adbb8e0d3b61e47636f983e6e46780f638ee82975238 --mode quasi --epoch 1 --world-size 7 --rank 6 --pad b.slab e.slab c.slab
quasi 018f0f7a6b2deafbb9c651435ca2a51d6a0958cb33ff033c147708f8d77259a6 --mode quasi --epoch 1 --world-size 7 --rank 3 --drop-last b.slab e.slab c.slab
quasi 174fd65a517512ff1e660aa0f46d6327f20218212fbe3122fd461fa285adebc2 --mode quasi --seed 4 --world-size 2 --rank 1 --start 17 b.slab e.slab c.slab
quasi 430d8a2bb59f1aafbacea66bf763e5b9eee0ee2237da5e7837f1ab5bc74d1a29 --mode quasi --world-size 500 --rank 3 b.slab e.slab c.slab
quasi 29052535490b50fd00920b3659b5f8e090ea9b42201598349954023491ca5ecf --mode quasi --world-size 1000 --rank 999 --pad --seed 9 b.slab e.slab c.slab
tiny-quasi d3494ada6526a68a718063b8c7c95307153702971b68e0dfb49462862be1563a --mode quasi --seed 0 t.slab
tiny-quasi 33f1d831511bfcb7b56587e2663da5cf10f8cf7c4e8ed55f9d4df59aadb8a9f6 --mode quasi --seed 1 --epoch 3 t.slab
tiny-quasi 85e266f80db041cabe543c3baa92e1edd35dfdc62a3b4d0d55a80e212e1e64fe --mode quasi --seed 18446744073709551615 --epoch 18446744073709551615 t.slab
tiny-quasi bc0d09af99903b08627814052e56117d56c1bf6ff6cc37a36a07d3f4374e081c --mode quasi --seed 2 --world-size 3 --rank 0 t.slab
tiny-quasi cda874b85d7b0bcb00a1a9f56a497edd14aba879c86dc0e5356553a08a57a411 --mode quasi --seed 2 --world-size 3 --rank 1 t.slab
tiny-quasi d670183f142042f4cbcf4c7cfbcd9be1dce9a9d8ec5c6285a83a2758b7717d43 --mode quasi --seed 2 --world-size 3 --rank 2 t.slab
tiny-quasi 53911c0603ac46a197533f7fb3f1e2ed32dffe070b3380ff2ec1f24db12e1239 --mode quasi --seed 2 --world-size 3 --rank 2 --pad t.slab
tiny-quasi 7251355316949ea4b406ee54f684beeb38a3424881fbfc838d32a0d41534afed --mode quasi --epoch 1 --world-size 7 --rank 6 --pad t.slab
tiny-quasi aa8186bc1571641fbfed19ba2d1cbe56f279182c6b28dbdcd151c233d647ec6f --mode quasi --epoch 1 --world-size 7 --rank 3 --drop-last t.slab
tiny-quasi c06d0a3f47ea4b29616dc16a66c7fb369a1c63f6845e390e7cfade50d110faba --mode quasi --seed 4 --world-size 2 --rank 1 --start 17 t.slab
tiny-quasi 287b4ffb8de7397e902b6bae2a3ad51373002ae1332e977068bca6aef2e43190 --mode quasi --world-size 500 --rank 3 t.slab
tiny-quasi c489cbc51413e340c7e1adef40274e3cbefc2d4a074b9ce041d7c45e21d83136 --mode quasi --world-size 1000 --rank 999 --pad --seed 9 t.slab
quasi 561e34aaca862e251fe8db1aa53602ae9bdc5a4c83e10a9fc957e0a407a022f0 --mode quasi --seed 3 t.slab a.slab
empty 79810891b01b80431e92056c0e66bd38c15471e404c482c25866c2c349d2da0a --mode quasi e.slab
empty 6582cd1d20c5165d031cdf599ce845a97c17364fe34b35722bb3f3fb3e2713a9 --mode quasi --pad --world-size 3 --rank 2 e.slab
subset bffa56b4220d83f91f41ffeb72eb572a179540afe9871131cb7e65bb363e7edb --mode quasi --subset sub1 a.slab b.slab c.slab
subset eb73798c30de357831bc3c83bc23819da3df834d46ce6205bcb302008371247f --mode quasi --subset sub1 --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset 0b19e8616d7011cc2f33c7b60b76aa27524c9d01234086617d6078f86622b9d8 --mode quasi --subset sub2 a.slab b.slab c.slab
subset 51bf2bc7ccd0aad3773fea7cbbb14dab292c4b2cd65a520b6719f15322c391fb --mode quasi --subset sub2 --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset fe35df9b95d9ddc55c0eaf058492ec10354c16af394d8b3f17b042626f7657d9 --mode quasi --subset keys a.slab b.slab c.slab
subset 1f8dd5e02ed5005135fc0cd168541cd61cd14b92d88aa5788b89e483863f4c26 --mode quasi --subset keys --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
subset 9b6cc13bb90e1d6bf8ab007f043b00cf8f462f783ea4115da4162e7d4935ca6d --mode quasi --subset empty a.slab b.slab c.slab
subset 0d589b61e38642e535abd824da9a4047f43567a0bcfe8d147b5df5a51fa772b4 --mode quasi --subset empty --seed 7 --world-size 2 --rank 1 --pad a.slab b.slab c.slab
tiny-subset aa7253561676304272a04e875f805d0ffa1032297e92f5b9f3fcda1795a1f67d --mode quasi --subset subt t.slab
tiny-subset 88efc081ea596af26b8a9f1551360d6df55212da7a7681952a5003731701b4e5 --mode quasi --subset subt --world-size 3 --rank 2 --epoch 5 t.slab
quasi 0b551e5ddc6ae5ea703f620188020e3f19ee1c216732f52f809edfeb5c96cd31 --mode quasi --window 1 a.slab
quasi f3fe56ec118b7c3fbe6fc146a726fe4b6baf11d6fcee55606d134ce9db3fc6d5 --mode quasi --window 2 --seed 5 a.slab
quasi a8c0d2d28fc7762652430112036c866125c44777402f4341176489042023a1fb --mode quasi --window 1000 a.slab
quasi 82c92441cdb3e1d5d5a886ee5541c8591dabecc8175468dfcea4e0a3b1ae1bb0 --mode quasi --memory 4K a.slab
quasi cc70bc1e1d4e603033ca7fdd12308230a32d8178100e898c23383f111a45712a --mode quasi --memory 20K --seed 6 a.slab
quasi 6e3a78b66a4a5762d58d01ae2c2a6e5ad59d2f2a9ffaee046bd1960672ca6e45 --mode quasi --memory 1M --epoch 2 a.slab
quasi d9a1977e4c3c2c62ac10475cb81f852ade37328efbe422e3a570a0b4b90b1494 --mode quasi --window 3 --world-size 4 --rank 3 --pad a.slab
quasi 44543c1ed8b6eec26dcea83f4af51459e82ad89ed6583cf710b937433d95a0c9 --mode quasi --memory 40K --world-size 3 --rank 1 --start 5 a.slab
quasi e4f56df454d80f3264dd50cd5e457a42f41bf79553b0279c1055c2775999c29a --mode quasi --window 1 a.slab b.slab c.slab
quasi 152e50a95e8e2f7dde8382cac9e7e8789daf0d91de6a10055d886adc2f6467aa --mode quasi --window 2 --seed 5 a.slab b.slab c.slab
quasi f1fc802f48f5716750f2b9cfbf932e19f7230371e3c44518d861bd8c41b861d5 --mode quasi --window 1000 a.slab b.slab c.slab
quasi c38d8e333e8d8ba0e6fda4e79a24fbdf020aeefe6bd29e07e142ec2e44bc72b4 --mode quasi --memory 4K a.slab b.slab c.slab
quasi b271906a1644078816564bd305a425e152881e87a04cf8d3005939b28233865a --mode quasi --memory 20K --seed 6 a.slab b.slab c.slab
quasi f4210036d74250c0a1c76780a05c2c4ded52d6f359038a98cc810177bfd1412c --mode quasi --memory 1M --epoch 2 a.slab b.slab c.slab
quasi b1387feaf564e6e6b43de43b52c3d71cc592888d55079fc245aa8aeb50ddcf5a --mode quasi --window 3 --world-size 4 --rank 3 --pad a.slab b.slab c.slab
quasi e582ae5a4eca5db354a760aabaabeab641608e8a3bfda10e3848d81229ce9748 --mode quasi --memory 40K --world-size 3 --rank 1 --start 5 a.slab b.slab c.slab
quasi 4b66a314c7e73f7e8a41fd3cd4da4f83ea9b708057a1fa9181a4946759a4220d --mode quasi --window 1 c.slab a.slab
quasi 035f8aae4dedc63fe38d81607abae7bcd96c672b5de11eb088b556b5b332b70d --mode quasi --window 2 --seed 5 c.slab a.slab
quasi d7ee99e8bfb79eb9b186fc55afc2b7a17ba57b4faf4bb6482b226764ae036d27 --mode quasi --window 1000 c.slab a.slab
quasi 445cd623878c1fa3fda3cbf0fc1dd4608998c7d70c1b9d83066ebe250d29279b --mode quasi --memory 4K c.slab a.slab
quasi 9f6918ba0863d2e35db4357060853bb787e198318778462aa3c1358bc317e61e --mode quasi --memory 20K --seed 6 c.slab a.slab
quasi afb8cc2fe70845265908e258b25cb84b3c131654c9923f18ee1a207f52ceaa71 --mode quasi --memory 1M --epoch 2 c.slab a.slab
quasi e666b0b2766b24fdfe5a35c5a0fe9abe5593b213cf5a1e684fe3f78590646b02 --mode quasi --window 3 --world-size 4 --rank 3 --pad c.slab a.slab
quasi b89ce7a6b00ec64d0c615195fada2b29e68da22f9e0ddadfef70b9a09e133648 --mode quasi --memory 40K --world-size 3 --rank 1 --start 5 c.slab a.slab
quasi 56f4f4b30d9cb570644189ecef2d93eb9af07c592bb3f8703363899ea496f35c --mode quasi --window 1 b.slab e.slab c.slab
quasi 99f2ee2209bd33bfa43544dd984bdd7776b87dcf6db9f1fafcebb9ec424c31c3 --mode quasi --window 2 --seed 5 b.slab e.slab c.slab
quasi 9ee2d36278505e7f4fb61050a7b4bdf1a733e00c18a04609b590ae98caeef100 --mode quasi --window 1000 b.slab e.slab c.slab
quasi 21dd9b1db3e0ef7f4140bf507d2aee89b8f373ae9d42cfbaf8a039b35e07d802 --mode quasi --memory 4K b.slab e.slab c.slab
quasi f97514fdffe0c86beee1136d520f50210be1398574c6f9f163ab100548427a6f --mode quasi --memory 20K --seed 6 b.slab e.slab c.slab
quasi 63e1b1a0b35852f3cf735be6b7fcedd38b63a584b28a7bbcef9667ab99199099 --mode quasi --memory 1M --epoch 2 b.slab e.slab c.slab
quasi 8fa22bc9315fbb42130437a98cd5fa9fa947d70cf777a1868a7f446c5036281d --mode quasi --window 3 --world-size 4 --rank 3 --pad b.slab e.slab c.slab
quasi b8d54708c720803adb6df18776e14da090cab9a433cbbdc5e9058bf3271df327 --mode quasi --memory 40K --world-size 3 --rank 1 --start 5 b.slab e.slab c.slab
tiny-quasi 3cfba73e16f83abfdff1dad68c8aafdeb94bc06f92ceec4e60a3369475c8ef33 --mode quasi --window 1 t.slab
tiny-quasi 7cf59803661417f4a0a147f93f0fd848380699c4a944232c3dcc24e9de98dee4 --mode quasi --window 2 --seed 5 t.slab
tiny-quasi 37e88498f78248b7720bd495cbae22a108f9c28c796fd84ba1c0dfc6b8d10a7a --mode quasi --window 1000 t.slab
tiny-quasi 6ce997c8e1086258a66d58c1598830fbeb8504f117fafe1e88ef6cc37b35a0f5 --mode quasi --memory 4K t.slab
tiny-quasi bd4f49fa2d129b1600e20d29236158b28cac82f53618b4e0b99bfa3e2ee7e7cb --mode quasi --memory 20K --seed 6 t.slab
tiny-quasi d661a69aa3aeffa4f40f7e603a215ed3eb3f30d4fb8fbb5a89c4a68e376b9708 --mode quasi --memory 1M --epoch 2 t.slab
tiny-quasi c532896806db14c084c42f65ca6aa24ec154ae5e8a08e821950dbb6c2434d759 --mode quasi --window 3 --world-size 4 --rank 3 --pad t.slab
tiny-quasi 8d71275dbeb3d83ec8264d38720508454199955d3cf31c12fe3ce8114de77736 --mode quasi --memory 40K --world-size 3 --rank 1 --start 5 t.slab
subset 9c717ef2447a1c02c87c35f98296d5328c453e65f2991f0f6f632f9c191d2a85 --mode quasi --subset sub1 --memory 20K a.slab b.slab c.slab
subset 0bef369cee88808cf986be6c0d2aadfcffee619ad130d339c743b2a09ab04e49 --mode quasi --subset keys --window 1 --start 3 a.slab b.slab c.slab
tiny-subset d7ff96d001cbbffd419b94ce80a742b7f39949e245709f76ad32df9506a2ad6a --mode quasi --subset subt --window 2 t.slab
tiny-quasi ca1d870cb4f79c7d7df6f7e1c85d8b58facdb57dad04c308736f43c96c1c07fe --mode quasi --seed 3 t.slab
pipe 82363441856e363736fb9e4d2ed1a38c7983fe37d3d5b12ea818a10e2dce079c --mode sequential --seed 11 --world-size 2 --rank 1 a.slab b.slab c.slab
tiny-pipe 237c1c23a0105058263f86db16bf69b0baa6d7c6f94579b0be32ec6c23c936be --mode sequential --seed 11 t.slab
text eb8175f1393c88666dcbe946009ded5022dcfc79a3b7604b93b6c5c203fbc4b5 --mode sequential --format text --seed 12 --world-size 3 --rank 1 --pad a.slab b.slab c.slab
tiny-text b2c31c7708800eec90aeb693315683bc86eb169b1058bd756434c0fe40f51d3a --mode sequential --format text --seed 12 --subset subt t.slab
pipe 7449a64abf1b492c0a4c1e413fd677a54275e0c5152ab8ebbf01013ed0e88d19 --mode random --seed 11 --world-size 2 --rank 1 a.slab b.slab c.slab
tiny-pipe 97ce5c2fb98bac881219cafb6e3bb78ef98b6412597a92ef1d8ffc5819812531 --mode random --seed 11 t.slab
text e286a2c43c512caa502ec54202175abc4bd1db038e4a5d409cf82d1d48004012 --mode random --format text --seed 12 --world-size 3 --rank 1 --pad a.slab b.slab c.slab
tiny-text 55b742107b31c1d6bd771a6579c4f3bb8188a4ddc836b2da3218071640728a0f --mode random --format text --seed 12 --subset subt t.slab
pipe 873ce8e8126eecafac1ea6369c7c94dd25fea258e4b51c084ac658d5da85a664 --mode quasi --seed 11 --world-size 2 --rank 1 a.slab b.slab c.slab
tiny-pipe d84aeb0dc60bfdde09433659e7453182ab711af86ba81b4684937aadba504e1d --mode quasi --seed 11 t.slab
text beb12e0e65fa4d917307123ee1c1d0e72de5051b2c5ec1bc0c3e98e0d4319f2e --mode quasi --format text --seed 12 --world-size 3 --rank 1 --pad a.slab b.slab c.slab
tiny-text 73073d3823f087892d3c313c4dbf7241b3b59c62786ed3f427b61ddfdb40262a --mode quasi --format text --seed 12 --subset subt t.slab
tiny-quasi 2c247d860a48ee3a5d2f27be59e58ac75259cd00e7c1407fa79da449fdefbb25 --mode quasi --seed 0 u.slab
tiny-quasi 5b8eae28570159e40a0737b704d7c9fe6942c30fc038dc341ccc680ca903b69a --mode quasi --seed 1 --epoch 1 u.slab
tiny-quasi 0ef8540ea3c4ca660c0db6627ed818a60d4109eb03a37c019eb8d0e1e54c5e10 --mode quasi --world-size 3 --rank 0 u.slab
tiny-quasi 61d4aa451583b4221d12b6110d798cee83174ddc292adb4e07bccea8e73a2d83 --mode quasi --world-size 3 --rank 2 --pad u.slab
tiny-quasi 5a01d8a2a966fe23aa08e9134a4b71d576ff378e5fcdca2d734ea95a2f5ed13f --mode quasi --window 70 u.slab
tiny-quasi 073134924be3103308f1749729b493ccb29c176afd4c8af808bfc47100428168 --mode quasi --window 5 --seed 8 u.slab
tiny-quasi 30991497ca053de4028548275d5f1cd3cb0f4c374c142cc6844c1aa2ba530b10 --mode quasi --memory 100K u.slab
tiny-quasi 9f98477973d5e7a8d9f0f7d3626b48a7a851048d50b1fadd0f4fa2716afd6b62 --mode quasi --memory 1M --world-size 2 --rank 1 --start 1000 u.slab
tiny-random 4acc3de893df9cfd15a3122fe39efaec5f02d9e46e792527e06e7d8320ac7f5a --mode random --seed 1 u.slab
tiny-quasi c2540c54142812fcf308f4d6c165d8b8af883288c4f3ccecd20a8d3621ec546c --mode quasi --seed 2 u.slab t.slab
sequential 1a19b360a940ded26877eed687b750448ecd2995b5c04bcadd681473dea35bf2 --mode sequential --world-size 2 --rank 1 --pad s.slab
sequential ba56dc4e0af7c8d068384e93d205a4c6889d93db1d44e56f70ccee2a8576a1eb --mode sequential --world-size 3 --rank 2 --pad --seed 4 s.slab
sequential 30ba21b2a6a207c21e55734e1ee74edc18f09820df3e538e2df32ec5f7efa7af --mode sequential --world-size 2 --rank 1 --pad --start 1 s.slab
sequential cd03d9b9a44c86f3bec521346fbfb8e2ad20ea0c2c5b5dfd02b5c92725b6c72f --mode sequential --seed 2 s.slab
random 6cd3495f41f1702f9391445c1664fc94238f59e8140bd509c74dda1596bf3bb6 --mode random --world-size 2 --rank 1 --pad s.slab
random 4a1ba6c527d681e81e5049752757aac4b5fa1a224fc2b98474e312f732cc18fd --mode random --world-size 3 --rank 2 --pad --seed 4 s.slab
random c401f49a5628c4be6515f8096206e2ca93a447eb672ad39742c19f6ba8023f3c --mode random --world-size 2 --rank 1 --pad --start 1 s.slab
random 6915ef8568ba40fad40f70475845ddf6924f3201c0f916382dea788ddd009353 --mode random --seed 2 s.slab
quasi 69fde95783a87490ac5326366c822e1bf623e7227923c26349f461d5b15049ff --mode quasi --world-size 2 --rank 1 --pad s.slab
quasi 9826e3a379daa1950fa916176ac95ae7ef093074b9d7d91670b54c964bda8c56 --mode quasi --world-size 3 --rank 2 --pad --seed 4 s.slab
quasi 75df6822d05a66702bef72e4fb93b489759b58186d20d412199eccdb9f97718a --mode quasi --world-size 2 --rank 1 --pad --start 1 s.slab
quasi 29ec581031687695dcbc0c600cdf3451e38d233e6b59037a60504fe322ca3a48 --mode quasi --seed 2 s.slab
quasi c0923b03eead9aaf221d53fcd5930341d74bc57acf9a5e26b7b337fc45e6c97f --mode quasi --world-size 4 --rank 3 --pad --window 1 s.slab
quasi d75677891eec985a6d0f4888b2ddb8339ee3e32145c5a69d29282f1330f54ddd --mode quasi --seed 6 s.slab a.slab
tiny-quasi 2e17832d15cc8a650ba7e4c56841de1db7e6cd95a20bdc387b4ce234cbf3edad --mode quasi --seed 1 v.slab
tiny-quasi 3cf769a89e96ededc10d1229259a0a878009445a0f8a6f9c96c627f4b6c93e46 --mode quasi --window 1 v.slab
tiny-quasi c10c44abc2addf7af442601980ee7e49ce0a14285756ba9da880ddb4918a77f2 --mode quasi --world-size 3 --rank 1 v.slab
tiny-quasi 582f3a468c5b0c5e6d64ea208a1fbd5b05406bd39df9747b32e0821e2ebfe3f3 --mode quasi --subset subt v.slab
tiny-quasi fcb1051a5c05ca100ee0783db51966b07c6bd0ae863e592c4f6e6ac1975b41c7 --mode quasi --memory 1M --world-size 2 --rank 1 --pad w.slab
tiny-quasi da5a0ccbab873a2428317f590648b68efe79bc8a8a23cc53512bd598399308f2 --mode quasi --seed 7 w.slab
tiny-quasi ba3313e87f016a7a9b7afc8695061b44d37e6e2765390ba7b2b00e4788d96017 --mode quasi --window 2 w.slab
tiny-quasi 9728017ee96dfbe1275bf3d79f2d583569d9491e5d770c82ea5ff98397a8d2eb --mode quasi --seed 8 w.slab v.slab
tiny-quasi 96d32cd31d654dcf1b49973507fe0e24aa870a3516b997c3aa6ab4a35e3986a1 --mode quasi --world-size 2 --rank 1 --start 70000 w.slab
tiny-random f1cbe77af3c450942ef2222a03018c5562e4c16605119917f907f19aa3f4979a --mode random --seed 1 v.slab
tiny-sequential f4bc4a7682059d22a67dfe9e5634d0988e530eb5d4cf920621f31ce54cf6533f --mode sequential --world-size 2 --rank 1 w.slab
EOF
}

# check GROUP: each reference plan of GROUP made again and compared; every difference is
# listed before the test fails.
check() {
	local group=$1 g sum args got n=0 bad=0
	while read -r g sum args; do
		[ "$g" = "$group" ] || continue
		n=$((n + 1))
		rm -f plan.bin
		# shellcheck disable=SC2086 # ARGS are words
		if [[ $group == *pipe ]]; then
			shuffle-plan -q -o - $args | cat > plan.bin
			[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "failed: shuffle-plan -o - $args"; bad=$((bad + 1)); continue; }
		else
			shuffle-plan -q -o plan.bin $args || { echo "failed: shuffle-plan $args"; bad=$((bad + 1)); continue; }
		fi
		got=$(sha256sum < plan.bin | cut -c1-64)
		if [ "$got" != "$sum" ]; then
			echo "differs from the reference: shuffle-plan $args"
			bad=$((bad + 1))
		fi
	done < <(references)
	echo "$group: $n plans, $bad not as the reference"
	[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}

@test "the datasets of one-byte samples are the references' bytes" {
	need_tiny
}

@test "sequential plans over packed files: the reference plans, byte for byte (53)" {
	need_packed
	check sequential
}

@test "sequential plans over files of one-byte samples: the reference plans, byte for byte (13)" {
	need_tiny
	check tiny-sequential
}

@test "plans of an empty dataset: the reference plans, byte for byte (6)" {
	need_packed
	check empty
}

@test "--subset plans over packed files (indexes and keys): the reference plans, byte for byte (26)" {
	need_packed
	check subset
}

@test "--subset plans over files of one-byte samples: the reference plans, byte for byte (7)" {
	need_tiny
	check tiny-subset
}

@test "random plans over packed files: the reference plans, byte for byte (53)" {
	need_packed
	check random
}

@test "random plans over files of one-byte samples: the reference plans, byte for byte (14)" {
	need_tiny
	check tiny-random
}

@test "quasi plans over packed files (--window, --memory, large samples): the reference plans, byte for byte (87)" {
	need_packed
	check quasi
}

@test "quasi plans over files of one-byte samples (units of 4096 to 131072): the reference plans, byte for byte (39)" {
	need_tiny
	check tiny-quasi
}

@test "plans written to a pipe, over packed files: the reference plans, byte for byte (3)" {
	need_packed
	check pipe
}

@test "plans written to a pipe, over files of one-byte samples: the reference plans, byte for byte (3)" {
	need_tiny
	check tiny-pipe
}

@test "--format text plans over packed files: the reference plans, byte for byte (3)" {
	need_packed
	check text
}

@test "--format text plans over files of one-byte samples: the reference plans, byte for byte (3)" {
	need_tiny
	check tiny-text
}

@test "every reference plan is a different plan" {
	[ "$(references | awk '{ print $2 }' | sort | uniq -d | wc -l)" -eq 0 ]
}
