package dev.infertop.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class X86DecoderTest {
    @TempDir
    Path dir;

    /** Intrinsics that make gcc 12 emit VEX, EVEX (maps 1, 2, 3, 5, 6), XOP (maps 8, 9, a), FMA4 and AMX code. */
    static final String VECTOR_SOURCE = """
            #include <immintrin.h>
            #include <x86intrin.h>
            #include <stddef.h>
            float dot_avx2(const float *a, const float *b, size_t n) {
                __m256 acc = _mm256_setzero_ps();
                for (size_t i = 0; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
                __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
                s = _mm_hadd_ps(s, s); s = _mm_hadd_ps(s, s);
                return _mm_cvtss_f32(s) + (float)_mm256_movemask_ps(_mm256_cmp_ps(acc, acc, 3));
            }
            __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))
            int dot_avx512(const signed char *a, const unsigned char *b, size_t n) {
                __m512i acc = _mm512_setzero_si512();
                for (size_t i = 0; i + 64 <= n; i += 64) {
                    __m512i x = _mm512_loadu_si512(a + i), y = _mm512_loadu_si512(b + i + 0x1e8);
                    acc = _mm512_dpbusd_epi32(acc, y, x);
                    acc = _mm512_mask_add_epi32(acc, (__mmask16)(i * 0xe8), acc, _mm512_shuffle_epi32(x, 0xe8));
                }
                return _mm512_reduce_add_epi32(acc) + _mm512_cmp_epi32_mask(acc, acc, 4);
            }
            __attribute__((target("avx512fp16,avx512vl")))
            _Float16 half_sum(const _Float16 *a, size_t n) {
                __m512h acc = _mm512_setzero_ph();
                for (size_t i = 0; i + 32 <= n; i += 32) acc = _mm512_fmadd_ph(_mm512_loadu_ph(a + i), acc, _mm512_set1_ph((_Float16)1.5f));
                return _mm512_reduce_add_ph(acc) + (_Float16)_mm512_cvtxph_ps(_mm256_loadu_ph(a))[0];
            }
            __attribute__((target("xop,fma4,tbm")))
            void amd_only(float *out, const float *a, const int *x) {
                __m128 v = _mm_macc_ps(_mm_loadu_ps(a), _mm_loadu_ps(a + 4), _mm_loadu_ps(out));
                __m128i r = _mm_roti_epi32(_mm_loadu_si128((const __m128i *)x), 0xe8 & 31);
                r = _mm_perm_epi8(r, r, _mm_set1_epi8((char)0xe8));
                _mm_storeu_ps(out, _mm_add_ps(v, _mm_castsi128_ps(_mm_rot_epi32(r, r))));
                out[8] = (float)__bextri_u32(x[1], 0x0804);
            }
            __attribute__((target("amx-tile,amx-int8")))
            void amx(void *dst, const void *a, const void *b, const void *cfg) {
                _tile_loadconfig(cfg);
                _tile_loadd(1, a, 64); _tile_loadd(2, b, 64); _tile_zero(0);
                _tile_dpbssd(0, 1, 2);
                _tile_stored(0, dst, 64);
                _tile_release();
            }
            long scalar_mix(long *p, long x, short s) {
                p[0x1e8] = 0xe8e8e8e8e8e8LL; p[1] = (unsigned)x * 0xe8; *(short *)(p + 2) = s * 0x1e8;
                __asm__ volatile("" ::: "memory");
                return __builtin_popcountl(x) + __builtin_ctzl(x | 1) + (p[3] > x ? p[4] : p[5]) + _rdtsc();
            }
            """;

    @Test
    void measuresHandPickedEncodings() throws Exception {
        // hex, length: the e8 bytes inside operands are not calls
        String[][] cases = {
                {"e8 00 00 00 00", "5"},
                {"48 b8 e8 01 02 03 04 05 06 07", "10"},   // movabs $imm64, %rax
                {"49 bc e8 e8 e8 e8 e8 e8 e8 00", "10"},   // movabs with REX.B
                {"b8 e8 00 00 00", "5"},                    // mov $0xe8, %eax
                {"66 b8 e8 00", "4"},                       // mov $0xe8, %ax
                {"66 81 c1 e8 00", "5"},                    // add $0xe8, %cx
                {"81 c1 e8 00 00 00", "6"},
                {"83 c1 e8", "3"},
                {"f6 c1 e8", "3"},                          // test $0xe8, %cl (f6 /0 has imm8)
                {"f6 d1", "2"},                             // not %cl (f6 /2 has none)
                {"f7 c1 e8 00 00 00", "6"},                 // test $0xe8, %ecx
                {"66 f7 c1 e8 00", "5"},
                {"f7 d9", "2"},                             // neg %ecx
                {"48 8d 05 e8 ff ff ff", "7"},              // lea -0x18(%rip), %rax
                {"4c 8b 24 25 e8 00 00 00", "8"},           // SIB without base: disp32
                {"8b 44 24 e8", "4"},
                {"8b 84 24 e8 00 00 00", "7"},
                {"a1 e8 00 00 00 00 00 00 00", "9"},        // movabs 0xe8, %eax (moffs64)
                {"67 a1 e8 00 00 00", "6"},                 // addr32 moffs32
                {"c8 e8 00 01", "4"},                       // enter
                {"c2 e8 00", "3"},                          // ret $0xe8
                {"f3 0f 1e fa", "4"},                       // endbr64
                {"66 2e 0f 1f 84 00 00 00 00 00", "10"},    // cs nopw
                {"66 66 66 66 66 66 2e 0f 1f 84 00 00 00 00 00", "15"},
                {"0f 84 e8 00 00 00", "6"},                 // je rel32
                {"66 0f 3a 0f c1 e8", "6"},                 // palignr: 0f3a map has imm8
                {"f2 0f 38 f1 c1", "5"},                    // crc32
                {"66 0f 78 c1 04 08", "6"},                 // extrq: two imm8
                {"0f 78 c1", "3"},                          // vmread
                {"c5 f8 77", "3"},                          // vzeroupper: no ModRM
                {"c5 fc 28 05 e8 00 00 00", "8"},           // vmovaps 0xe8(%rip), %ymm0
                {"c4 e2 7d 18 05 e8 00 00 00", "9"},        // vbroadcastss (0f38 map)
                {"c4 e3 79 68 c1 e8", "6"},                 // FMA4 vfmaddps: is4 byte
                {"c4 e2 7b 4b 14 02", "6"},                 // tileloadd
                {"62 f1 7d 48 70 4c 07 ff e8", "9"},        // vpshufd $0xe8, disp8*N
                {"62 f6 75 48 98 00", "6"},                 // vfmadd132ph (EVEX map 6)
                {"62 f5 74 08 58 c8", "6"},                 // vaddph (EVEX map 5)
                {"8f e9 78 92 c0", "5"},                    // vprotd (XOP map 9)
                {"8f e8 78 c2 02 08", "6"},                 // vprotd $8 (XOP map 8)
                {"8f ea 78 10 42 04 04 08 00 00", "10"},    // bextr $imm32 (XOP map a)
                {"8f c0", "2"},                             // pop %rax, not XOP
                {"9b d9 7c 24 06", "5"},                    // fwait + fnstcw, one instruction for objdump
                {"9b 90", "1"},                             // fwait alone
        };
        for (String[] c : cases) {
            byte[] code = HexFormat.ofDelimiter(" ").parseHex(c[0]);
            X86Decoder.Instruction instruction = X86Decoder.decode(code, 0, code.length);
            assertEquals(Integer.parseInt(c[1]), instruction.length(), c[0]);
            assertEquals(c[0].startsWith("e8"), instruction.isCallRel32(), c[0]);
        }
        byte[] walked = HexFormat.ofDelimiter(" ").parseHex("48 b8 e8 01 02 03 04 05 06 07 e8 00 00 00 00 c3");
        List<X86Decoder.Instruction> instructions = X86Decoder.decodeAll(walked, 0, walked.length);
        assertEquals(List.of(0, 10, 15), instructions.stream().map(X86Decoder.Instruction::offset).toList());
        assertEquals(List.of(false, true, false), instructions.stream().map(X86Decoder.Instruction::isCallRel32).toList());
    }

    @Test
    void refusesWhatItCannotMeasure() {
        String[][] cases = {
                {"06", "opcode invalid in 64-bit mode"},
                {"d4 0a", "opcode invalid in 64-bit mode"},
                {"48 66 90", "legacy prefix after REX"},
                {"e8 00 00", "cut off"},
                {"c5", "cut off"},
                {"66 66 66 66 66 66 66 66 66 66 66 66 66 66 66 90", "longer than 15 bytes"},
                {"62 f1 79 08 58 c0", "EVEX with P1 bit 2 clear"},
                {"c4 e4 79 00 c0", "VEX map 4"},
                {"66 c5 f8 77", "VEX/EVEX/XOP after a 66/f2/f3/REX prefix"},
        };
        for (String[] c : cases) {
            byte[] code = HexFormat.ofDelimiter(" ").parseHex(c[0]);
            TargetException e = assertThrows(TargetException.class, () -> X86Decoder.decode(code, 0, code.length), c[0]);
            assertTrue(e.getMessage().startsWith("cannot decode the x86-64 instruction at offset 0 ("), e.getMessage());
            assertTrue(e.getMessage().endsWith(": " + c[1]), e.getMessage());
        }
        // a walk that would run past the end fails too, instead of stopping early
        byte[] code = HexFormat.ofDelimiter(" ").parseHex("90 e8 00 00 00 00");
        assertThrows(TargetException.class, () -> X86Decoder.decodeAll(code, 0, 4));
    }

    @Test
    void boundariesEqualObjdumpOnVectorCode() throws Exception {
        Path source = Files.writeString(dir.resolve("vec.c"), VECTOR_SOURCE);
        Path library = dir.resolve("libvec.so");
        TestTools.run("gcc", "-O3", "-fPIC", "-shared", "-mavx2", "-mfma", "-o", library.toString(), source.toString());
        List<String> checked = assertBoundariesEqualObjdump(library, 6);
        assertTrue(checked.containsAll(List.of("dot_avx2", "dot_avx512", "half_sum", "amd_only", "amx", "scalar_mix")),
                checked.toString());
        try (ElfFile elf = ElfFile.open(library)) {
            Set<String> seen = new TreeSet<>();
            for (String name : List.of("dot_avx512", "half_sum", "amd_only", "amx")) {
                for (X86Decoder.Instruction i : CallSiteScanner.decodeX86(elf, elf.function(name).orElseThrow())) {
                    seen.add(i.encoding() + " map " + i.map());
                }
            }
            assertTrue(seen.containsAll(List.of("EVEX map 1", "EVEX map 2", "EVEX map 3", "EVEX map 5", "EVEX map 6",
                    "VEX map 1", "VEX map 2", "VEX map 3", "XOP map 8", "XOP map 9", "XOP map 10")), seen.toString());
        }
    }

    /**
     * Decodes every function in .text of {@code library} and compares the instruction boundaries with objdump's;
     * returns the names checked.
     */
    static List<String> assertBoundariesEqualObjdump(Path library, int atLeast) throws Exception {
        long[] objdump = TestTools.objdumpInstructionStarts(library);
        List<String> checked = new ArrayList<>();
        try (ElfFile elf = ElfFile.open(library)) {
            ElfSection text = elf.section(".text").orElseThrow();
            for (ElfSymbol function : elf.functions()) {
                if (function.sizeBytes() == 0 || function.vaddr() < text.vaddr()
                        || function.vaddr() + function.sizeBytes() > text.vaddr() + text.sizeBytes()) {
                    continue;
                }
                List<Long> mine = CallSiteScanner.decodeX86(elf, function).stream()
                        .map(i -> function.vaddr() + i.offset()).toList();
                int from = lowerBound(objdump, function.vaddr());
                int to = lowerBound(objdump, function.vaddr() + function.sizeBytes());
                List<Long> theirs = Arrays.stream(objdump, from, to).boxed().toList();
                if (!mine.equals(theirs)) {
                    Set<Long> onlyMine = new TreeSet<>(mine);
                    theirs.forEach(onlyMine::remove);
                    Set<Long> onlyTheirs = new TreeSet<>(theirs);
                    mine.forEach(onlyTheirs::remove);
                    fail(library + " " + function.name() + ": boundaries only the decoder has " + hex(onlyMine)
                            + ", only objdump has " + hex(onlyTheirs));
                }
                checked.add(function.name());
            }
        }
        assertFalse(checked.size() < atLeast, library + ": only " + checked.size() + " functions checked");
        return checked;
    }

    private static int lowerBound(long[] sorted, long key) {
        int i = Arrays.binarySearch(sorted, key);
        if (i < 0) {
            return -i - 1;
        }
        while (i > 0 && sorted[i - 1] == key) {
            i--;
        }
        return i;
    }

    private static String hex(Set<Long> addresses) {
        return addresses.stream().limit(8).map(Long::toHexString).toList().toString();
    }
}
