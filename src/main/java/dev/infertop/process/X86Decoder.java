package dev.infertop.process;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * An x86-64 instruction length decoder: enough of the encoding to walk compiler-generated code from a function
 * entry, one instruction at a time, so that a byte 0xe8 inside a displacement, an immediate or a vector
 * instruction is never mistaken for a call.
 *
 * <p>It knows legacy prefixes, REX, the one-byte map and the 0f, 0f38 and 0f3a maps, 3DNow!, the VEX (c4/c5),
 * EVEX (62, maps 1–3, 5 and 6) and XOP (8f, maps 8–a) prefixes, and ModRM, SIB, displacement and immediate
 * sizes. It does not check that an instruction exists beyond its length rules: it measures, it does not
 * disassemble. Bytes it cannot measure (an opcode invalid in 64-bit mode, a REX prefix followed by another
 * prefix, an instruction longer than 15 bytes or cut off) are an error, never a guess.
 */
public final class X86Decoder {
    /** How the opcode was reached: plain legacy escapes (0f, 0f 38, 0f 3a) or a VEX/EVEX/XOP prefix. */
    public enum Encoding {
        LEGACY, VEX, EVEX, XOP
    }

    /**
     * One decoded instruction: {@code map} 0 for the one-byte map, 1 for 0f, 2 for 0f38, 3 for 0f3a (the
     * VEX/EVEX mmmmm value for those encodings, 8–10 for XOP). {@code legacyPrefixes} are the prefix bytes
     * before the REX/opcode, in order.
     */
    public record Instruction(int offset, int length, Encoding encoding, int map, int opcode, byte[] legacyPrefixes,
                              int rex) {
        public boolean hasPrefix(int prefix) {
            for (byte b : legacyPrefixes) {
                if (Byte.toUnsignedInt(b) == prefix) {
                    return true;
                }
            }
            return false;
        }

        /** {@code call rel32}: e8 in the one-byte map. */
        public boolean isCallRel32() {
            return encoding == Encoding.LEGACY && map == 0 && opcode == 0xe8;
        }
    }

    private static final int MAX_LENGTH = 15;

    private static final int M = 1;          // ModRM (+ SIB + displacement) follows
    private static final int I8 = 2;         // imm8 / rel8
    private static final int I16 = 4;        // imm16 regardless of operand size
    private static final int IZ = 8;         // imm16 with a 66 prefix, else imm32
    private static final int I32 = 16;       // imm32 / rel32 regardless of operand size
    private static final int IV = 32;        // mov r, imm: imm64 with REX.W, imm16 with 66, else imm32
    private static final int MOFFS = 64;     // mov al/eax, moffs: 8 bytes, 4 with a 67 prefix
    private static final int INVALID = 128;
    private static final int TEST_IMM8 = 256;  // f6: imm8 when ModRM.reg is 0 or 1 (test)
    private static final int TEST_IMMZ = 512;  // f7: immz when ModRM.reg is 0 or 1 (test)
    private static final int SSE4A = 1024;    // 0f 78 with 66/f2 (extrq/insertq imm8, imm8); else vmread

    private static final int[] ONE_BYTE = oneByteMap();
    private static final int[] TWO_BYTE = twoByteMap();

    private X86Decoder() {}

    /** Decodes the instruction starting at {@code code[at]}; the code ends at {@code end}. */
    public static Instruction decode(byte[] code, int at, int end) throws TargetException {
        int limit = Math.min(end, at + MAX_LENGTH);
        int p = at;
        boolean operandSize16 = false, addressSize32 = false;
        int lastMandatory = 0;
        int rex = 0;
        while (true) {
            int b = byteAt(code, p, limit, at, end);
            if (isLegacyPrefix(b)) {
                if (rex != 0) {
                    throw undecodable(code, at, end, "legacy prefix after REX");
                }
                operandSize16 |= b == 0x66;
                addressSize32 |= b == 0x67;
                if (b == 0x66 || b == 0xf2 || b == 0xf3) {
                    lastMandatory = b;
                }
                p++;
            } else if ((b & 0xf0) == 0x40) {
                if (rex != 0) {
                    throw undecodable(code, at, end, "two REX prefixes");
                }
                rex = b;
                p++;
            } else {
                break;
            }
        }
        byte[] prefixes = java.util.Arrays.copyOfRange(code, at, rex != 0 ? p - 1 : p);
        boolean rexW = (rex & 8) != 0;
        int b = byteAt(code, p, limit, at, end);
        Encoding encoding = Encoding.LEGACY;
        int map;
        int opcode;
        int flags;
        if (b == 0xc4 || b == 0xc5 || b == 0x62 || (b == 0x8f && (byteAt(code, p + 1, limit, at, end) & 0x1f) >= 8)) {
            if (rex != 0 || operandSize16 || lastMandatory != 0) {
                throw undecodable(code, at, end, "VEX/EVEX/XOP after a 66/f2/f3/REX prefix");
            }
            int p0 = byteAt(code, p + 1, limit, at, end);
            switch (b) {
                case 0xc5 -> {
                    encoding = Encoding.VEX;
                    map = 1;
                    p += 2;
                }
                case 0xc4 -> {
                    encoding = Encoding.VEX;
                    map = p0 & 0x1f;
                    rexW = (byteAt(code, p + 2, limit, at, end) & 0x80) != 0;
                    p += 3;
                }
                case 0x62 -> {
                    encoding = Encoding.EVEX;
                    map = p0 & 0x07;
                    int p1 = byteAt(code, p + 2, limit, at, end);
                    byteAt(code, p + 3, limit, at, end);
                    if ((p1 & 0x04) == 0) {
                        throw undecodable(code, at, end, "EVEX with P1 bit 2 clear");
                    }
                    p += 4;
                }
                default -> {
                    encoding = Encoding.XOP;
                    map = p0 & 0x1f;
                    p += 3;
                }
            }
            opcode = byteAt(code, p, limit, at, end);
            p++;
            flags = vectorFlags(encoding, map, opcode);
            if (flags == INVALID) {
                throw undecodable(code, at, end, encoding + " map " + map);
            }
        } else if (b == 0x0f) {
            int second = byteAt(code, p + 1, limit, at, end);
            if (second == 0x38) {
                map = 2;
                opcode = byteAt(code, p + 2, limit, at, end);
                flags = M;
                p += 3;
            } else if (second == 0x3a) {
                map = 3;
                opcode = byteAt(code, p + 2, limit, at, end);
                flags = M | I8;
                p += 3;
            } else {
                map = 1;
                opcode = second;
                flags = TWO_BYTE[second];
                p += 2;
                if ((flags & SSE4A) != 0) {
                    flags = lastMandatory == 0x66 || lastMandatory == 0xf2
                            ? (opcode == 0x78 ? M | I16 : M) : M;
                }
            }
        } else {
            map = 0;
            opcode = b;
            flags = ONE_BYTE[b];
            p++;
            if (opcode == 0x9b && p == at + 1 && isWaitFormX87(code, p, limit)) {
                // objdump shows fwait + fnstcw/fnstsw/fnstenv/fnsave/fnclex/fninit as one instruction
                // (fstcw …); the same boundaries keep it usable as the oracle.
                Instruction x87 = decode(code, p, end);
                return new Instruction(at, x87.offset() + x87.length() - at, Encoding.LEGACY, 0, 0x9b, prefixes, 0);
            }
        }
        if ((flags & INVALID) != 0) {
            throw undecodable(code, at, end, "opcode invalid in 64-bit mode");
        }
        if ((flags & M) != 0) {
            int modrm = byteAt(code, p, limit, at, end);
            p++;
            int mod = modrm >>> 6;
            int reg = (modrm >>> 3) & 7;
            int rm = modrm & 7;
            if (mod != 3) {
                if (rm == 4) {
                    int sib = byteAt(code, p, limit, at, end);
                    p++;
                    if (mod == 0 && (sib & 7) == 5) {
                        p += 4;
                    }
                }
                if (mod == 0 && rm == 5) {
                    p += 4;  // RIP-relative disp32
                } else if (mod == 1) {
                    p += 1;
                } else if (mod == 2) {
                    p += 4;
                }
            }
            if ((flags & TEST_IMM8) != 0 && reg <= 1) {
                p += 1;
            }
            if ((flags & TEST_IMMZ) != 0 && reg <= 1) {
                p += operandSize16 ? 2 : 4;
            }
        }
        if ((flags & I8) != 0) {
            p += 1;
        }
        if ((flags & I16) != 0) {
            p += 2;
        }
        if ((flags & IZ) != 0) {
            p += operandSize16 ? 2 : 4;
        }
        if ((flags & I32) != 0) {
            p += 4;
        }
        if ((flags & IV) != 0) {
            p += rexW ? 8 : operandSize16 ? 2 : 4;
        }
        if ((flags & MOFFS) != 0) {
            p += addressSize32 ? 4 : 8;
        }
        if (p > limit) {
            throw undecodable(code, at, end, p - at > MAX_LENGTH ? "longer than 15 bytes" : "cut off");
        }
        return new Instruction(at, p - at, encoding, map, opcode, prefixes, rex);
    }

    /** Every instruction of {@code code[from, to)}, walked linearly from {@code from}; must end exactly at to. */
    public static List<Instruction> decodeAll(byte[] code, int from, int to) throws TargetException {
        List<Instruction> result = new ArrayList<>();
        int at = from;
        while (at < to) {
            Instruction instruction = decode(code, at, to);
            result.add(instruction);
            at += instruction.length();
        }
        return result;
    }

    private static boolean isWaitFormX87(byte[] code, int p, int limit) {
        if (p + 1 >= limit) {
            return false;
        }
        int op = Byte.toUnsignedInt(code[p]);
        int modrm = Byte.toUnsignedInt(code[p + 1]);
        boolean memoryStore67 = (modrm >>> 6) != 3 && ((modrm >>> 3) & 7) >= 6;
        return switch (op) {
            case 0xd9, 0xdd -> memoryStore67;
            case 0xdb -> modrm == 0xe2 || modrm == 0xe3;
            case 0xdf -> modrm == 0xe0;
            default -> false;
        };
    }

    private static boolean isLegacyPrefix(int b) {
        return switch (b) {
            case 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65 -> true;
            default -> false;
        };
    }

    private static int vectorFlags(Encoding encoding, int map, int opcode) {
        return switch (map) {
            case 1 -> {
                if (encoding == Encoding.XOP) {
                    yield INVALID;
                }
                if (opcode == 0x77 && encoding == Encoding.VEX) {
                    yield 0;  // vzeroupper / vzeroall: no ModRM
                }
                boolean imm8 = (opcode >= 0x70 && opcode <= 0x73) || opcode == 0xc2 || (opcode >= 0xc4 && opcode <= 0xc6);
                yield imm8 ? M | I8 : M;
            }
            case 2 -> encoding == Encoding.XOP ? INVALID : M;
            case 3 -> encoding == Encoding.XOP ? INVALID : M | I8;
            case 5, 6 -> encoding == Encoding.EVEX ? M : INVALID;  // AVX512-FP16
            case 8 -> encoding == Encoding.XOP ? M | I8 : INVALID;
            case 9 -> encoding == Encoding.XOP ? M : INVALID;
            case 10 -> encoding == Encoding.XOP ? M | I32 : INVALID;
            default -> INVALID;
        };
    }

    private static int[] oneByteMap() {
        int[] t = new int[256];
        for (int op = 0x00; op < 0x40; op++) {
            int low = op & 7;
            t[op] = low <= 3 ? M : low == 4 ? I8 : low == 5 ? IZ : INVALID;  // 6/7: push/pop seg, daa… invalid
        }
        // 0x0f, 0x26/0x2e/0x36/0x3e (prefixes) never reach the table; 0x40–0x4f are REX
        t[0x60] = t[0x61] = INVALID;
        t[0x63] = M;
        t[0x68] = IZ;
        t[0x69] = M | IZ;
        t[0x6a] = I8;
        t[0x6b] = M | I8;
        for (int op = 0x70; op <= 0x7f; op++) {
            t[op] = I8;
        }
        t[0x80] = M | I8;
        t[0x81] = M | IZ;
        t[0x82] = INVALID;
        t[0x83] = M | I8;
        for (int op = 0x84; op <= 0x8f; op++) {
            t[op] = M;
        }
        t[0x9a] = INVALID;
        for (int op = 0xa0; op <= 0xa3; op++) {
            t[op] = MOFFS;
        }
        t[0xa8] = I8;
        t[0xa9] = IZ;
        for (int op = 0xb0; op <= 0xb7; op++) {
            t[op] = I8;
        }
        for (int op = 0xb8; op <= 0xbf; op++) {
            t[op] = IV;
        }
        t[0xc0] = t[0xc1] = M | I8;
        t[0xc2] = I16;
        t[0xc6] = M | I8;
        t[0xc7] = M | IZ;
        t[0xc8] = I16 | I8;
        t[0xca] = I16;
        t[0xcd] = I8;
        t[0xce] = INVALID;
        for (int op = 0xd0; op <= 0xd3; op++) {
            t[op] = M;
        }
        t[0xd4] = t[0xd5] = t[0xd6] = INVALID;
        for (int op = 0xd8; op <= 0xdf; op++) {
            t[op] = M;
        }
        for (int op = 0xe0; op <= 0xe7; op++) {
            t[op] = I8;
        }
        t[0xe8] = t[0xe9] = I32;
        t[0xea] = INVALID;
        t[0xeb] = I8;
        t[0xf6] = M | TEST_IMM8;
        t[0xf7] = M | TEST_IMMZ;
        t[0xfe] = t[0xff] = M;
        return t;
    }

    private static int[] twoByteMap() {
        int[] t = new int[256];
        java.util.Arrays.fill(t, M);
        t[0x04] = t[0x0a] = t[0x0c] = INVALID;
        for (int op : new int[] {0x05, 0x06, 0x07, 0x08, 0x09, 0x0b, 0x0e}) {
            t[op] = 0;
        }
        t[0x0f] = M | I8;  // 3DNow!: the real opcode is the trailing byte
        for (int op = 0x24; op <= 0x27; op++) {
            t[op] = INVALID;
        }
        for (int op = 0x30; op <= 0x37; op++) {
            t[op] = 0;
        }
        t[0x36] = INVALID;
        for (int op = 0x39; op <= 0x3f; op++) {
            t[op] = INVALID;  // 0x3a is an escape, handled before the table
        }
        for (int op = 0x70; op <= 0x73; op++) {
            t[op] = M | I8;
        }
        t[0x77] = 0;
        t[0x78] = t[0x79] = SSE4A;
        t[0x7a] = t[0x7b] = INVALID;
        for (int op = 0x80; op <= 0x8f; op++) {
            t[op] = I32;
        }
        t[0xa0] = t[0xa1] = t[0xa2] = 0;
        t[0xa4] = t[0xac] = t[0xba] = M | I8;
        t[0xa6] = t[0xa7] = INVALID;
        t[0xa8] = t[0xa9] = t[0xaa] = 0;
        t[0xc2] = t[0xc4] = t[0xc5] = t[0xc6] = M | I8;
        for (int op = 0xc8; op <= 0xcf; op++) {
            t[op] = 0;
        }
        return t;
    }

    private static int byteAt(byte[] code, int p, int limit, int at, int end) throws TargetException {
        if (p >= limit) {
            throw undecodable(code, at, end, p - at >= MAX_LENGTH ? "longer than 15 bytes" : "cut off");
        }
        return Byte.toUnsignedInt(code[p]);
    }

    private static TargetException undecodable(byte[] code, int at, int end, String why) {
        int shown = Math.max(0, Math.min(Math.min(end, code.length), at + MAX_LENGTH) - at);
        return new TargetException("cannot decode the x86-64 instruction at offset " + at + " ("
                + HexFormat.ofDelimiter(" ").formatHex(code, at, at + shown) + "): " + why);
    }
}
