package dev.infertop.session;

import dev.infertop.ffi.Errno;
import dev.infertop.ffi.LibBpf;
import dev.infertop.ffi.LibC;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;

/** Checks that fail early with one actionable line, before anything is loaded or attached. */
public final class Preflight {
    private Preflight() {}

    private static final int CAP_SYS_ADMIN = 21;
    private static final int CAP_PERFMON = 38;
    private static final int CAP_BPF = 39;

    /** Root, or CAP_BPF + CAP_PERFMON (CAP_SYS_ADMIN implies both on older kernels). */
    public static void requirePrivileges() {
        if (LibC.geteuid() == 0) {
            return;
        }
        long effective = effectiveCapabilities();
        boolean bpf = has(effective, CAP_BPF) || has(effective, CAP_SYS_ADMIN);
        boolean perfmon = has(effective, CAP_PERFMON) || has(effective, CAP_SYS_ADMIN);
        if (!(bpf && perfmon)) {
            throw new UserError("not permitted to load BPF probes: run infertop as root (sudo infertop ...), "
                    + "or give it CAP_BPF and CAP_PERFMON");
        }
    }

    private static boolean has(long capabilities, int capability) {
        return (capabilities & (1L << capability)) != 0;
    }

    private static long effectiveCapabilities() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    return Long.parseUnsignedLong(line.substring(7).strip(), 16);
                }
            }
        } catch (IOException | NumberFormatException e) {
            // unreadable: treat as no capabilities
        }
        return 0;
    }

    /**
     * infertop's probes are CO-RE: they need the kernel's BTF (or a BTF file for the running kernel).
     *
     * @return the BTF file to pass to libbpf, or null to use the kernel's own
     */
    static Path requireBtf(Path userBtf) {
        if (userBtf != null) {
            parseBtf(userBtf, "--btf " + userBtf);
            return userBtf;
        }
        String override = System.getenv("INFERTOP_KERNEL_BTF");
        Path kernelBtf = Path.of(override != null ? override : "/sys/kernel/btf/vmlinux");
        if (!Files.isReadable(kernelBtf)) {
            throw new UserError("the kernel has no BTF (" + kernelBtf + " is missing): use a kernel built with "
                    + "CONFIG_DEBUG_INFO_BTF=y, or pass --btf FILE with the BTF of this kernel");
        }
        if (override != null) {
            parseBtf(kernelBtf, "kernel BTF " + kernelBtf);
            return kernelBtf;
        }
        // The kernel's own BTF: libbpf parses its megabytes when the object loads; parsing it here as well was a
        // noticeable part of every start. Its header is checked, so a kernel without usable BTF still ends
        // in this line, not in a libbpf message.
        requireBtfMagic(kernelBtf);
        return null;
    }

    /** BTF's magic number, 0xeB9F, as the kernel writes it (little-endian here, as on every arm64 and x86_64). */
    private static final int BTF_MAGIC = 0xeb9f;

    static void requireBtfMagic(Path kernelBtf) {
        byte[] header = new byte[2];
        try (java.io.InputStream in = Files.newInputStream(kernelBtf)) {
            if (in.readNBytes(header, 0, 2) == 2
                    && ((header[0] & 0xff) | (header[1] & 0xff) << 8) == BTF_MAGIC) {
                return;
            }
        } catch (IOException e) {
            throw new UserError("the kernel's BTF " + kernelBtf + " is unreadable (" + e.getMessage()
                    + "): pass --btf FILE with the BTF of this kernel");
        }
        throw new UserError("the kernel's BTF " + kernelBtf + " is not BTF: pass --btf FILE with the BTF of "
                + "this kernel");
    }

    private static void parseBtf(Path file, String what) {
        if (!Files.isRegularFile(file)) {
            throw new UserError(what + ": no such file");
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment errno = Errno.allocate(arena);
            MemorySegment btf = (MemorySegment) LibBpf.btf__parse$handle().invokeExact(errno,
                    arena.allocateFrom(file.toString()), MemorySegment.NULL);
            if (btf.equals(MemorySegment.NULL)) {
                throw new UserError(what + " is not usable BTF: " + LibBpf.strerror(Errno.read(errno)));
            }
            LibBpf.btf__free$handle().invokeExact(btf);
        } catch (UserError e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }
}
