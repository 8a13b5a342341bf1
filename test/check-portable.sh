#!/usr/bin/env bash
# check-portable.sh: check that the built module runs on any x86-64 CPU.
#
# Disassembles segvec.so (or the module given as $1) and fails when a
# function other than the SIMD distance kernels (names ending in _avx2 or
# _avx512, and GCC's clones of them) contains an instruction beyond the
# x86-64 baseline (SSE2): AVX/AVX2/AVX-512 (VEX/EVEX mnemonics, ymm/zmm/k
# registers), FMA, BMI1/BMI2, LZCNT, POPCNT, MOVBE, F16C, SSE3..SSE4.2.
# Such an instruction outside the kernels means the build used -march
# flags, and the module would die with SIGILL on an older CPU: the kernels
# are the only code that may use wider instructions, behind the CPUID
# check of segvec.kernel.
#
# Also checks that the kernels are there (the dispatch has something to
# choose).  Exits non-zero and lists the offending functions otherwise.
# Not x86-64: says so and exits 0.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
so=${1:-$here/segvec.so}

case "$(uname -m)" in
	x86_64) ;;
	*) echo "check-portable.sh: not x86-64, nothing to check"; exit 0 ;;
esac

if [ ! -e "$so" ]; then
	echo "check-portable.sh: $so not found (run make first)" >&2
	exit 1
fi

objdump -d --no-show-raw-insn "$so" | awk '
	# function headers look like "000000000000f390 <cosine_parts_avx2>:"
	/^[0-9a-f]+ <.*>:$/ {
		fn = $2; gsub(/[<>:]/, "", fn);
		kernel = (fn ~ /_avx(2|512)($|\.)/);
		# libgcc (statically linked for __builtin_cpu_supports) reads
		# CPUID and XCR0 itself
		libgcc = (fn ~ /^(__cpu_indicator_init|__cpu_model|get_available_features|__get_cpuid|get_amd_cpu|get_intel_cpu|get_zhaoxin_cpu)/);
		if (kernel) kernels++;
		next;
	}
	/^ +[0-9a-f]+:\t/ {
		if (kernel || libgcc || fn == "") next;
		split($0, parts, "\t");
		insn = parts[2];
		mnem = insn; sub(/[ \t].*/, "", mnem);
		bad = 0;
		if (insn ~ /%[yz]mm[0-9]/ || insn ~ /%k[0-7]([^0-9]|$)/) bad = 1;
		else if (mnem ~ /^v/ && mnem !~ /^(verr|verw)$/) bad = 1;
		else if (mnem ~ /^(andn|bextr|blsi|blsmsk|blsr|bzhi|tzcnt|lzcnt|popcnt|shlx|shrx|sarx|rorx|pdep|pext|mulx|movbe|crc32[bwlq]?|adcx|adox)[lqw]?$/) bad = 1;
		else if (mnem ~ /^(pshufb|palignr|pabs|psign|phadd|phsub|pmaddubsw|pmulhrsw|ptest|pblend|blendv|blendp|pmulld|pmuldq|pmin[su][bdw]|pmax[su][bdw]|pextr[bdq]|pinsr[bdq]|insertps|extractps|round[sp][sd]|dpp[sd]|mpsadbw|phminposuw|pcmpeqq|pcmpgtq|packusdw|pmov[sz]x|movntdqa|pcmp[ei]str|haddp|hsubp|addsubp|lddqu|movddup|movs[hl]dup)/) bad = 1;
		if (bad && !(fn in seen)) { seen[fn] = insn; nbad++; }
	}
	END {
		for (f in seen) printf "  %s: %s\n", f, seen[f];
		if (kernels == 0) { print "check-portable.sh: no _avx2/_avx512 kernels found"; exit 2 }
		if (nbad > 0) { printf "check-portable.sh: %d function(s) outside the kernels use instructions beyond x86-64 (SSE2)\n", nbad; exit 1 }
		printf "check-portable.sh: ok, %d kernel function(s), nothing else beyond x86-64 (SSE2)\n", kernels;
	}'
