package dev.infertop.process;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A stripped x86-64 shared object made to cost a scanner as much as its bounds allow: an exported
 * {@code ggml_graph_compute} of {@code calls} direct calls, each to a function of its own that .eh_frame_hdr
 * indexes (what {@link StrippedFunctions} walks looking for the node loop), {@code fillers} further exported
 * functions at other addresses (every callee lookup misses them all), and {@code loadSegments} PT_LOAD headers
 * of which only the last maps the file (every address lookup passes the others first). No .symtab.
 */
public final class CraftedStrippedElf {
    private CraftedStrippedElf() {}

    private static final int EHDR = 64, PHDR = 56, SHDR = 64, SYM = 24, FDE = 16, CALLEE = 16;

    public static Path write(Path file, int loadSegments, int calls, int fillers) throws IOException {
        long phoff = EHDR;
        long text = align(phoff + (long) PHDR * loadSegments, 16);
        long callerSize = 5L * calls + 1;
        long callees = align(text + callerSize, 16);
        long textEnd = callees + (long) CALLEE * calls;
        byte[] dynstr = "\0ggml_graph_compute\0filler\0".getBytes(StandardCharsets.US_ASCII);
        long dynsym = align(textEnd, 8);
        int symbols = 2 + fillers;
        long dynstrAt = dynsym + (long) SYM * symbols;
        long hdr = align(dynstrAt + dynstr.length, 4);
        long hdrSize = 12 + 8L * calls;
        long frames = align(hdr + hdrSize, 8);
        long framesSize = (long) FDE * calls + 4; // a zero terminator
        byte[] shstrtab = "\0.text\0.dynsym\0.dynstr\0.eh_frame_hdr\0.eh_frame\0.shstrtab\0"
                .getBytes(StandardCharsets.US_ASCII);
        long shstrAt = frames + framesSize;
        long shoff = align(shstrAt + shstrtab.length, 8);
        int sections = 7;
        long size = shoff + (long) SHDR * sections;
        if (size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("too large: " + size);
        }
        ByteBuffer b = ByteBuffer.allocate((int) size).order(ByteOrder.LITTLE_ENDIAN);

        b.put(0, new byte[] {0x7f, 'E', 'L', 'F', 2, 1, 1});
        b.putShort(16, (short) 3); // ET_DYN
        b.putShort(18, (short) 62); // EM_X86_64
        b.putInt(20, 1);
        b.putLong(0x20, phoff);
        b.putLong(0x28, shoff);
        b.putShort(0x34, (short) EHDR);
        b.putShort(0x36, (short) PHDR);
        b.putShort(0x38, (short) loadSegments);
        b.putShort(0x3a, (short) SHDR);
        b.putShort(0x3c, (short) sections);
        b.putShort(0x3e, (short) 6);

        for (int i = 0; i < loadSegments; i++) {
            int at = (int) (phoff + (long) PHDR * i);
            boolean real = i == loadSegments - 1;
            b.putInt(at, 1); // PT_LOAD
            b.putInt(at + 4, 5); // R X
            b.putLong(at + 8, 0);
            long vaddr = real ? 0 : 0x4000_0000L + 0x1000L * i;
            b.putLong(at + 0x10, vaddr);
            b.putLong(at + 0x18, vaddr);
            b.putLong(at + 0x20, real ? size : 0x10);
            b.putLong(at + 0x28, real ? size : 0x10);
            b.putLong(at + 0x30, 0x1000);
        }

        for (int i = 0; i < calls; i++) {
            int at = (int) (text + 5L * i);
            long target = callees + (long) CALLEE * i;
            b.put(at, (byte) 0xe8);
            b.putInt(at + 1, (int) (target - (at + 5)));
        }
        b.put((int) (text + 5L * calls), (byte) 0xc3);
        for (int i = 0; i < calls; i++) {
            int at = (int) (callees + (long) CALLEE * i);
            b.put(at, (byte) 0xc3);
            for (int k = 1; k < CALLEE; k++) {
                b.put(at + k, (byte) 0x90);
            }
        }

        symbol(b, dynsym, 1, 1, text, callerSize);
        for (int i = 0; i < fillers; i++) {
            symbol(b, dynsym, 2 + i, 20, 0x7000_0000L + 16L * i, 16);
        }
        b.put((int) dynstrAt, dynstr);

        b.put((int) hdr, (byte) 1);
        b.put((int) hdr + 1, (byte) 0x1b); // eh_frame_ptr: pcrel sdata4
        b.put((int) hdr + 2, (byte) 0x03); // fde_count: udata4
        b.put((int) hdr + 3, (byte) 0x3b); // table: datarel sdata4
        b.putInt((int) hdr + 4, (int) (frames - (hdr + 4)));
        b.putInt((int) hdr + 8, calls);
        for (int i = 0; i < calls; i++) {
            long start = callees + (long) CALLEE * i;
            long fde = frames + (long) FDE * i;
            b.putInt((int) (hdr + 12 + 8L * i), (int) (start - hdr));
            b.putInt((int) (hdr + 16 + 8L * i), (int) (fde - hdr));
            b.putInt((int) fde, 12);
            b.putInt((int) fde + 4, 1);
            b.putInt((int) fde + 8, (int) (start - (fde + 8)));
            b.putInt((int) fde + 12, CALLEE);
        }
        b.put((int) shstrAt, shstrtab);

        section(b, shoff, 1, 1, 1, 6, text, textEnd - text, 0, 0, 16); // .text PROGBITS AX
        section(b, shoff, 2, 7, 11, 2, dynsym, (long) SYM * symbols, 3, 1, SYM); // .dynsym
        section(b, shoff, 3, 15, 3, 2, dynstrAt, dynstr.length, 0, 0, 0); // .dynstr
        section(b, shoff, 4, 23, 1, 2, hdr, hdrSize, 0, 0, 0); // .eh_frame_hdr
        section(b, shoff, 5, 37, 1, 2, frames, framesSize, 0, 0, 0); // .eh_frame
        section(b, shoff, 6, 47, 3, 0, shstrAt, shstrtab.length, 0, 0, 0); // .shstrtab
        Files.write(file, b.array());
        return file;
    }

    private static void symbol(ByteBuffer b, long table, int index, int name, long value, long size) {
        int at = (int) (table + (long) SYM * index);
        b.putInt(at, name);
        b.put(at + 4, (byte) 0x12); // GLOBAL FUNC
        b.putShort(at + 6, (short) 1); // .text
        b.putLong(at + 8, value);
        b.putLong(at + 16, size);
    }

    private static void section(ByteBuffer b, long shoff, int index, int name, int type, long flags, long offset,
                                long size, int link, int info, long entsize) {
        int at = (int) (shoff + (long) SHDR * index);
        b.putInt(at, name);
        b.putInt(at + 4, type);
        b.putLong(at + 8, flags);
        b.putLong(at + 0x10, offset); // vaddr = offset: the one real segment maps the file at 0
        b.putLong(at + 0x18, offset);
        b.putLong(at + 0x20, size);
        b.putInt(at + 0x28, link);
        b.putInt(at + 0x2c, info);
        b.putLong(at + 0x30, 1);
        b.putLong(at + 0x38, entsize);
    }

    private static long align(long value, long to) {
        return (value + to - 1) / to * to;
    }
}
