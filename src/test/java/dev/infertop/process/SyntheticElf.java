package dev.infertop.process;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A hand-assembled ELF64 shared object for machines and PLT styles no local toolchain links (aarch64, x86 MPX
 * bnd stubs): one RWX PT_LOAD mapping the file at address 0, a PLT, .text, .got.plt, .rela.plt naming
 * imported functions, and a .symtab of the functions in .text.
 */
final class SyntheticElf {
    static final long PLT = 0x1000, TEXT = 0x2000, GOT = 0x3000;
    private static final long RELA = 0x4000, DYNSYM = 0x4800, DYNSTR = 0x5000, SYMTAB = 0x5400, STRTAB = 0x5800,
            SHSTRTAB = 0x5c00, SECTION_HEADERS = 0x6000, FILE_SIZE = 0x7000;

    /** An imported function whose GOT slot at {@code slotVaddr} gets a relocation of {@code type}. */
    record Import(String name, long slotVaddr, int type) {}

    /** A function defined in .text. */
    record Function(String name, long vaddr, long sizeBytes, boolean global) {}

    private SyntheticElf() {}

    static Path write(Path file, Machine machine, String pltName, int pltEntrySize, byte[] plt, byte[] text,
                      List<Import> imports, List<Function> functions) throws IOException {
        ByteBuffer out = ByteBuffer.allocate((int) FILE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        if (plt.length > TEXT - PLT || text.length > GOT - TEXT) {
            throw new IllegalArgumentException("PLT or text too large for the fixed layout");
        }
        out.put((int) PLT, plt);
        out.put((int) TEXT, text);

        Strings dynstr = new Strings();
        for (int i = 0; i < imports.size(); i++) {
            int at = (int) (DYNSYM + 24 * (i + 1));
            out.putInt(at, dynstr.add(imports.get(i).name()));
            out.put(at + 4, (byte) 0x12);  // GLOBAL FUNC, undefined
            int rela = (int) (RELA + 24 * i);
            out.putLong(rela, imports.get(i).slotVaddr());
            out.putLong(rela + 8, ((long) (i + 1) << 32) | imports.get(i).type());
        }
        out.put((int) DYNSTR, dynstr.bytes());

        Strings strtab = new Strings();
        for (int i = 0; i < functions.size(); i++) {
            Function f = functions.get(i);
            int at = (int) (SYMTAB + 24 * (i + 1));
            out.putInt(at, strtab.add(f.name()));
            out.put(at + 4, (byte) ((f.global() ? 0x10 : 0) | 2));
            out.putShort(at + 6, (short) 2);  // .text
            out.putLong(at + 8, f.vaddr());
            out.putLong(at + 16, f.sizeBytes());
        }
        out.put((int) STRTAB, strtab.bytes());

        Strings shstrtab = new Strings();
        long[][] headers = {
                // name, type, flags, addr/offset, size, link, entsize
                {0, 0, 0, 0, 0, 0, 0},
                {shstrtab.add(pltName), 1, 6, PLT, plt.length, 0, pltEntrySize},
                {shstrtab.add(".text"), 1, 6, TEXT, text.length, 0, 0},
                {shstrtab.add(".got.plt"), 1, 3, GOT, 0x400, 0, 8},
                {shstrtab.add(".rela.plt"), 4, 0x42, RELA, 24L * imports.size(), 5, 24},
                {shstrtab.add(".dynsym"), 11, 2, DYNSYM, 24L * (imports.size() + 1), 6, 24},
                {shstrtab.add(".dynstr"), 3, 2, DYNSTR, dynstr.size(), 0, 0},
                {shstrtab.add(".symtab"), 2, 0, SYMTAB, 24L * (functions.size() + 1), 8, 24},
                {shstrtab.add(".strtab"), 3, 0, STRTAB, strtab.size(), 0, 0},
                {shstrtab.add(".shstrtab"), 3, 0, SHSTRTAB, 0, 0, 0},
        };
        headers[9][4] = shstrtab.size();
        out.put((int) SHSTRTAB, shstrtab.bytes());
        for (int i = 0; i < headers.length; i++) {
            int at = (int) (SECTION_HEADERS + 64 * i);
            long[] h = headers[i];
            out.putInt(at, (int) h[0]);
            out.putInt(at + 4, (int) h[1]);
            out.putLong(at + 8, h[2]);
            out.putLong(at + 0x10, (h[2] & 2) != 0 ? h[3] : 0);
            out.putLong(at + 0x18, h[3]);
            out.putLong(at + 0x20, h[4]);
            out.putInt(at + 0x28, (int) h[5]);
            out.putInt(at + 0x2c, i == 5 || i == 7 ? 1 : 0);
            out.putLong(at + 0x30, 8);
            out.putLong(at + 0x38, h[6]);
        }

        out.putInt(0, 0x464c457f);
        out.put(4, (byte) 2).put(5, (byte) 1).put(6, (byte) 1);
        out.putShort(16, (short) 3);  // ET_DYN
        out.putShort(18, (short) machine.elfCode());
        out.putInt(20, 1);
        out.putLong(0x20, 64);
        out.putLong(0x28, SECTION_HEADERS);
        out.putShort(0x34, (short) 64).putShort(0x36, (short) 56).putShort(0x38, (short) 1);
        out.putShort(0x3a, (short) 64).putShort(0x3c, (short) headers.length).putShort(0x3e, (short) 9);
        out.putInt(64, 1);       // PT_LOAD
        out.putInt(68, 7);       // RWX
        out.putLong(64 + 0x20, FILE_SIZE);
        out.putLong(64 + 0x28, FILE_SIZE);
        out.putLong(64 + 0x30, 0x1000);
        return Files.write(file, out.array());
    }

    /** aarch64 encodings used to assemble test code. */
    static final class A64 {
        static final int NOP = 0xd503201f, BTI_C = 0xd503245f, BR_X17 = 0xd61f0220, RET = 0xd65f03c0,
                STP_FP_LR = 0xa9bf7bfd, LDP_FP_LR = 0xa8c17bfd, MOV_FP_SP = 0x910003fd, STP_X16_LR = 0xa9bf7bf0;

        static int adrpX16(long pc, long target) {
            long pages = (target >>> 12) - (pc >>> 12);
            return 0x90000010 | (int) (pages & 3) << 29 | (int) ((pages >> 2) & 0x7ffff) << 5;
        }

        static int ldrX17X16(long target) {
            return 0xf9400211 | (int) ((target & 0xfff) / 8) << 10;
        }

        static int addX16X16(long target) {
            return 0x91000210 | (int) (target & 0xfff) << 10;
        }

        static int bl(long pc, long target) {
            return 0x94000000 | (int) ((target - pc) / 4) & 0x3ffffff;
        }

        static byte[] bytes(List<Integer> words) {
            ByteBuffer b = ByteBuffer.allocate(4 * words.size()).order(ByteOrder.LITTLE_ENDIAN);
            words.forEach(b::putInt);
            return b.array();
        }
    }

    private static final class Strings {
        private final List<byte[]> parts = new ArrayList<>(List.of(new byte[1]));
        private int size = 1;

        int add(String s) {
            int at = size;
            byte[] b = (s + "\0").getBytes(StandardCharsets.UTF_8);
            parts.add(b);
            size += b.length;
            return at;
        }

        int size() {
            return size;
        }

        byte[] bytes() {
            ByteBuffer b = ByteBuffer.allocate(size);
            parts.forEach(b::put);
            return b.array();
        }
    }
}
